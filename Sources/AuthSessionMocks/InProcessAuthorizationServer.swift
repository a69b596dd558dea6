// Over 600 lines on purpose: one test double that plays a whole server (grants, rotation, reuse
// detection, device codes, revocation, scripted faults) behind one lock, so a test reads what it
// did from one place.

import AuthSession
import AuthSessionProviders
import Foundation

/// An OAuth-like authorization server that runs in the test's process: it signs users in,
/// rotates refresh tokens, detects their reuse, answers after a latency on an injected clock,
/// fails on command, and counts every request.
///
/// ```swift
/// let clock = ManualClock()
/// let server = InProcessAuthorizationServer(clock: clock)
/// server.register(ManagedUser(identifier: "ada", name: "Ada"), password: "pw")
/// let tokens = try await server.obtainTokens(with: .password(username: "ada", password: "pw"))
/// server.enqueueRefreshFaults([.answerLost])   // the next refresh rotates, but the answer is lost
/// server.holdsRefreshes = true                 // refreshes wait for releaseHeldRefreshes()
/// ```
///
/// Each sign-in starts a token *family*: the refresh tokens and access tokens descending from
/// it. A family has one live access token and, when the server rotates, one live refresh token;
/// presenting a spent refresh token again revokes the whole family (when ``detectsReuse``), as
/// RFC 6819 §5.2.2.3 and the OAuth 2.0 Security BCP recommend. Tokens are random opaque strings:
/// access tokens start with `at-`, refresh tokens with `rt-`; no ID token is issued.
///
/// A refresh goes through these steps, in order:
/// 1. It waits ``latency`` seconds on the clock; a cancellation meanwhile throws
///    `RemoteAuthError.Reason.cancelled`, and the server never sees the request.
/// 2. The presentation is recorded (``presentedRefreshTokens``, ``duplicatePresentations``).
/// 3. While ``holdsRefreshes``, it suspends until ``releaseHeldRefreshes()``; cancelling its task
///    does not end the hold. A refresh cancelled while held is still carried out when released,
///    but its caller receives `RemoteAuthError.Reason.cancelled`: the answer is lost to it.
/// 4. The next scripted refresh fault applies, if any; otherwise the token is checked and the
///    tokens are issued.
///
/// Sign-ins, device-code polls, revocations and credential-state checks answer at once.
///
/// The device flow (RFC 8628): ``issueDeviceCode(interval:expiresIn:scope:)`` stands for the
/// device authorization endpoint; a poll is ``obtainTokens(with:)`` with `AuthGrant.deviceCode(_:)`.
/// It answers `authorization_pending` until ``approveDeviceCode(_:as:)``, then issues tokens
/// once; `access_denied` after ``denyDeviceCode(_:)``; `expired_token` once the code's expiry has
/// passed on the clock or after ``expireDeviceCode(_:)``; and `slow_down` (adding 5 seconds to
/// the code's interval, as RFC 8628 §3.5 says) to a poll that comes sooner than the interval
/// after the previous one, or when scripted with ``answerSlowDown(toNextPollsOf:count:)``.
/// ``devicePollTimes`` records when each poll came.
///
/// ``description`` and the mirror never show a token.
///
/// All operations are thread-safe.
public final class InProcessAuthorizationServer: RemoteAuthService, CustomStringConvertible, CustomReflectable {

    /// A failure the server produces on command, instead of its normal answer.
    ///
    /// All operations are thread-safe.
    public enum Fault: Sendable, Hashable {

        /// HTTP 503: the server did not act. Transient, and the outcome is certain. As a
        /// credential-state fault: a network error before the request was sent (`URLError`
        /// `-1009`, not connected), transient and certain too.
        case unavailable

        /// The server acts (a refresh rotates, a sign-in issues tokens) but the answer is lost:
        /// `RemoteAuthError.Reason.timedOut`, transient, with an uncertain outcome.
        case answerLost

        /// `invalid_grant` with HTTP 400: terminal. The server changes nothing.
        case invalidGrant

        /// `invalid_client` with HTTP 401: a misconfiguration. The server changes nothing.
        case invalidClient

        /// HTTP 429 with `Retry-After` in seconds: transient, and the outcome is certain.
        case tooManyRequests(retryAfter: TimeInterval)
    }

    private struct Account {
        var user: ManagedUser
        var password: String?
        var hasReceivedProfile = false
    }

    private struct DeviceCode {
        enum Status {
            case pending
            case approved(subject: String)
            case denied, expired, redeemed
        }
        var userCode: String
        var scope: [String]?
        var expiresAt: Date
        var interval: TimeInterval
        var status = Status.pending
        var lastPoll: Date?
        var scriptedSlowDowns = 0
    }

    private struct Family {
        var subject: String
        var scope: [String]?
        var accessToken: String
        var accessTokenExpiresAt: Date
        var refreshToken: String
        var isRevoked = false
    }

    private struct State: WaitableState {
        var latency: TimeInterval
        var accessTokenLifetime: TimeInterval
        var holdsRefreshes = false
        var namesUsers = true
        var accounts: [String: Account] = [:]
        var authorizationCodes: [String: String] = [:]
        var deviceCodes: [String: DeviceCode] = [:]
        var devicePollTimes: [Date] = []
        var families: [Int: Family] = [:]
        var nextFamilyID = 0
        var familyOfAccessToken: [String: Int] = [:]
        var familyOfRefreshToken: [String: Int] = [:]
        var refreshFaults: [Fault] = []
        var revocationFaults: [Fault] = []
        var credentialStateFaults: [Fault] = []
        var obtainFaults: [Fault] = []
        var heldRefreshes: [CheckedContinuation<Bool, Never>] = []
        var obtainCount = 0
        var presentedRefreshTokens: [String] = []
        var presentedOnce: Set<String> = []
        var duplicatePresentations: [String] = []
        var refreshLog: [RefreshRecord] = []
        /// Refresh tokens whose rotation was answered to the client.
        var answeredRotations: Set<String> = []
        var presentedAfterAnsweredRotation: [String] = []
        var revokedTokens: [String] = []
        var credentialStateCount = 0
        var waiters = WaiterList<State>()

        /// The family `token` belongs to, as an access or a refresh token.
        func family(of token: String) -> Int? {
            familyOfAccessToken[token] ?? familyOfRefreshToken[token]
        }

        mutating func revokeFamily(_ id: Int) {
            families[id]?.isRevoked = true
        }

        mutating func setDeviceStatus(_ status: DeviceCode.Status, userCode: String) {
            for (key, device) in deviceCodes where device.userCode == userCode {
                deviceCodes[key]?.status = status
            }
        }
    }

    private let state: ConcurrencySafeContainer<State>

    /// The clock that times the latency and the access tokens' expiry.
    public let clock: any AuthSessionClock

    /// Whether a refresh spends the refresh token presented and issues a new one.
    public let rotatesRefreshTokens: Bool

    /// Whether presenting a spent refresh token revokes its whole family.
    public let detectsReuse: Bool

    /// Creates a server with no users.
    ///
    /// - Parameters:
    ///   - clock: The clock for the latency and the access tokens' expiry.
    ///   - accessTokenLifetime: Seconds an access token lives.
    ///   - rotatesRefreshTokens: Whether each refresh spends the refresh token and issues a new one.
    ///   - detectsReuse: Whether presenting a spent refresh token revokes its family.
    ///   - latency: Seconds of the clock each refresh waits before the server sees it.
    public init(
        clock: any AuthSessionClock = SystemClock(),
        accessTokenLifetime: TimeInterval = 3600,
        rotatesRefreshTokens: Bool = true,
        detectsReuse: Bool = true,
        latency: TimeInterval = 0
    ) {
        self.clock = clock
        self.rotatesRefreshTokens = rotatesRefreshTokens
        self.detectsReuse = detectsReuse
        state = ConcurrencySafeContainer(State(latency: latency, accessTokenLifetime: accessTokenLifetime))
    }

    // MARK: - Settings

    /// Seconds of the clock each refresh waits before the server sees it; 0 or less for none.
    public var latency: TimeInterval {
        get { state.withLock { $0.latency } }
        set { state.withLock { $0.latency = newValue } }
    }

    /// Whether a sign-in's answer names the user (as an OpenID Connect ID token does); `true`.
    /// `false` is a plain OAuth 2.0 server, with no ID token and no userinfo: the answer carries no
    /// user, and the session manager tells people apart by the session's lineage.
    public var namesUsers: Bool {
        get { state.withLock { $0.namesUsers } }
        set { state.withLock { $0.namesUsers = newValue } }
    }

    /// Seconds an access token lives from its issue; applies to tokens issued from now on.
    public var accessTokenLifetime: TimeInterval {
        get { state.withLock { $0.accessTokenLifetime } }
        set { state.withLock { $0.accessTokenLifetime = newValue } }
    }

    // MARK: - Users

    /// Registers `user` for the password grant, with `password`; a user registered already gets
    /// the new profile and password, and keeps whether the profile was sent once.
    ///
    /// - Parameters:
    ///   - user: The user; its identifier is the grant's `username`.
    ///   - password: The password.
    public func register(_ user: ManagedUser, password: String) {
        state.withLock { state in
            var account = state.accounts[user.identifier] ?? Account(user: user)
            account.user = user
            account.password = password
            state.accounts[user.identifier] = account
        }
    }

    /// Issues a single-use authorization code for `user`, as the authorization endpoint would
    /// after the user signed in; registers the user (without a password) if unknown.
    ///
    /// - Parameter user: The user the code signs in.
    /// - Returns: The code, for `AuthGrant.authorizationCode(_:codeVerifier:redirectURI:nonce:)`.
    public func issueAuthorizationCode(for user: ManagedUser) -> String {
        let code = Self.makeToken(prefix: "code-")
        state.withLock { state in
            if state.accounts[user.identifier] == nil {
                state.accounts[user.identifier] = Account(user: user)
            }
            state.authorizationCodes[code] = user.identifier
        }
        return code
    }

    // MARK: - Device flow

    /// A device code the server issued: what its device authorization endpoint would answer
    /// (RFC 8628 §3.2).
    ///
    /// ``description`` never shows the device code.
    ///
    /// All operations are thread-safe.
    public struct IssuedDeviceCode: Sendable, Hashable, CustomStringConvertible {

        /// The code the client polls with (a secret).
        public let deviceCode: String

        /// The code the user enters; what ``approveDeviceCode(_:as:)`` and the others take.
        public let userCode: String

        /// When the codes expire, on the server's clock.
        public let expiresAt: Date

        /// The seconds between polls the server asks for.
        public let interval: TimeInterval

        /// The user code and the expiry; never the device code.
        public var description: String { "IssuedDeviceCode(userCode: \(userCode), expiresAt: \(expiresAt))" }
    }

    /// Issues a device code, as the device authorization endpoint would.
    ///
    /// - Parameters:
    ///   - interval: The seconds between polls the server asks for.
    ///   - expiresIn: The seconds of the clock the codes live.
    ///   - scope: The scopes the tokens will carry.
    /// - Returns: The codes.
    public func issueDeviceCode(
        interval: TimeInterval = 5,
        expiresIn: TimeInterval = 600,
        scope: [String]? = nil
    ) -> IssuedDeviceCode {
        let issued = IssuedDeviceCode(
            deviceCode: Self.makeToken(prefix: "dc-"),
            userCode: String(Self.makeToken(prefix: "").prefix(8)).uppercased(),
            expiresAt: clock.now.addingTimeInterval(expiresIn),
            interval: interval
        )
        state.withLock { state in
            state.deviceCodes[issued.deviceCode] = DeviceCode(
                userCode: issued.userCode,
                scope: scope,
                expiresAt: issued.expiresAt,
                interval: interval
            )
        }
        return issued
    }

    /// Approves the device code of `userCode` as `user` would at the verification page;
    /// registers the user (without a password) if unknown. The next poll gets the tokens.
    ///
    /// - Parameters:
    ///   - userCode: The user code.
    ///   - user: Who approves.
    public func approveDeviceCode(_ userCode: String, as user: ManagedUser) {
        state.withLock { state in
            if state.accounts[user.identifier] == nil {
                state.accounts[user.identifier] = Account(user: user)
            }
            state.setDeviceStatus(.approved(subject: user.identifier), userCode: userCode)
        }
    }

    /// Declines the device code of `userCode`: the next poll answers `access_denied`.
    ///
    /// - Parameter userCode: The user code.
    public func denyDeviceCode(_ userCode: String) {
        state.withLock { $0.setDeviceStatus(.denied, userCode: userCode) }
    }

    /// Expires the device code of `userCode` before its time: the next poll answers
    /// `expired_token`.
    ///
    /// - Parameter userCode: The user code.
    public func expireDeviceCode(_ userCode: String) {
        state.withLock { $0.setDeviceStatus(.expired, userCode: userCode) }
    }

    /// Answers the next `count` polls of the device code of `userCode` with `slow_down` (each
    /// adds 5 seconds to its interval), as a loaded server may.
    ///
    /// - Parameters:
    ///   - userCode: The user code.
    ///   - count: How many polls.
    public func answerSlowDown(toNextPollsOf userCode: String, count: Int = 1) {
        state.withLock { state in
            for (key, device) in state.deviceCodes where device.userCode == userCode {
                state.deviceCodes[key]?.scriptedSlowDowns += max(0, count)
            }
        }
    }

    /// The clock's time at each device-code poll, in order, faulted ones included.
    public var devicePollTimes: [Date] { state.withLock { $0.devicePollTimes } }

    // MARK: - Scripted faults

    /// Queues faults for the next refreshes, one each, after those queued already.
    ///
    /// - Parameter faults: The faults, in order.
    public func enqueueRefreshFaults(_ faults: [Fault]) {
        state.withLock { $0.refreshFaults += faults }
    }

    /// Queues faults for the next credential-state checks, one each. Only ``Fault/unavailable``
    /// is meaningful there (a network error); the others answer as they do elsewhere.
    ///
    /// - Parameter faults: The faults, in order.
    public func enqueueCredentialStateFaults(_ faults: [Fault]) {
        state.withLock { $0.credentialStateFaults += faults }
    }

    /// Queues faults for the next revocations (``revoke(_:kind:)``), one each: the token is not
    /// revoked then. ``Fault/unavailable`` and ``Fault/answerLost`` stand for a server that
    /// cannot be reached (the second one revokes, but the answer is lost), ``Fault/invalidClient``
    /// for a refusal.
    ///
    /// - Parameter faults: The faults, in order.
    public func enqueueRevocationFaults(_ faults: [Fault]) {
        state.withLock { $0.revocationFaults += faults }
    }

    /// Queues faults for the next sign-ins (``obtainTokens(with:)``), one each.
    ///
    /// - Parameter faults: The faults, in order.
    public func enqueueObtainFaults(_ faults: [Fault]) {
        state.withLock { $0.obtainFaults += faults }
    }

    // MARK: - Holding refreshes

    /// While `true`, each refresh suspends after its presentation is recorded and before the
    /// server answers it, until ``releaseHeldRefreshes()``. Setting it to `false` does not
    /// release the refreshes held already.
    public var holdsRefreshes: Bool {
        get { state.withLock { $0.holdsRefreshes } }
        set { state.withLock { $0.holdsRefreshes = newValue } }
    }

    /// The number of refreshes held now.
    public var heldRefreshCount: Int {
        state.withLock { $0.heldRefreshes.count }
    }

    /// Stops holding refreshes (``holdsRefreshes`` becomes `false`) and lets every held one go on,
    /// in the order they were held; they then run concurrently. Both happen at once, so a refresh
    /// that arrives meanwhile is never held with nobody left to release it.
    public func releaseHeldRefreshes() {
        let held = state.mutateAndNotify { state in
            state.holdsRefreshes = false
            defer { state.heldRefreshes = [] }
            return state.heldRefreshes
        }
        for continuation in held {
            continuation.resume(returning: true)
        }
    }

    /// Returns once at least `count` refreshes are held.
    ///
    /// - Parameters:
    ///   - count: The number of held refreshes to wait for.
    ///   - timeout: A safety net in real seconds, not a way to wait.
    /// - Throws: ``MockTimeoutError`` if fewer are held within `timeout`.
    public func waitForHeldRefreshes(_ count: Int, timeout: TimeInterval = 10) async throws {
        try await state.wait(timeout: timeout, for: "\(count) held refreshes") { $0.heldRefreshes.count >= count }
    }

    // MARK: - Administration

    /// Revokes every token family of the user `subject`, as a sign-out on another device or an
    /// administrator would. Not counted in ``revokedTokens``.
    ///
    /// - Parameter subject: The user's identifier.
    public func revokeAllSessions(of subject: String) {
        state.withLock { state in
            for (id, family) in state.families where family.subject == subject {
                state.revokeFamily(id)
            }
        }
    }

    /// Whether a resource server would accept `token`: it is its family's current access token,
    /// the family is not revoked, and the clock has not reached its expiry.
    ///
    /// - Parameter token: The access token.
    /// - Returns: `true` if it is live.
    public func isAccessTokenValid(_ token: String) -> Bool {
        let now = clock.now
        return state.withLock { state in
            guard let id = state.familyOfAccessToken[token], let family = state.families[id] else { return false }
            return !family.isRevoked && family.accessToken == token && now < family.accessTokenExpiresAt
        }
    }

    /// Whom the server issued `accessToken` to, whatever the answer said: the sign-in that started
    /// its family (each sign-in starts one; refreshes stay in it) and the account's subject. The
    /// server's own record, for tests that must not trust the client's idea of who is who.
    ///
    /// - Parameter accessToken: An access token this server issued.
    /// - Returns: The family's number and subject, or `nil` for a token it never issued.
    public func issuance(ofAccessToken accessToken: String) -> (signIn: Int, subject: String)? {
        state.withLock { state in
            guard let id = state.familyOfAccessToken[accessToken], let family = state.families[id] else { return nil }
            return (id, family.subject)
        }
    }

    // MARK: - History

    /// How many times ``obtainTokens(with:)`` was called, failures included.
    public var obtainCount: Int { state.withLock { $0.obtainCount } }

    /// How many refreshes the server saw (``presentedRefreshTokens``'s count); a refresh
    /// cancelled during its latency is not seen.
    public var refreshCount: Int { state.withLock { $0.presentedRefreshTokens.count } }

    /// Every refresh token presented, in order, whatever the outcome.
    public var presentedRefreshTokens: [String] { state.withLock { $0.presentedRefreshTokens } }

    /// The refresh tokens presented more than once, each listed once, in the order of their
    /// second presentation.
    public var duplicatePresentations: [String] { state.withLock { $0.duplicatePresentations } }

    /// What the server did with each refresh presentation, in order.
    public var refreshLog: [RefreshRecord] { state.withLock { $0.refreshLog } }

    /// Refresh tokens presented again after the server had rotated them *and the client had the
    /// answer*: what a correct client never does. (A token whose answer was lost may be presented
    /// again: the client cannot know it was spent.)
    public var presentedAfterAnsweredRotation: [String] {
        state.withLock { $0.presentedAfterAnsweredRotation }
    }

    /// One refresh presentation and what came of it.
    ///
    /// All operations are thread-safe.
    public struct RefreshRecord: Sendable, Hashable, CustomStringConvertible {

        /// What the server did.
        ///
        /// All operations are thread-safe.
        public enum Outcome: Sendable, Hashable {
            /// It rotated the tokens and the client got the answer.
            case rotated
            /// It rotated the tokens but the answer was lost (a scripted loss, or a client that
            /// stopped waiting).
            case rotatedAnswerLost
            /// It did not act: a scripted 503 or 429.
            case notActed
            /// It refused with `invalid_grant` (terminal for the client) and the client got the
            /// answer.
            case rejected
            /// It refused with `invalid_grant`, but the answer was lost.
            case rejectedAnswerLost
            /// It refused with `invalid_client`: a misconfiguration.
            case misconfigured
        }

        /// The refresh token presented.
        public let refreshToken: String

        /// What the server did.
        public let outcome: Outcome

        /// The outcome only: tokens stay out of descriptions.
        public var description: String { "\(outcome)" }
    }

    /// Every token passed to ``revoke(_:kind:)``, in order, unknown ones included.
    public var revokedTokens: [String] { state.withLock { $0.revokedTokens } }

    /// How many times ``credentialState(for:)`` was called, failures included.
    public var credentialStateCount: Int { state.withLock { $0.credentialStateCount } }

    /// The number of token families not revoked.
    public var liveFamilyCount: Int {
        state.withLock { $0.families.values.count { !$0.isRevoked } }
    }

    /// Forgets the counts, the recorded tokens and the device poll times; keeps the users, the
    /// tokens issued, the queued faults and the held refreshes.
    public func reset() {
        state.withLock { state in
            state.obtainCount = 0
            state.presentedRefreshTokens = []
            state.presentedOnce = []
            state.duplicatePresentations = []
            state.refreshLog = []
            state.presentedAfterAnsweredRotation = []
            state.revokedTokens = []
            state.credentialStateCount = 0
            state.devicePollTimes = []
        }
    }

    // MARK: - RemoteAuthService

    /// Signs a user in: grant type `password` (parameters `username`, the user's identifier, and
    /// `password`), `authorization_code` (parameter `code`, from
    /// ``issueAuthorizationCode(for:)``), or a device code's poll (`AuthGrant.deviceCode(_:)`, as
    /// the type's overview says). Counted; the next obtain fault applies first.
    ///
    /// The tokens carry the user; its name, email and profile only on the first issue for that
    /// user (as Sign in with Apple does), its identifier alone afterwards.
    ///
    /// - Parameter grant: The grant.
    /// - Returns: An access and a refresh token of a new family.
    /// - Throws: `RemoteAuthError`: `invalid_grant` (terminal) for a wrong password, an unknown
    ///   user, an unknown or used code; the device flow's answers; `invalid_request` for a
    ///   missing parameter and
    ///   `unsupported_grant_type` for another grant type (misconfigurations); or the fault.
    public func obtainTokens(with grant: AuthGrant) async throws(RemoteAuthError) -> IssuedTokens {
        let now = clock.now
        let result = state.withLock { state -> Result<IssuedTokens, RemoteAuthError> in
            state.obtainCount += 1
            if grant.grantType == AuthGrant.deviceCode("").grantType {
                state.devicePollTimes.append(now)
            }
            let fault = state.obtainFaults.isEmpty ? nil : state.obtainFaults.removeFirst()
            if let fault, fault != .answerLost {
                return .failure(Self.error(for: fault))
            }
            let outcome = Self.signIn(grant, now: now, state: &state)
            return fault == .answerLost ? .failure(RemoteAuthError(.timedOut)) : outcome
        }
        return try result.get()
    }

    /// Presents `refreshToken` for new tokens, in the steps the type's overview lists.
    ///
    /// A live refresh token is spent and replaced when the server rotates (the family's old
    /// access token dies); otherwise only a new access token is issued, the old one dies, and
    /// the answer's refresh token is `nil`. The answer carries no user.
    ///
    /// - Parameters:
    ///   - refreshToken: The refresh token.
    ///   - scope: The scopes to ask for, or `nil` for those of the sign-in; echoed in the answer.
    /// - Returns: The new tokens.
    /// - Throws: `RemoteAuthError`: `invalid_grant` (terminal) for an unknown, spent or revoked
    ///   token, and a spent one revokes its family when ``detectsReuse``; `cancelled` as the
    ///   overview says; or the fault.
    public func refresh(_ refreshToken: String, scope: [String]?) async throws(RemoteAuthError) -> IssuedTokens {
        let latency = self.latency
        if latency > 0 {
            do {
                try await clock.sleep(for: latency)
            } catch {
                throw RemoteAuthError(.cancelled)
            }
        }
        let wasHeld = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let isHeld = state.mutateAndNotify { state in
                state.presentedRefreshTokens.append(refreshToken)
                if !state.presentedOnce.insert(refreshToken).inserted,
                    !state.duplicatePresentations.contains(refreshToken)
                {
                    state.duplicatePresentations.append(refreshToken)
                }
                guard state.holdsRefreshes else { return false }
                state.heldRefreshes.append(continuation)
                return true
            }
            if !isHeld {
                continuation.resume(returning: false)
            }
        }
        let now = clock.now
        let isAnswerLost = wasHeld && Task.isCancelled
        let result = state.withLock { state -> Result<IssuedTokens, RemoteAuthError> in
            let fault = state.refreshFaults.isEmpty ? nil : state.refreshFaults.removeFirst()
            if state.answeredRotations.contains(refreshToken) {
                state.presentedAfterAnsweredRotation.append(refreshToken)
            }
            let result: Result<IssuedTokens, RemoteAuthError>
            if let fault, fault != .answerLost {
                result = .failure(Self.error(for: fault))
            } else {
                let outcome = refresh(refreshToken, scope: scope, now: now, state: &state)
                let lost = fault == .answerLost || isAnswerLost
                result = fault == .answerLost ? .failure(RemoteAuthError(.timedOut)) : outcome
                if case .success = outcome, !lost {
                    state.answeredRotations.insert(refreshToken)
                }
                state.refreshLog.append(
                    RefreshRecord(refreshToken: refreshToken, outcome: Self.outcome(of: outcome, lost: lost))
                )
                return result
            }
            state.refreshLog.append(
                RefreshRecord(refreshToken: refreshToken, outcome: Self.outcome(of: result, lost: false))
            )
            return result
        }
        if isAnswerLost {
            throw RemoteAuthError(.cancelled)
        }
        return try result.get()
    }

    /// Revokes the family of `token`, an access or a refresh token whatever `kind` says.
    /// Counted in ``revokedTokens``; an unknown or revoked token is not an error (RFC 7009).
    ///
    /// - Parameters:
    ///   - token: The token.
    ///   - kind: Ignored: the server knows its tokens.
    public func revoke(_ token: String, kind: TokenKind) async throws(RemoteAuthError) {
        let fault = state.withLock { state -> Fault? in
            let fault = state.revocationFaults.isEmpty ? nil : state.revocationFaults.removeFirst()
            if fault == nil || fault == .answerLost {
                state.revokedTokens.append(token)
                if let id = state.family(of: token) {
                    state.revokeFamily(id)
                }
            }
            return fault
        }
        if let fault { throw Self.error(for: fault) }
    }

    /// The state of the credential behind `session`, after the next credential-state fault if
    /// one is queued. Counted.
    ///
    /// - Parameter session: The session.
    /// - Returns: `.revoked` if the family of its access or refresh token was revoked,
    ///   `.notFound` if the server knows neither token, `.authorized` otherwise.
    /// - Throws: `RemoteAuthError`: the fault only.
    public func credentialState(for session: ManagedSession) async throws(RemoteAuthError) -> CredentialState {
        let result = state.withLock { state -> Result<CredentialState, RemoteAuthError> in
            state.credentialStateCount += 1
            if !state.credentialStateFaults.isEmpty {
                let fault = state.credentialStateFaults.removeFirst()
                return .failure(
                    fault == .unavailable ? RemoteAuthError(.network(code: -1009)) : Self.error(for: fault)
                )
            }
            let families = [session.accessToken, session.refreshToken].compactMap { token in
                token.flatMap(state.family(of:)).flatMap { state.families[$0] }
            }
            if families.isEmpty { return .success(.notFound) }
            return .success(families.contains(where: \.isRevoked) ? .revoked : .authorized)
        }
        return try result.get()
    }

    // MARK: - Description

    /// The number of users, of live families and of requests; never a token.
    public var description: String {
        state.withLock { state in
            "InProcessAuthorizationServer(users: \(state.accounts.count), "
                + "live families: \(state.families.values.count { !$0.isRevoked }), "
                + "sign-ins: \(state.obtainCount), refreshes: \(state.presentedRefreshTokens.count), "
                + "held: \(state.heldRefreshes.count))"
        }
    }

    /// The description only, so `dump` and debuggers never show a token.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description], displayStyle: .class)
    }

    // MARK: - Private

    /// Checks `grant` and starts a family; runs under the lock.
    private static func signIn(
        _ grant: AuthGrant,
        now: Date,
        state: inout State
    ) -> Result<IssuedTokens, RemoteAuthError> {
        let subject: String
        var scope = grant.scope
        switch grant.grantType {
        case "password":
            guard let username = grant.parameters["username"], let password = grant.parameters["password"] else {
                return .failure(oauthError("invalid_request", "username and password are required"))
            }
            guard let account = state.accounts[username], let expected = account.password, expected == password else {
                return .failure(oauthError("invalid_grant", "wrong user name or password"))
            }
            subject = username
        case "authorization_code":
            guard let code = grant.parameters["code"] else {
                return .failure(oauthError("invalid_request", "code is required"))
            }
            guard let owner = state.authorizationCodes.removeValue(forKey: code), state.accounts[owner] != nil else {
                return .failure(oauthError("invalid_grant", "the authorization code is unknown or was used"))
            }
            subject = owner
        case AuthGrant.deviceCode("").grantType:
            switch pollDeviceCode(grant.parameters["device_code"], now: now, state: &state) {
            case .success(let (owner, deviceScope)):
                subject = owner
                scope = deviceScope
            case .failure(let error):
                return .failure(error)
            }
        default:
            return .failure(
                oauthError("unsupported_grant_type", "only password, authorization_code and device_code are supported")
            )
        }
        guard var account = state.accounts[subject] else {
            return .failure(oauthError("invalid_grant", "unknown user"))
        }
        let user = account.hasReceivedProfile ? ManagedUser(identifier: subject) : account.user
        account.hasReceivedProfile = true
        state.accounts[subject] = account

        let family = Family(
            subject: subject,
            scope: scope,
            accessToken: makeToken(prefix: "at-"),
            accessTokenExpiresAt: now.addingTimeInterval(state.accessTokenLifetime),
            refreshToken: makeToken(prefix: "rt-")
        )
        state.nextFamilyID += 1
        let id = state.nextFamilyID
        state.families[id] = family
        state.familyOfAccessToken[family.accessToken] = id
        state.familyOfRefreshToken[family.refreshToken] = id
        return .success(
            IssuedTokens(
                accessToken: family.accessToken,
                refreshToken: family.refreshToken,
                tokenType: "Bearer",
                expiresIn: state.accessTokenLifetime,
                scope: scope,
                user: state.namesUsers ? user : nil
            )
        )
    }

    /// Answers a device-code poll: the approving subject and the scope once approved, else the
    /// RFC 8628 §3.5 error; runs under the lock.
    private static func pollDeviceCode(
        _ code: String?,
        now: Date,
        state: inout State
    ) -> Result<(String, [String]?), RemoteAuthError> {
        guard let code else {
            return .failure(oauthError("invalid_request", "device_code is required"))
        }
        guard var device = state.deviceCodes[code] else {
            return .failure(oauthError("invalid_grant", "unknown device code"))
        }
        defer { state.deviceCodes[code] = device }
        let previous = device.lastPoll
        device.lastPoll = now
        if case .redeemed = device.status {
            return .failure(oauthError("invalid_grant", "the device code was used"))
        }
        if case .expired = device.status {
            return .failure(oauthError("expired_token", "the device code expired"))
        }
        guard now < device.expiresAt else {
            device.status = .expired
            return .failure(oauthError("expired_token", "the device code expired"))
        }
        if case .denied = device.status {
            return .failure(oauthError("access_denied", "the user declined"))
        }
        let tooSoon = previous.map { now.timeIntervalSince($0) < device.interval } ?? false
        if device.scriptedSlowDowns > 0 || tooSoon {
            device.scriptedSlowDowns = max(0, device.scriptedSlowDowns - 1)
            device.interval += 5
            return .failure(oauthError("slow_down", "polled sooner than the interval"))
        }
        guard case .approved(let subject) = device.status else {
            return .failure(oauthError("authorization_pending", "the user has not approved yet"))
        }
        device.status = .redeemed
        return .success((subject, device.scope))
    }

    /// Checks `token` and renews its family's tokens; runs under the lock.
    private func refresh(
        _ token: String,
        scope: [String]?,
        now: Date,
        state: inout State
    ) -> Result<IssuedTokens, RemoteAuthError> {
        guard let id = state.familyOfRefreshToken[token], var family = state.families[id] else {
            return .failure(Self.oauthError("invalid_grant", "unknown refresh token"))
        }
        guard family.refreshToken == token else {
            if detectsReuse {
                state.revokeFamily(id)
            }
            return .failure(Self.oauthError("invalid_grant", "the refresh token was already used"))
        }
        guard !family.isRevoked else {
            return .failure(Self.oauthError("invalid_grant", "the refresh token was revoked"))
        }
        family.accessToken = Self.makeToken(prefix: "at-")
        family.accessTokenExpiresAt = now.addingTimeInterval(state.accessTokenLifetime)
        state.familyOfAccessToken[family.accessToken] = id
        if rotatesRefreshTokens {
            family.refreshToken = Self.makeToken(prefix: "rt-")
            state.familyOfRefreshToken[family.refreshToken] = id
        }
        state.families[id] = family
        return .success(
            IssuedTokens(
                accessToken: family.accessToken,
                refreshToken: rotatesRefreshTokens ? family.refreshToken : nil,
                tokenType: "Bearer",
                expiresIn: state.accessTokenLifetime,
                scope: scope ?? family.scope
            )
        )
    }

    /// What a refresh's `result` means, for ``refreshLog``.
    private static func outcome(of result: Result<IssuedTokens, RemoteAuthError>, lost: Bool) -> RefreshRecord.Outcome {
        switch result {
        case .success: return lost ? .rotatedAnswerLost : .rotated
        case .failure(let error):
            switch error.kind {
            case .terminal: return lost ? .rejectedAnswerLost : .rejected
            case .misconfiguration: return .misconfigured
            case .transient: return .notActed
            }
        }
    }

    /// The error a fault answers with.
    private static func error(for fault: Fault) -> RemoteAuthError {
        switch fault {
        case .unavailable:
            return RemoteAuthError(.httpStatus(503), statusCode: 503)
        case .answerLost:
            return RemoteAuthError(.timedOut)
        case .invalidGrant:
            return oauthError("invalid_grant", "scripted invalid_grant")
        case .invalidClient:
            return RemoteAuthError(
                .server(code: "invalid_client"),
                statusCode: 401,
                serverDescription: "scripted invalid_client"
            )
        case .tooManyRequests(let retryAfter):
            return RemoteAuthError(.httpStatus(429), statusCode: 429, retryAfter: .seconds(retryAfter))
        }
    }

    /// An OAuth error answer with HTTP 400.
    private static func oauthError(_ code: String, _ description: String) -> RemoteAuthError {
        RemoteAuthError(.server(code: code), statusCode: 400, serverDescription: description)
    }

    /// `prefix` and 43 random base64url characters (256 bits).
    private static func makeToken(prefix: String) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let encoded = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return prefix + encoded
    }
}
