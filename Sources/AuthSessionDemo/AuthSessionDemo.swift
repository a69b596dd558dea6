import AuthSessionMocks
import Foundation

/// `auth-session-demo`: runs lifecycle scenarios and prints a timeline for each; exits with
/// status 1 if any scenario ends in the wrong state.
///
/// The engine's scenarios drive a handle with the test kit's provider. The session manager's
/// scenarios drive a `ManagedSessionProvider` on a `FileSessionStore` in a fresh temporary folder,
/// against an in-process authorization server, or against a real one with `--oauth-server`. The
/// Sign in with Apple scenarios drive one on a `SignInWithAppleService`, a simulated Apple and an
/// in-process backend; like the engine's, they need no server and do not run with
/// `--oauth-server`.
@main
enum AuthSessionDemo {

    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var backend = BackendChoice.inProcess
        var realServer: String?
        if let index = arguments.firstIndex(of: "--oauth-server") {
            guard index + 1 < arguments.count, !arguments[index + 1].isEmpty else {
                fail("--oauth-server needs the path of an endpoints JSON\n\n\(usage)")
            }
            let path = arguments[index + 1]
            do {
                let server = try OAuthTestServer.load(from: path)
                backend = .real(server)
                realServer = server.issuer
            } catch {
                fail("cannot read the endpoints JSON at \(path): \(error)")
            }
            arguments.removeSubrange(index...(index + 1))
        }
        switch arguments.first {
        case nil:
            if realServer == nil {
                await run(Scenario.all, ManagerScenario.all, AppleScenario.all, on: backend)
            } else {
                await run([], ManagerScenario.all, [], on: backend)
            }
        case "--list":
            for scenario in Scenario.all {
                print("\(scenario.name.padding(toLength: 34, withPad: " ", startingAt: 0)) \(scenario.summary)")
            }
            for scenario in ManagerScenario.all {
                print("\(scenario.name.padding(toLength: 34, withPad: " ", startingAt: 0)) \(scenario.summary)")
            }
            for scenario in AppleScenario.all {
                print("\(scenario.name.padding(toLength: 34, withPad: " ", startingAt: 0)) \(scenario.summary)")
            }
        case "--scenario" where arguments.count == 2:
            let name = arguments[1]
            let inProcessOnly =
                Scenario.all.contains { $0.name == name } || AppleScenario.all.contains { $0.name == name }
            if let scenario = Scenario.all.first(where: { $0.name == name }), realServer == nil {
                await run([scenario], [], [], on: backend)
            } else if let scenario = ManagerScenario.all.first(where: { $0.name == name }) {
                await run([], [scenario], [], on: backend)
            } else if let scenario = AppleScenario.all.first(where: { $0.name == name }), realServer == nil {
                await run([], [], [scenario], on: backend)
            } else if inProcessOnly {
                fail("'\(name)' needs no authorization server and runs in process only: drop --oauth-server")
            } else {
                fail("no scenario named '\(name)'; `--list` names them")
            }
        case "--help", "-h":
            print(usage)
        default:
            fail("unexpected arguments: \(arguments.joined(separator: " "))\n\n\(usage)")
        }
    }

    /// Prints a part's heading.
    private static func part(_ number: Int, _ text: String) {
        print("════ Part \(number) ════ \(text)\n")
    }

    static let usage = """
        usage: auth-session-demo [--oauth-server ENDPOINTS_JSON] [--list | --scenario NAME]

               auth-session-demo                  run every scenario (session manager: in-process server)
                                                  (Sign in with Apple: simulated Apple, in-process backend)
               auth-session-demo --list           name the scenarios
               auth-session-demo --scenario NAME  run one scenario
               --oauth-server ENDPOINTS_JSON      run the session-manager scenarios against the real server
                                                  that `scripts/oauth-test-server` describes there
        """

    private static func run(
        _ scenarios: [Scenario],
        _ managerScenarios: [ManagerScenario],
        _ appleScenarios: [AppleScenario],
        on backend: BackendChoice
    )
        async
    {
        var failures: [String] = []
        if !scenarios.isEmpty {
            part(
                1,
                """
                The engine: AuthSessionHandle over a provider you write (here the test kit's scripted \
                MockSessionProvider). The provider publishes the events; the handle decides. What the \
                session manager does with the same situations is part 2.
                """
            )
        }
        for scenario in scenarios {
            failures += await scenario.perform()
        }
        if !managerScenarios.isEmpty {
            part(
                2,
                """
                The managed session: ManagedSessionProvider on a FileSessionStore, with the handle over \
                it, against \(backend.partDescription). It refreshes before expiry, silently.
                """
            )
        }
        for scenario in managerScenarios {
            failures += await scenario.perform(on: backend)
        }
        if !appleScenarios.isEmpty {
            part(3, "Sign in with Apple through the managed session: a simulated Apple and an in-process backend.")
        }
        for scenario in appleScenarios {
            failures += await scenario.perform()
        }
        let count = scenarios.count + managerScenarios.count + appleScenarios.count
        var against = ""
        if case .real(let server) = backend {
            against = " against the real server at \(server.issuer)"
        }
        if failures.isEmpty {
            print("All \(count) scenario(s) ended in their expected state\(against).")
        } else {
            print("\(failures.count) expectation(s) failed\(against):")
            for failure in failures {
                print("  - \(failure)")
            }
            exit(1)
        }
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("auth-session-demo: \(message)\n".utf8))
        exit(2)
    }
}
