// A process for the session manager's cross-process tests against the real authorization server.
// Not a product: the integration tests start it, read what it prints, and kill it.
//
// Each command builds `ManagedSessionProvider(store: FileSessionStore(directory: <folder>),
// remote: OAuth2Service(...))` for the confidential password client of the server described by
// <endpoints.json> (what `scripts/oauth-test-server` writes), and an `AuthSessionHandle` on it,
// which starts the provider.
//
//   SessionManagerWorker sign-in <endpoints.json> <folder> [options]
//       signs the test user in (password grant); prints "result ok"
//   SessionManagerWorker refresh <endpoints.json> <folder> <count> [options]
//       prints "ready" once the launch is over (then, with --wait-for-go, waits for a line on
//       stdin), then for each i in 1...count prints "refreshing i", calls `refresh()`, and prints
//       "refreshed i"; at the end "result ok"
//
//   SessionManagerWorker serve <endpoints.json> <folder> [options]
//       a long-lived process sharing the store: prints "ready <status>" once launched, then
//       answers each line of stdin with one line (see `Serve`), and prints "event signed-out <t>"
//       and "event updated <t> <digest>" when its handle hears a sign-out or a session update
//       (t: wall-clock seconds since 1970; digest: the access token's fingerprint). Ends at "quit"
//       or at the end of stdin. Its biometric prompts succeed (a person who passes Face ID).
//
// Options: --wait-for-go; --clock-leeway <seconds> (the service's `clockLeeway`, 60 by default);
// --lease <seconds> (the manager's `refreshLeaseDuration`).
//
// The last line is the result: "result ok", "result signed-out <cause>" (exit 3: the session
// ended), or "result failed <cause>" (exit 1: the session stands, the call failed). A usage error
// exits 2.

import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation

/// Prints one line at once (stdout is a pipe: nothing may wait in a buffer when the process is
/// killed).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// How the process ends.
enum Outcome: Error {
    case usage(String)
    case signedOut(String)
    case failed(String)

    var status: Int32 {
        switch self {
        case .usage: 2
        case .signedOut: 3
        case .failed: 1
        }
    }

    var line: String {
        switch self {
        case .usage(let text): "result usage \(text)"
        case .signedOut(let cause): "result signed-out \(cause)"
        case .failed(let cause): "result failed \(cause)"
        }
    }
}

/// The service for the server's confidential password client, with its introspector.
func service(for server: OAuthTestServer, clockLeeway: TimeInterval) throws(Outcome) -> OAuth2Service {
    guard let client = server.clients["password"], let secret = client.clientSecret else {
        throw .usage("the server has no confidential password client")
    }
    let introspector = server.clients["introspector"].flatMap { introspector in
        introspector.clientSecret.map {
            OAuth2Client(id: introspector.clientId, authentication: .clientSecretBasic(secret: $0))
        }
    }
    let endpoints = server.endpoints
    return OAuth2Service(
        configuration: OAuth2Configuration(
            issuer: server.issuer,
            endpoints: OAuth2Endpoints(
                token: endpoints.token,
                revocation: endpoints.revoke,
                introspection: endpoints.introspect,
                userInfo: endpoints.userinfo
            ),
            client: OAuth2Client(id: client.clientId, authentication: .clientSecretBasic(secret: secret)),
            scope: ["openid", "profile", "email", "read"],
            introspectionClient: introspector,
            requestTimeout: 10,
            clockLeeway: clockLeeway,
            jwksURI: endpoints.jwks
        )
    )
}

/// The outcome of a failed manager call: signed out if the session is over.
func outcome(of error: ManagedSessionError, provider: ManagedSessionProvider) -> Outcome {
    error.endsSession || provider.session == nil ? .signedOut("\(error)") : .failed("\(error)")
}

func run(_ arguments: [String]) async throws(Outcome) {
    guard arguments.count >= 3 else { throw .usage("expected <command> <endpoints.json> <folder> ...") }
    let server: OAuthTestServer
    do {
        server = try OAuthTestServer.load(from: arguments[1])
    } catch {
        throw .usage("cannot read \(arguments[1]): \(error)")
    }
    var clockLeeway: TimeInterval = 60
    if let index = arguments.firstIndex(of: "--clock-leeway") {
        guard index + 1 < arguments.count, let seconds = TimeInterval(arguments[index + 1]) else {
            throw .usage("--clock-leeway needs a number of seconds")
        }
        clockLeeway = seconds
    }
    var configuration = ManagedSessionProvider.Configuration()
    if let index = arguments.firstIndex(of: "--lease") {
        guard index + 1 < arguments.count, let seconds = TimeInterval(arguments[index + 1]) else {
            throw .usage("--lease needs a number of seconds")
        }
        configuration.refreshLeaseDuration = seconds
    }
    let remote = try service(for: server, clockLeeway: clockLeeway)
    if arguments[0] == "serve" {
        await Serve(server: server, folder: arguments[2], remote: remote, configuration: configuration).run()
        exit(0)
    }
    let store = FileSessionStore(directory: URL(fileURLWithPath: arguments[2], isDirectory: true))
    let provider = ManagedSessionProvider(store: store, remote: remote, configuration: configuration)
    let handle = AuthSessionHandle(sessionProvider: provider)
    switch arguments[0] {
    case "sign-in":
        do throws(ManagedSessionError) {
            try await provider.signIn(with: .password(username: server.user.username, password: server.user.password))
        } catch {
            throw outcome(of: error, provider: provider)
        }
    case "refresh":
        guard arguments.count >= 4, let count = Int(arguments[3]), count >= 0 else {
            throw .usage("expected refresh <endpoints.json> <folder> <count> [options]")
        }
        await handle.waitUntilIdle()
        guard provider.session != nil else { throw .signedOut("no session at launch (\(handle.sessionStatus))") }
        say("ready")
        if arguments.dropFirst(4).contains("--wait-for-go") {
            _ = readLine()
        }
        for index in 0..<count {
            say("refreshing \(index + 1)")
            do throws(ManagedSessionError) {
                try await provider.refresh()
            } catch {
                throw outcome(of: error, provider: provider)
            }
            say("refreshed \(index + 1)")
        }
    default:
        throw .usage("unknown command \(arguments[0])")
    }
    // Let the launch's credential check end, and the handle hear every event.
    await provider.waitUntilIdle()
    await handle.waitUntilIdle()
    guard provider.session != nil, handle.sessionStatus == .signedIn else {
        throw .signedOut("ended \(handle.sessionStatus)")
    }
}

/// The `serve` command: a manager and its handle on the shared store, driven line by line.
///
///   relaunch   a new manager and handle on the folder (the old ones released): "ready <status>"
///   token      `validAccessToken(minimumValidity: 0)`: "token <ms> <digest>" or "token-failed <cause>"
///   sync       the synchronous calls, each timed: `setBioMetricAuthentication` (toggled),
///              `session`, the handle's `sessionStatus`: "sync <longest ms>"
///   refresh    `refresh()`: "refreshed <digest>" or "refresh-failed <cause>"
///   sign-in    the password grant: "signed-in <digest>" or "sign-in-failed <cause>"
///   sign-out   `signout(with: nil)` (no revocation): "signed-out-done <t before the call>"
///   quit       exits
final class Serve: @unchecked Sendable {
    // @unchecked: `current` is read and replaced by the command loop only; the event tasks
    // capture the provider they print about.
    let server: OAuthTestServer
    let folder: String
    let remote: OAuth2Service
    var configuration: ManagedSessionProvider.Configuration
    var current:
        (
            provider: ManagedSessionProvider, handle: AuthSessionHandle<ManagedSessionProvider>,
            listener: Task<Void, Never>
        )?

    init(
        server: OAuthTestServer,
        folder: String,
        remote: OAuth2Service,
        configuration: ManagedSessionProvider.Configuration
    ) {
        self.server = server
        self.folder = folder
        self.remote = remote
        self.configuration = configuration
        self.configuration.revokesOnSignOut = false
    }

    static func now() -> String { String(format: "%.6f", Date().timeIntervalSince1970) }

    static func digest(_ session: ManagedSession?) -> String {
        session.map { RefreshLease.fingerprint(of: $0.accessToken) } ?? "none"
    }

    func launch() async {
        current?.listener.cancel()
        current = nil
        let store = FileSessionStore(directory: URL(fileURLWithPath: folder, isDirectory: true))
        let provider = ManagedSessionProvider(store: store, remote: remote, configuration: configuration)
        // A person who passes Face ID: "sync" toggles the biometric setting, so a relaunch may find
        // it on. Linux's default authenticator fails closed, and the spec's failure policy then
        // signs out, for every process sharing the store: a sign-out no suspension caused.
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: SimulatedBiometricAuthenticator(outcome: .success),
            activationSignal: NotificationCenterActivationSignal(),
            clock: SystemClock()
        )
        let events = handle.delegateEvents()
        let listener = Task {
            for await event in events {
                switch event {
                case .logout(let error):
                    say("event signed-out \(Serve.now()) \(error.map { "\($0)" } ?? "none")")
                case .userUpdate:
                    say("event updated \(Serve.now()) \(Serve.digest(provider.session))")
                default:
                    break
                }
            }
        }
        current = (provider, handle, listener)
        await provider.waitUntilIdle()
        await handle.waitUntilIdle()
        say("ready \(handle.sessionStatus)")
    }

    /// The lines of stdin, read on a thread of their own: a blocking read must not hold one of the
    /// few threads Swift's tasks run on.
    static func inputLines() -> AsyncStream<String> {
        AsyncStream { continuation in
            let thread = Thread {
                while let line = readLine() {
                    continuation.yield(line)
                }
                continuation.finish()
            }
            thread.start()
        }
    }

    func run() async {
        await launch()
        for await line in Self.inputLines() {
            guard let (provider, handle, _) = current else { return }
            switch line {
            case "relaunch":
                await launch()
            case "token":
                let start = Date()
                do throws(ManagedSessionError) {
                    let token = try await provider.validAccessToken(minimumValidity: 0)
                    let ms = Date().timeIntervalSince(start) * 1000
                    say("token \(String(format: "%.3f", ms)) \(RefreshLease.fingerprint(of: token))")
                } catch {
                    say("token-failed \(error)")
                }
            case "sync":
                var longest: TimeInterval = 0
                func timed(_ body: () -> Void) {
                    let start = Date()
                    body()
                    longest = max(longest, Date().timeIntervalSince(start))
                }
                timed { provider.setBioMetricAuthentication(!provider.isBioMetricAuthenticationEnabled) }
                timed { _ = provider.session }
                timed { _ = handle.sessionStatus }
                say("sync \(String(format: "%.3f", longest * 1000))")
            case "refresh":
                do throws(ManagedSessionError) {
                    say("refreshed \(Serve.digest(try await provider.refresh()))")
                } catch {
                    say("refresh-failed \(error)")
                }
            case "sign-in":
                do throws(ManagedSessionError) {
                    let session = try await provider.signIn(
                        with: .password(username: server.user.username, password: server.user.password)
                    )
                    say("signed-in \(Serve.digest(session))")
                } catch {
                    say("sign-in-failed \(error)")
                }
            case "sign-out":
                let before = Serve.now()
                try? provider.signout(with: nil)
                say("signed-out-done \(before)")
            case "quit":
                return
            default:
                say("unknown \(line)")
            }
        }
    }
}

do throws(Outcome) {
    try await run(Array(CommandLine.arguments.dropFirst()))
    say("result ok")
    exit(0)
} catch {
    say(error.line)
    exit(error.status)
}
