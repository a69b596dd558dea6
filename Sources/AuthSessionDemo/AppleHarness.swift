import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation

/// The world of one Sign in with Apple scenario: a simulated Apple (the sheet, Settings, the
/// revocation notification, its REST endpoints), the app's backend, a `SignInWithAppleService`
/// on both, a temporary folder for the session file, a clock the demo moves, and the app as it
/// is now (a ``DemoApp``: it may relaunch).
final class AppleDemoHarness: DemoTimeline {

    /// The app's bundle identifier: the identity tokens' audience.
    static let clientID = "com.example.auth-session-demo"

    /// The person who signs in.
    static let ada = SimulatedAppleIDProvider.Account(
        userID: "001234.ada",
        givenName: "Ada",
        familyName: "Lovelace",
        email: "ada@privaterelay.appleid.com"
    )

    /// Moved by the demo: Apple's tokens, the service's checks and the manager share it.
    let clock = ManualClock(now: Date())
    let activation = ManualActivationSignal()
    let apple: SimulatedAppleIDProvider
    let backend: AppleDemoBackend
    let service: SignInWithAppleService
    let root: URL
    let folder: URL
    private(set) var app: DemoApp
    var failures: [String] = []
    private var tokenLabels: [String: String] = [:]

    init(scenario: String) throws {
        apple = SimulatedAppleIDProvider(
            clientID: Self.clientID,
            clock: clock,
            includesEmailInEveryIdentityToken: false
        )
        backend = AppleDemoBackend(apple: apple)
        service = SignInWithAppleService(
            clientID: Self.clientID,
            backend: backend.signInWithApple,
            credentialStates: apple,
            revocationSignal: apple,
            signatureVerifier: JSONWebKeySetVerifier(keySet: apple.keySet),
            clock: clock
        )
        root = try Self.makeTemporaryFolder(for: scenario)
        folder = root.appendingPathComponent("store", isDirectory: true)
        app = DemoApp(folder: folder, remote: service, clock: clock, activation: activation)
    }

    // MARK: - Steps

    /// The app quits and starts again: a new store object on the same file, a new manager, a new
    /// handle, on the same `SignInWithAppleService`.
    func relaunch() async {
        await app.settle()
        line("  ▶ app quits (the manager, its handle and its store object are released)")
        app = DemoApp(folder: folder, remote: service, clock: clock, activation: activation)
        await printLaunch("app relaunches: new FileSessionStore on the same file, new manager, new AuthSessionHandle")
    }

    /// The user signs in with Apple: the sheet returns a credential for a fresh nonce, and the
    /// manager signs in with it (the service checks the identity token, the backend redeems the
    /// code and issues its tokens).
    ///
    /// - Parameter why: What kind of authorization this is, for the timeline.
    /// - Returns: The credential the sheet returned.
    @discardableResult
    func signInWithApple(_ why: String) async throws -> AppleIDCredential {
        let nonce = SignInWithAppleNonce()
        line("  ▶ user taps Sign in with Apple (\(why)); request.nonce = nonce.hashed")
        let credential = apple.authorize(Self.ada, nonce: nonce.hashed)
        note("sheet    \(credential)")
        note("         identity token claims: \(claimsSummary(of: credential))")
        line(
            "  ▶ provider.signIn(with: credential, nonce: nonce): the service checks the token, "
                + "the backend redeems the code"
        )
        try await app.provider.signIn(with: credential, nonce: nonce)
        await app.settle()
        printNew()
        printSession()
        return credential
    }

    /// Runs `action` as an input the timeline names, then prints what followed.
    func input(_ text: String, _ action: () async throws -> Void) async rethrows {
        line("  ▶ \(text)")
        try await action()
        await app.settle()
        if !printNew() {
            line("      (nothing published, no callback)")
        }
    }

    /// Runs `action` as an input the timeline names, waits for the sign-out it causes, then
    /// prints what followed.
    func inputSigningOut(_ text: String, _ action: () async throws -> Void) async throws {
        line("  ▶ \(text)")
        let mark = app.recorder.count
        try await action()
        try await app.recorder.waitForStatus(.signedOut, after: mark, timeout: 15)
        await app.settle()
        printNew()
    }

    /// The errors the app's delegate received with its logouts, in order (`nil` for a voluntary
    /// one).
    var logoutErrors: [ManagedSessionError?] {
        app.recorder.events.compactMap { event -> ManagedSessionError?? in
            guard case .logout(let error) = event else { return nil }
            return .some(error as? ManagedSessionError)
        }
    }

    /// Whether the session is the backend's account for Ada, with the name and email Apple shared
    /// on her first authorization.
    func hasAdasNameAndEmail(_ session: ManagedSession?) -> Bool {
        guard let user = session?.user else { return false }
        return user.name == "Ada Lovelace" && user.email == Self.ada.email
            && user.profile[SignInWithAppleService.appleUserIDProfileKey] == Self.ada.userID
    }

    // MARK: - Output

    /// Prints the events the manager published and the callbacks the delegate received since the
    /// last time.
    @discardableResult
    func printNew() -> Bool {
        app.printNew(describe)
    }

    /// Prints the session: its user, a label for its access token, and the file.
    func printSession() {
        guard let session = app.provider.session else {
            note("session  none; the file: \(app.fileSummary())")
            return
        }
        let user = session.user
        note(
            "session  user \(user.identifier): name \(user.name.map { "\"\($0)\"" } ?? "none"), "
                + "email \(user.email ?? "none"), Apple ID \(user.profile[SignInWithAppleService.appleUserIDProfileKey] ?? "none")"
        )
        note(
            "         access token \(label(session.accessToken)), expires in "
                + "\(Int((session.expiresAt - clock.now.timeIntervalSince1970).rounded())) s, "
                + "stored in \(app.fileSummary())"
        )
    }

    /// Which claims of the credential's identity token matter here; never the token.
    func claimsSummary(of credential: AppleIDCredential) -> String {
        guard let token = credential.identityToken, let claims = try? IDTokenClaims(parsing: token) else {
            return "unreadable"
        }
        return "sub \(claims.subject), nonce \(claims.nonce == nil ? "absent" : "present"), "
            + "email \(claims.email ?? "absent")"
    }

    /// A short label for a token (`A1`, `A2`, … for access tokens), never the token.
    func label(_ accessToken: String) -> String {
        if let label = tokenLabels[accessToken] { return label }
        let label = "A\(tokenLabels.count + 1)"
        tokenLabels[accessToken] = label
        return label
    }

    /// What the file holds now, read by a store object of its own.
    func storedSession() -> ManagedSession? {
        try? FileSessionStore(directory: folder).load()
    }

    func describe(_ event: AuthSessionEvent) -> String {
        ManagerDemoHarness.describe(event, label: label)
    }
}
