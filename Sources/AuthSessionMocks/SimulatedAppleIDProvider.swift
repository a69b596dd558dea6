import AuthSession
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation

/// Sign in with Apple without Apple: the system sheet that authorizes a user, the credential
/// state Apple reports, its revocation notification, and what Apple's REST endpoints do for an
/// app's backend (redeem an authorization code, revoke a user's tokens). For tests and demos of a
/// `SignInWithAppleService` on any platform.
///
/// ```swift
/// let apple = SimulatedAppleIDProvider(clientID: "com.example.app")
/// let service = SignInWithAppleService(
///     clientID: "com.example.app", backend: .deviceOnly,
///     credentialStates: apple, revocationSignal: apple,
///     signatureVerifier: JSONWebKeySetVerifier(keySet: apple.keySet))
/// let nonce = SignInWithAppleNonce()
/// try await provider.signIn(with: apple.authorize(.init(userID: "001", givenName: "Ada"), nonce: nonce.hashed), nonce: nonce)
/// ```
///
/// It behaves as Apple does where an app can tell:
/// - the first authorization of a user for the app carries the name and email; later ones carry
///   neither (until the user stops using Apple ID with the app, after which the next one is a
///   first again);
/// - identity tokens are JWTs with `iss` `https://appleid.apple.com`, `aud` the client ID, `sub`
///   the user, `iat`, `exp` (``identityTokenLifetime`` later), `nonce`, and `email` when the user
///   shared one (in every token, or only the first with ``includesEmailInEveryIdentityToken``
///   `false`), signed by a key of ``keySet``. It signs with ES256 (a fresh P-256 key per
///   provider); Apple signs with RS256; the verifier checks both the same way;
/// - authorization codes are single-use and expire after five minutes;
/// - the credential state is `authorized` after an authorization, `revoked` after ``stopUsingAppleID(userID:notifies:)``
///   or ``revokeTokens(userID:)``, `notFound` for a user it never authorized.
///
/// All operations are thread-safe. Revocation observers are called synchronously, on the thread
/// that calls ``postCredentialRevokedNotification()``.
public final class SimulatedAppleIDProvider: AppleIDCredentialStateSource, CredentialRevocationSignal {

    /// A person with an Apple ID, as the sheet shares them.
    ///
    /// All operations are thread-safe.
    public struct Account: Sendable, Hashable {

        /// The stable user identifier Apple gives the app.
        public var userID: String

        /// The given name the user shares.
        public var givenName: String?

        /// The family name the user shares.
        public var familyName: String?

        /// The email the user shares.
        public var email: String?

        /// Creates an account.
        ///
        /// - Parameters:
        ///   - userID: The stable user identifier.
        ///   - givenName: The given name.
        ///   - familyName: The family name.
        ///   - email: The email.
        public init(userID: String, givenName: String? = nil, familyName: String? = nil, email: String? = nil) {
            self.userID = userID
            self.givenName = givenName
            self.familyName = familyName
            self.email = email
        }
    }

    /// The app's client ID: every identity token's audience.
    public let clientID: String

    /// How long an identity token lives: ten minutes, as Apple's.
    public let identityTokenLifetime: TimeInterval

    /// Whether every identity token carries the email (as Apple's do when the user shared it), or
    /// only the first authorization's.
    public let includesEmailInEveryIdentityToken: Bool

    private let clock: any AuthSessionClock
    private let signer: JWTSigner
    private let storage = ConcurrencySafeContainer(State())

    private struct State {
        var states: [String: CredentialState] = [:]
        /// Users who authorized the app and have not stopped using Apple ID with it since.
        var authorized: Set<String> = []
        var codes: [String: (userID: String, expiresAt: Date)] = [:]
        var observers: [UInt64: @Sendable () -> Void] = [:]
        var lastObserverID: UInt64 = 0
        var authorizationCount = 0
        var redeemedCodeCount = 0
        var tokenRevocationCount = 0
        var stateCheckCount = 0
    }

    /// Creates a provider with a fresh signing key.
    ///
    /// - Parameters:
    ///   - clientID: The app's client ID.
    ///   - clock: The clock of `iat`, `exp` and code expiry.
    ///   - identityTokenLifetime: How long identity tokens live; ten minutes by default.
    ///   - includesEmailInEveryIdentityToken: Whether every identity token carries the email;
    ///     `true` by default.
    public init(
        clientID: String,
        clock: any AuthSessionClock = SystemClock(),
        identityTokenLifetime: TimeInterval = 600,
        includesEmailInEveryIdentityToken: Bool = true
    ) {
        self.clientID = clientID
        self.clock = clock
        self.identityTokenLifetime = identityTokenLifetime
        self.includesEmailInEveryIdentityToken = includesEmailInEveryIdentityToken
        self.signer = JWTSigner.randomES256()
    }

    /// The key set that verifies its identity tokens (`JSONWebKeySetVerifier(keySet:)`).
    public var keySet: JSONWebKeySet {
        JSONWebKeySet(keys: [signer.publicKey])
    }

    /// The key set as the JSON document Apple serves at `https://appleid.apple.com/auth/keys`.
    public var keySetJSON: Data {
        JWTSigner.keySetJSON([signer])
    }

    // MARK: The sheet

    /// The user authorizes the app in the Sign in with Apple sheet: returns the credential the
    /// app receives.
    ///
    /// - Parameters:
    ///   - account: Who signs in.
    ///   - nonce: The request's nonce (`SignInWithAppleNonce.hashed`), put in the token as is.
    ///   - state: The request's `state`, returned as is.
    /// - Returns: The credential, with the name and email on a first authorization only.
    public func authorize(_ account: Account, nonce: String?, state: String? = nil) -> AppleIDCredential {
        let now = clock.now
        let code = "c" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let isFirst = storage.withLock { state -> Bool in
            state.authorizationCount += 1
            state.states[account.userID] = .authorized
            state.codes[code] = (account.userID, now.addingTimeInterval(300))
            return state.authorized.insert(account.userID).inserted
        }
        var claims: [String: Any] = [
            "iss": SignInWithAppleService.issuer,
            "aud": clientID,
            "sub": account.userID,
            "iat": Int(now.timeIntervalSince1970),
            "exp": Int(now.timeIntervalSince1970 + identityTokenLifetime),
            "auth_time": Int(now.timeIntervalSince1970),
            "nonce_supported": true,
        ]
        claims["nonce"] = nonce
        if let email = account.email, isFirst || includesEmailInEveryIdentityToken {
            claims["email"] = email
            claims["email_verified"] = true
        }
        var name: PersonNameComponents?
        if isFirst, account.givenName != nil || account.familyName != nil {
            var components = PersonNameComponents()
            components.givenName = account.givenName
            components.familyName = account.familyName
            name = components
        }
        return AppleIDCredential(
            user: account.userID,
            identityToken: signer.sign(claims: claims),
            authorizationCode: code,
            fullName: name,
            email: isFirst ? account.email : nil,
            realUserStatus: .likelyReal,
            state: state
        )
    }

    /// A compact JWT with these claims, signed by the provider's key: for a test that needs a
    /// token the sheet would never give (another audience, an old `exp`).
    ///
    /// - Parameter claims: The claims, JSON values only.
    /// - Returns: The signed token.
    public func signedToken(claims: [String: any Sendable]) -> String {
        signer.sign(claims: claims)
    }

    // MARK: Settings

    /// The user chooses "Stop Using Apple ID" for the app in Settings: the credential state turns
    /// `revoked`; the next authorization is a first one again.
    ///
    /// - Parameters:
    ///   - userID: The user.
    ///   - notifies: Whether a running app is told at once, with
    ///     ``postCredentialRevokedNotification()`` (as when the app runs while the user revokes);
    ///   without it, the app learns at its next credential check. `false` by default.
    public func stopUsingAppleID(userID: String, notifies: Bool = false) {
        storage.withLock { state in
            state.states[userID] = .revoked
            state.authorized.remove(userID)
        }
        if notifies {
            postCredentialRevokedNotification()
        }
    }

    /// Sets a user's credential state (`transferred`, say).
    ///
    /// - Parameters:
    ///   - credentialState: The state.
    ///   - userID: The user.
    public func setCredentialState(_ credentialState: CredentialState, userID: String) {
        storage.withLock { $0.states[userID] = credentialState }
    }

    /// Posts `credentialRevokedNotification` without changing any state: every observer is
    /// called, on this thread. ``stopUsingAppleID(userID:notifies:)`` revokes and posts.
    public func postCredentialRevokedNotification() {
        let handlers = storage.withLock { Array($0.observers.values) }
        for handler in handlers {
            handler()
        }
    }

    // MARK: Apple's REST endpoints, for a backend

    /// Redeems an authorization code at Apple's token endpoint (`/auth/token`), as a backend does:
    /// single use, five minutes.
    ///
    /// - Parameter code: The credential's authorization code.
    /// - Returns: The user it was issued for.
    /// - Throws: `RemoteAuthError` `invalid_grant` for an unknown, used or expired code.
    public func redeem(authorizationCode code: String) throws(RemoteAuthError) -> String {
        let now = clock.now
        let userID = storage.withLock { state -> String? in
            guard let issued = state.codes.removeValue(forKey: code), issued.expiresAt > now else { return nil }
            state.redeemedCodeCount += 1
            return issued.userID
        }
        guard let userID else { throw RemoteAuthError(.server(code: "invalid_grant"), statusCode: 400) }
        return userID
    }

    /// Revokes a user's tokens (`/auth/revoke`), as a backend does when the user deletes their
    /// account: the credential state turns `revoked` and the next authorization is a first again.
    ///
    /// - Parameter userID: The user.
    public func revokeTokens(userID: String) {
        storage.withLock { state in
            state.tokenRevocationCount += 1
            state.states[userID] = .revoked
            state.authorized.remove(userID)
        }
    }

    // MARK: AppleIDCredentialStateSource, CredentialRevocationSignal

    /// The user's credential state: `notFound` for a user never authorized.
    ///
    /// - Parameter userID: The user.
    /// - Returns: The state.
    public func credentialState(forUserID userID: String) async throws(RemoteAuthError) -> CredentialState {
        storage.withLock { state in
            state.stateCheckCount += 1
            return state.states[userID] ?? .notFound
        }
    }

    /// Calls `handler` on every ``postCredentialRevokedNotification()`` until the observation is
    /// cancelled.
    ///
    /// - Parameter handler: The handler.
    /// - Returns: The observation.
    public func observe(_ handler: @escaping @Sendable () -> Void) -> AppActivationObservation {
        let id = storage.withLock { state in
            state.lastObserverID += 1
            state.observers[state.lastObserverID] = handler
            return state.lastObserverID
        }
        return AppActivationObservation { [weak self] in
            _ = self?.storage.withLock { $0.observers.removeValue(forKey: id) }
        }
    }

    // MARK: History

    /// How many authorizations the sheet gave.
    public var authorizationCount: Int { storage.withLock { $0.authorizationCount } }

    /// How many authorization codes were redeemed.
    public var redeemedCodeCount: Int { storage.withLock { $0.redeemedCodeCount } }

    /// How many times a user's tokens were revoked.
    public var tokenRevocationCount: Int { storage.withLock { $0.tokenRevocationCount } }

    /// How many credential-state checks were answered.
    public var stateCheckCount: Int { storage.withLock { $0.stateCheckCount } }

    /// How many revocation observers are live.
    public var observerCount: Int { storage.withLock { $0.observers.count } }
}
