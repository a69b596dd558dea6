// A command-line sign-in with the OAuth 2.0 device flow (RFC 8628), as an app would write it.
//
//   DeviceFlowCLI --issuer URL --client-id ID --store DIR
//                 [--device-endpoint URL] [--scope "openid profile email"]
//
// Every option may also come from the environment: OAUTH_ISSUER, OAUTH_CLIENT_ID,
// SESSION_STORE_DIR, OAUTH_DEVICE_ENDPOINT, OAUTH_SCOPE. It discovers the server, shows where to
// go and which code to enter, waits for the approval, keeps the session in DIR, and calls the
// API once. A second run finds the session there and signs in no more; the server's metadata is
// kept in DIR too, so a run with a valid session needs no network at all.

import AuthSession
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation

/// Writes a line at once, even into a pipe (a script waits for the code line).
func say(_ line: String, to handle: FileHandle = .standardOutput) {
    handle.write(Data((line + "\n").utf8))
}

/// Ends the tool with a message and a failure status.
func fail(_ message: String) -> Never {
    say("error: \(message)", to: .standardError)
    exit(1)
}

/// The value of `--name VALUE`, else of the environment variable, else `fallback`.
func option(_ name: String, environment: String, fallback: String? = nil) -> String? {
    let arguments = CommandLine.arguments
    if let index = arguments.firstIndex(of: "--\(name)"), index + 1 < arguments.count {
        return arguments[index + 1]
    }
    return ProcessInfo.processInfo.environment[environment] ?? fallback
}

guard let issuerText = option("issuer", environment: "OAUTH_ISSUER"), let issuer = URL(string: issuerText),
    let clientID = option("client-id", environment: "OAUTH_CLIENT_ID"),
    let storePath = option("store", environment: "SESSION_STORE_DIR")
else {
    fail("usage: DeviceFlowCLI --issuer URL --client-id ID --store DIR [--device-endpoint URL] [--scope SCOPES]")
}
let scope = (option("scope", environment: "OAUTH_SCOPE") ?? "openid profile email").split(separator: " ").map(
    String.init
)

/// The manager, once made: a failure waits for it too, so its observer's lines are not cut short.
var manager: ManagedSessionProvider?
do {
    // 1. The manager keeps the session in a file in the folder given.
    let store = FileSessionStore(directory: URL(fileURLWithPath: storePath, isDirectory: true))

    // 2. Discover the server, once: its metadata is kept beside the session, and a later run
    //    starts from that copy without a request (a copy older than a day is fetched again in
    //    the background). Some servers (django-oauth-toolkit) do not list their device
    //    authorization endpoint: then it comes from --device-endpoint.
    let metadata = try await OAuth2ServerMetadata.discover(issuer: issuer, cache: FileDiscoveryCache(beside: store))
    var configuration = OAuth2Configuration(metadata: metadata, client: OAuth2Client(id: clientID), scope: scope)
    if configuration.endpoints.deviceAuthorization == nil {
        guard let endpoint = option("device-endpoint", environment: "OAUTH_DEVICE_ENDPOINT") else {
            fail("the server lists no device authorization endpoint: pass --device-endpoint")
        }
        configuration.endpoints.deviceAuthorization = URL(string: endpoint)
    }
    let service = OAuth2Service(configuration: configuration)

    // The handle starts the manager: the launch reads the file and refreshes a session that is
    // due. Wait until it has settled before reading the session (the handle's waitUntilIdle()
    // returns while it refreshes). The manager's warnings and errors (a store failure, a failed
    // refresh) go to standard error.
    let provider = ManagedSessionProvider(
        store: store,
        remote: service,
        configuration: .init(observer: StandardErrorSessionObserver(minimumSeverity: .warning))
    )
    manager = provider
    let handle = AuthSessionHandle(sessionProvider: provider)
    await handle.waitUntilLaunchSettled()

    // 3. Sign in with the device flow, unless a session is stored already.
    let session: ManagedSession
    if let stored = provider.session {
        say("Already signed in.")
        session = stored
    } else {
        let authorization = try await service.startDeviceAuthorization()
        say("To sign in, open \(authorization.verificationURI.absoluteString)")
        say("and enter the code: \(authorization.userCode)")
        if let complete = authorization.verificationURIComplete {
            say("(or open \(complete.absoluteString))")
        }
        say("Waiting for the approval (the code expires at \(authorization.expiresAt))...")
        session = try await provider.signIn(with: authorization)
    }
    let user = session.user
    let name = user.name ?? user.profile["preferred_username"] ?? user.identifier
    say("Signed in as \(name)" + (user.email.map { " <\($0)>" } ?? "") + " (subject \(user.identifier))")

    // 4. An authorized request: a token that is valid now, refreshed if it was about to expire.
    let token = try await provider.validAccessToken()
    say("Got a valid access token (\(token.count) characters) for the API.")
    // 5. Before exiting: the manager's work (a write, a revocation) done, the observer's lines
    //    out, and a stale copy of the metadata fetched again for the next run.
    await provider.waitUntilIdle()
    await OAuth2ServerMetadata.waitForBackgroundRefreshes()
    _ = handle
    exit(0)
} catch let error as ManagedSessionError {
    await manager?.waitUntilIdle()
    fail(error.errorDescription ?? "\(error)")
} catch {
    await manager?.waitUntilIdle()
    fail("\(error)")
}
