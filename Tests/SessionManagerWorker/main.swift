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
// Options: --wait-for-go; --clock-leeway <seconds> (the service's `clockLeeway`, 60 by default).
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
            clockLeeway: clockLeeway
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
    let store = FileSessionStore(directory: URL(fileURLWithPath: arguments[2], isDirectory: true))
    let provider = ManagedSessionProvider(
        store: store,
        remote: try service(for: server, clockLeeway: clockLeeway)
    )
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

do throws(Outcome) {
    try await run(Array(CommandLine.arguments.dropFirst()))
    say("result ok")
    exit(0)
} catch {
    say(error.line)
    exit(error.status)
}
