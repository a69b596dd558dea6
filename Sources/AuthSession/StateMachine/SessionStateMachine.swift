import AuthSessionInterface
import Foundation

/// The decisions of an `AuthSessionHandle`, with no locks, clocks or I/O.
///
/// The machine owns every mutable scalar of a handle. Each input is a method that takes what it
/// needs of the world (a ``SessionSnapshot`` read by the caller before the step) and returns the
/// ``SessionAction``s to perform, in order. The handle runs one input per lock acquisition and
/// performs the actions after releasing the lock.
///
/// The decision trees are those of the primary spec (event table, local validation, post-fetch
/// evaluation, biometric failure policy, manual-authentication flag lifetime, first-activation
/// deferral) with these rules on top:
/// - at most one biometric prompt is on screen; a trigger while one is up presents nothing;
/// - a prompt belongs to the session it was presented for: a sign-out or sign-in abandons it (the
///   handle cancels it) and its outcome changes nothing, so a late success never signs anyone
///   in. An abandoned prompt is never reused: a decision that needs a prompt while one is still
///   being taken down waits for it to go, then presents a new one;
/// - a prompt's success re-evaluates the session as it is then (gone or expired while the prompt
///   was up: signed out), rather than signing in unconditionally;
/// - an activation or a manual-authentication request never leaves `.signedOut`; only provider
///   fetch and sign-in events do;
/// - the biometric gate: closed at launch and every time the status enters `.signedOut`; while
///   it is closed, a decision that would move to `.signedIn` while biometrics are required
///   presents the prompt instead. It opens only when the status reaches `.signedIn` (through a
///   prompt's outcome, an interactive sign-in, or a decision taken while biometrics were not
///   required) or a prompt is presented. A failed, repeated or out-of-order launch fetch, or a
///   refresh after a sign-out, cannot skip Face ID;
/// - only the first `sessionFetched(isInitialFetch: true)` runs the launch validation; a repeat
///   is evaluated like a refresh, so a duplicated launch fetch cannot prompt twice;
/// - when the handle decides the session must end (expired, or a biometric failure the provider
///   signs out on), it moves to `.signedOut` at once and then asks the provider to sign out, so
///   a slow, silent or failing provider cannot leave the user signed in or stuck loading.
///
/// Not thread-safe: the handle serialises access with its lock.
struct SessionStateMachine {

    /// Sessions expiring within this many seconds are signed out by local validation.
    static let localValidationExpiryThreshold: TimeInterval = 180

    /// A prompt presented and not yet finished, and whether its outcome still matters.
    struct BiometricPrompt: Hashable {
        var id: BiometricPromptID
        /// `false` once the session it gated ended or was replaced by a sign-in: the prompt is
        /// being cancelled and its outcome will be ignored.
        var isRelevant: Bool
    }

    /// What starts a local validation; activations and manual requests may not leave `.signedOut`.
    enum ValidationTrigger {
        case launchFetch
        case activation
        case manualRequest
    }

    /// Whether the platform reports activations itself, the launch and a prompt's dismissal
    /// included (UIKit, AppKit). Where it does not (a command-line client), the launch counts as
    /// the first activation and every finished prompt re-arms revalidation.
    let hasApplicationLifecycle: Bool

    private(set) var status: AuthSessionStatus = .syncing
    /// `false` until the first `sessionFetched` or `sessionFetchFailed`: validation before that
    /// would race the launch fetch and show a false `.signedOut`.
    private(set) var isSessionReadyToValidate = false
    /// First-activation deferral: the first activation (and the first after a prompt) only sets
    /// this; later activations validate. Forced off while a prompt is on screen.
    private(set) var allowsSessionValidationFromNotifications: Bool
    /// Set when a biometric failure kept the session; pauses validation from activations.
    private(set) var isManualAuthenticationRequired = false
    /// `true` until the first `sessionFetched(isInitialFetch: true)`, a prompt or a sign-in:
    /// only that fetch runs the launch validation, and never after the gate has been passed.
    private(set) var isLaunchValidationPending = true
    /// The biometric gate: `true` at launch and from every entry into `.signedOut` until the
    /// status reaches `.signedIn` or a prompt is presented. While it is `true`, no decision moves
    /// to `.signedIn` when biometrics are required.
    private(set) var isBiometricGatePending = true
    /// The prompt presented and not yet finished, whether or not its outcome still matters.
    private(set) var biometricPrompt: BiometricPrompt?
    /// A decision needs a prompt while an abandoned one is still being taken down: it is presented
    /// as soon as that one finishes.
    private(set) var isPromptDeferred = false
    private var lastPromptID = BiometricPromptID(rawValue: 0)

    /// - Parameter hasApplicationLifecycle: Whether the platform reports activations itself.
    init(hasApplicationLifecycle: Bool = true) {
        self.hasApplicationLifecycle = hasApplicationLifecycle
        allowsSessionValidationFromNotifications = !hasApplicationLifecycle
    }

    /// Whether a biometric prompt is on screen, being taken down, or about to be presented.
    var isBiometricAuthenticationInProcess: Bool { biometricPrompt != nil || isPromptDeferred }

    /// Whether a prompt whose outcome will decide the status is on screen or about to be; the
    /// decision trees wait for it. An abandoned prompt does not count.
    var isAwaitingBiometricOutcome: Bool { biometricPrompt?.isRelevant == true || isPromptDeferred }

    // MARK: - Inputs

    /// `fetchingSession`: a fetch or refresh started.
    mutating func fetchingSession() -> [SessionAction] {
        var actions = SessionAction.list()
        setStatus(.syncing, &actions)
        return actions
    }

    /// `sessionFetched`: the first launch fetch runs the local validation; every other fetch
    /// runs the post-fetch evaluation.
    mutating func sessionFetched(isInitialFetch: Bool, snapshot: SessionSnapshot) -> [SessionAction] {
        var actions = SessionAction.list()
        isSessionReadyToValidate = true
        if isInitialFetch && isLaunchValidationPending {
            isLaunchValidationPending = false
            validateLocalSessionOrAuthenticateIfNeeded(snapshot, trigger: .launchFetch, &actions)
        } else {
            handleSessionStatusOnceFetched(snapshot, &actions)
        }
        actions.append(.notify(.fetchCompleted(isInitialFetch: isInitialFetch)))
        return actions
    }

    /// `sessionFetchFailed`: the session the provider still has is re-evaluated, so a network
    /// blip does not sign a user out.
    mutating func sessionFetchFailed(_ error: any Error, snapshot: SessionSnapshot) -> [SessionAction] {
        var actions = SessionAction.list()
        isSessionReadyToValidate = true
        handleSessionStatusOnceFetched(snapshot, &actions)
        actions.append(.notify(.failure(.sessionFetchFailed(error: error))))
        return actions
    }

    /// `sessionSignIn`: the user authenticated interactively, which also settles the launch gate,
    /// any pending manual authentication, and any prompt of the session before.
    mutating func sessionSignIn() -> [SessionAction] {
        var actions = SessionAction.list()
        isLaunchValidationPending = false
        isManualAuthenticationRequired = false
        setStatus(.signedIn, &actions)
        abandonBiometricPrompt(&actions)
        actions.append(.notify(.login))
        return actions
    }

    /// `sessionSignedOut`: exactly one logout notification per event, even when already signed out.
    mutating func sessionSignedOut(error: (any Error)?) -> [SessionAction] {
        var actions = SessionAction.list()
        isManualAuthenticationRequired = false
        setStatus(.signedOut, &actions)
        actions.append(.notify(.logout(error: error)))
        return actions
    }

    /// After the handle dropped an event (published from inside the read made for an echo): the
    /// provider read afresh. A provider with no session while the status still stands for one
    /// (signed in, validating, at the biometric prompt) signed out in an event that was dropped:
    /// that sign-out is applied now, with its one logout. Anything else stays as it is: a session
    /// the status does not stand for yet waits for the provider's own events (a fetch, a
    /// sign-in), which decide its validation and its prompt.
    mutating func reconcile(hasSession: Bool) -> [SessionAction] {
        guard !hasSession else { return [] }
        switch status {
        case .signedIn, .validating, .biometricAuthentication:
            return sessionSignedOut(error: nil)
        case .signedOut, .syncing:
            return []
        }
    }

    /// `sessionUpdated`: observers hear about it; the status does not change.
    func sessionUpdated(_ session: (any AuthSessionProtocol)?) -> [SessionAction] {
        [.notify(.userUpdated(session))]
    }

    /// `unexpectedError`: observers hear about it; the status does not change.
    func unexpectedError(_ error: AuthSessionError) -> [SessionAction] {
        [.notify(.failure(error))]
    }

    /// The app became active.
    mutating func applicationDidBecomeActive(snapshot: SessionSnapshot) -> [SessionAction] {
        var actions = SessionAction.list()
        if isBiometricAuthenticationInProcess {
            // The prompt itself moves the app through inactive and active: never revalidate then.
            allowsSessionValidationFromNotifications = false
        } else if !allowsSessionValidationFromNotifications {
            allowsSessionValidationFromNotifications = true
        } else if !isManualAuthenticationRequired {
            validateLocalSessionOrAuthenticateIfNeeded(snapshot, trigger: .activation, &actions)
        }
        return actions
    }

    /// The UI asked to resume validation after a biometric failure that kept the session.
    mutating func requestManualAuthentication(snapshot: SessionSnapshot) -> [SessionAction] {
        guard isManualAuthenticationRequired else { return [] }
        isManualAuthenticationRequired = false
        var actions = SessionAction.list()
        validateLocalSessionOrAuthenticateIfNeeded(snapshot, trigger: .manualRequest, &actions)
        return actions
    }

    /// The biometric prompt `id` finished.
    ///
    /// - Parameters:
    ///   - snapshot: The world when the outcome arrived: a success re-evaluates the session.
    ///   - allowsSigningOut: The provider's policy answer for the failure, if it failed.
    mutating func biometricPromptCompleted(
        _ id: BiometricPromptID,
        result: Result<Void, BiometricAuthenticationError>,
        snapshot: SessionSnapshot,
        allowsSigningOut: Bool
    ) -> [SessionAction] {
        guard let prompt = biometricPrompt, prompt.id == id else { return [] }
        biometricPrompt = nil
        var actions = SessionAction.list()
        if isPromptDeferred {
            // The abandoned prompt is gone: the one a decision asked for meanwhile goes up now.
            isPromptDeferred = false
            startBiometricPrompt(&actions)
            return actions
        }
        if !hasApplicationLifecycle {
            // No activation will follow the prompt's dismissal to re-arm revalidation.
            allowsSessionValidationFromNotifications = true
        }
        guard prompt.isRelevant else { return actions }
        switch result {
        case .success:
            if snapshot.session == nil {
                setStatus(.signedOut, &actions)
            } else if snapshot.session?.isSessionExpired == true && !snapshot.trustsProviderRefresh {
                signOut(.sessionExpired, &actions)
            } else {
                setStatus(.signedIn, &actions)
            }
        case .failure(let error) where allowsSigningOut:
            signOut(.biometricFailure(error), &actions)
        case .failure(let error):
            isManualAuthenticationRequired = true
            setStatus(.signedIn, &actions)
            actions.append(.notify(.failure(.biometricAuthFailure(error: error))))
        }
        return actions
    }

    /// The provider's `signout(with:)` threw. The status stays `.signedOut`.
    func signOutFailed(_ error: any Error) -> [SessionAction] {
        [.notify(.failure(.signingOutFailure(error: error)))]
    }

    // MARK: - Transitions shared by the decision trees

    /// Moves to `newStatus` (if it differs) and applies the flag lifetimes tied to transitions.
    mutating func setStatus(_ newStatus: AuthSessionStatus, _ actions: inout [SessionAction]) {
        guard newStatus != status else { return }
        let oldStatus = status
        status = newStatus
        if oldStatus == .validating || newStatus == .signedOut {
            isManualAuthenticationRequired = false
        }
        actions.append(.notify(.statusChanged(from: oldStatus, to: newStatus)))
        switch newStatus {
        case .signedOut:
            abandonBiometricPrompt(&actions)
            isBiometricGatePending = true
        case .signedIn:
            isBiometricGatePending = false
        case .syncing, .validating, .biometricAuthentication:
            break
        }
    }

    /// Ends the session now and asks the provider to sign out.
    mutating func signOut(_ reason: SignOutReason, _ actions: inout [SessionAction]) {
        setStatus(.signedOut, &actions)
        actions.append(.signOut(reason))
    }

    /// Gates the session behind a biometric prompt: presents one, or, while an abandoned one is
    /// still being taken down, presents it as soon as that one is gone.
    ///
    /// Only called when no prompt whose outcome matters is up (the decision trees wait for that
    /// one instead).
    mutating func presentBiometricPrompt(_ actions: inout [SessionAction]) {
        assert(!isAwaitingBiometricOutcome, "a decision needed a prompt while one still decides")
        isLaunchValidationPending = false
        isBiometricGatePending = false
        isManualAuthenticationRequired = false
        allowsSessionValidationFromNotifications = false
        setStatus(.biometricAuthentication, &actions)
        if biometricPrompt != nil {
            isPromptDeferred = true
        } else {
            startBiometricPrompt(&actions)
        }
    }

    /// A new prompt, to be presented by the handle.
    private mutating func startBiometricPrompt(_ actions: inout [SessionAction]) {
        lastPromptID = BiometricPromptID(rawValue: lastPromptID.rawValue + 1)
        biometricPrompt = BiometricPrompt(id: lastPromptID, isRelevant: true)
        actions.append(.presentBiometricPrompt(lastPromptID))
    }

    /// The session the prompt gates has ended or been replaced: its outcome no longer matters, and
    /// the handle takes it down. A prompt waiting to be presented is dropped.
    private mutating func abandonBiometricPrompt(_ actions: inout [SessionAction]) {
        isPromptDeferred = false
        if let prompt = biometricPrompt, prompt.isRelevant {
            biometricPrompt?.isRelevant = false
            actions.append(.cancelBiometricPrompt(prompt.id))
        }
    }
}

/// Identifies one biometric prompt, so that a late outcome can be told from the current one.
struct BiometricPromptID: Hashable, Sendable, CustomStringConvertible {
    let rawValue: UInt64

    var description: String { "#\(rawValue)" }
}

/// What the world looked like when an input was applied, read outside the lock just before.
struct SessionSnapshot: Hashable, Sendable {

    /// The expiry of the provider's session.
    struct Expiry: Hashable, Sendable {
        /// Seconds left, never negative (`AuthSessionProtocol.expiresIn(at:)`).
        var expiresIn: TimeInterval
        /// Within the 120 s buffer (`AuthSessionProtocol.isSessionExpired(at:)`).
        var isSessionExpired: Bool
    }

    /// The session's expiry, or `nil` when the provider has no session.
    var session: Expiry?
    var allowsLocalSessionValidation: Bool
    var isSessionAutoRefreshEnabled: Bool
    var canPerformAuthentication: Bool

    /// Local validation off and the provider refreshing itself: expiry is the provider's business.
    var trustsProviderRefresh: Bool { !allowsLocalSessionValidation && isSessionAutoRefreshEnabled }

    /// What an input that decides nothing from the world is given: no session, every policy off.
    static let unread = SessionSnapshot(
        session: nil,
        allowsLocalSessionValidation: false,
        isSessionAutoRefreshEnabled: false,
        canPerformAuthentication: false
    )
}

/// Why the handle asks the provider to sign out.
enum SignOutReason: Hashable, Sendable {
    case sessionExpired
    case biometricFailure(BiometricAuthenticationError)

    /// The error handed to `AuthSessionProviderProtocol.signout(with:)` and to observers.
    var error: any Error {
        switch self {
        case .sessionExpired: AuthSessionError.sessionExpired
        case .biometricFailure(let error): error
        }
    }
}

/// Something the handle must do after a step, outside its lock.
enum SessionAction: Sendable {

    /// An empty list with room for a step's usual actions, so that appending does not reallocate.
    static func list() -> [SessionAction] {
        var actions: [SessionAction] = []
        actions.reserveCapacity(4)
        return actions
    }

    /// Tell every observer.
    case notify(SessionNotification)
    /// Ask the biometric authenticator; report the outcome with the same id.
    case presentBiometricPrompt(BiometricPromptID)
    /// Take the prompt down: its session ended. Its outcome is still reported, and ignored.
    case cancelBiometricPrompt(BiometricPromptID)
    /// Call the provider's `signout(with:)`.
    case signOut(SignOutReason)
}

/// One observer callback, before it is shaped for delegates, publishers or streams.
enum SessionNotification: Sendable {
    /// A subscriber joined; delivered to that subscriber only, before anything else.
    case observationStarted(AuthSessionStatus)
    case statusChanged(from: AuthSessionStatus, to: AuthSessionStatus)
    case fetchCompleted(isInitialFetch: Bool)
    case login
    case logout(error: (any Error)?)
    case userUpdated((any AuthSessionProtocol)?)
    case failure(AuthSessionError)
}
