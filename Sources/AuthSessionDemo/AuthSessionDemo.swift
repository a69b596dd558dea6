import Foundation

/// `auth-session-demo`: runs lifecycle scenarios against the test kit and prints a timeline
/// for each; exits with status 1 if any scenario ends in the wrong state.
@main
enum AuthSessionDemo {

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        switch arguments.first {
        case nil:
            await run(Scenario.all)
        case "--list":
            for scenario in Scenario.all {
                print("\(scenario.name.padding(toLength: 34, withPad: " ", startingAt: 0)) \(scenario.summary)")
            }
        case "--scenario" where arguments.count == 2:
            guard let scenario = Scenario.all.first(where: { $0.name == arguments[1] }) else {
                fail("no scenario named '\(arguments[1])'; `--list` names them")
            }
            await run([scenario])
        case "--help", "-h":
            print(usage)
        default:
            fail("unexpected arguments: \(arguments.joined(separator: " "))\n\n\(usage)")
        }
    }

    static let usage = """
        usage: auth-session-demo                  run every scenario
               auth-session-demo --list           name the scenarios
               auth-session-demo --scenario NAME  run one scenario
        """

    private static func run(_ scenarios: [Scenario]) async {
        var failures: [String] = []
        for scenario in scenarios {
            failures += await scenario.perform()
        }
        if failures.isEmpty {
            print("All \(scenarios.count) scenario(s) ended in their expected state.")
        } else {
            print("\(failures.count) expectation(s) failed:")
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
