import AuthSessionInterface
import AuthSessionMocks
import Foundation

@testable import AuthSession

/// A reference model of the handle, written from the documented decision tables and guarantees
/// ("How the handle decides"), independently of `SessionStateMachine`.
///
/// It tracks the world the test controls (session, clock, provider policies) and the handle's
/// observable state, and lists the delegate callbacks the handle must produce, as tokens:
/// `status a→b`, `fetch initial`, `fetch refresh`, `login`, `logout`, `userUpdate`,
/// `failure <case>`.
///
/// The model describes the handle once each input has settled: a prompt the input abandoned
/// (a sign-out or a sign-in while it was up) has been taken down and its outcome ignored.
struct ReferenceModel {

    /// A deliberate defect, to prove the harness catches a model and a handle that disagree.
    enum Mutation {
        case ignoresSignIn
    }

    var mutation: Mutation?

    // MARK: The world

    var now = ManualClock.defaultStart
    var expiresAt: TimeInterval? = ManualClock.defaultStart.timeIntervalSince1970 + 3600
    var localValidation = true
    var autoRefresh = false
    var biometricEnabled = false
    var keptErrors: Set<BiometricAuthenticationError> = []
    var signOutMode = ModelInput.SignOutMode.publishes
    /// Whether activations come from an app lifecycle (launch included) or not (the launch counts
    /// as the first, and a finished prompt re-arms).
    let hasApplicationLifecycle: Bool

    // MARK: The handle, as observed

    var status = AuthSessionStatus.syncing
    var isManualAuthenticationRequired = false
    /// A prompt whose outcome will decide the status is on screen.
    private(set) var isPromptOnScreen = false
    /// The last input abandoned a prompt: the harness lets the handle take it down.
    private(set) var abandonedPrompt = false
    var promptsPresented = 0
    var providerSignOutCalls = 0
    var callbacks: [String] = []

    /// Sign-outs the handle decided in the current step; the provider is asked after the step.
    private var pendingProviderSignOuts = 0
    /// A fetch result (success or failure) has arrived: validation waits for one.
    private(set) var hasFetchResult = false
    /// The next activation revalidates (the first one, and the first after a prompt, only arm).
    private var armedByActivation: Bool
    /// Only the first `sessionFetched(isInitialFetch: true)` runs the launch validation.
    private var launchFetchPending = true
    /// The biometric gate: closed at launch and on every entry into signedOut; open once signed in
    /// or prompted.
    private var gateClosed = true

    init(hasApplicationLifecycle: Bool = true) {
        self.hasApplicationLifecycle = hasApplicationLifecycle
        armedByActivation = !hasApplicationLifecycle
    }

    private var secondsLeft: TimeInterval? { expiresAt.map { $0 - now.timeIntervalSince1970 } }
    private var providerRefreshes: Bool { !localValidation && autoRefresh }

    // MARK: - Inputs

    mutating func apply(_ input: ModelInput) {
        abandonedPrompt = false
        switch input {
        case .fetchingSession:
            move(to: .syncing)
        case .sessionFetched(let initial):
            hasFetchResult = true
            if initial && launchFetchPending {
                launchFetchPending = false
                validate(trigger: .launch)
            } else {
                evaluateAfterFetch()
            }
            callbacks.append(initial ? "fetch initial" : "fetch refresh")
        case .sessionFetchFailed:
            hasFetchResult = true
            evaluateAfterFetch()
            callbacks.append("failure sessionFetchFailed")
        case .sessionSignIn:
            signIn()
        case .appSignsIn(let seconds):
            expiresAt = now.timeIntervalSince1970 + seconds
            signIn()
        case .sessionSignedOut:
            signedOutEvent()
        case .sessionUpdated:
            callbacks.append("userUpdate")
        case .unexpectedError:
            callbacks.append("failure sessionMalformed")
        case .setSession(let seconds):
            expiresAt = seconds.map { now.timeIntervalSince1970 + $0 }
        case .advanceClock(let seconds):
            now = now.addingTimeInterval(seconds)
        case .setLocalValidation(let value):
            localValidation = value
        case .setAutoRefresh(let value):
            autoRefresh = value
        case .setBiometricEnabled(let value):
            biometricEnabled = value
        case .setKeptBiometricErrors(let errors):
            keptErrors = errors
        case .setSignOutBehavior(let mode):
            signOutMode = mode
        case .activation:
            if isPromptOnScreen {
                armedByActivation = false  // the prompt itself moves the app through inactive
            } else if !armedByActivation {
                armedByActivation = true
            } else if !isManualAuthenticationRequired {
                validate(trigger: .activation)
            }
        case .manualAuthenticationRequest:
            if isManualAuthenticationRequired {
                isManualAuthenticationRequired = false
                validate(trigger: .manualRequest)
            }
        case .promptOutcome(let outcome):
            guard isPromptOnScreen else { break }
            promptFinished()
            switch outcome {
            case .success:
                // The gate passed; the session is judged as it is now.
                if let secondsLeft {
                    if secondsLeft < 120 && !providerRefreshes {
                        endSession()
                    } else {
                        move(to: .signedIn)
                    }
                } else {
                    move(to: .signedOut)
                }
            case .failure(let error) where keptErrors.contains(error):
                isManualAuthenticationRequired = true
                move(to: .signedIn)
                callbacks.append("failure biometricAuthFailure")
            case .failure:
                endSession()
            }
        case .appSignsOut:
            providerSignOut(askedByHandle: false)
        }
        // The provider is called after the step, outside the handle's lock; what it publishes
        // is applied next, before the input's call returns.
        while pendingProviderSignOuts > 0 {
            pendingProviderSignOuts -= 1
            providerSignOut(askedByHandle: true)
        }
    }

    // MARK: - Decision tables (the article "The session lifecycle")

    private enum Trigger {
        case launch
        case activation
        case manualRequest
    }

    /// Local validation: launch, foreground, "Try again".
    private mutating func validate(trigger: Trigger) {
        guard hasFetchResult else { return }  // nothing before the first fetch result
        if status == .signedOut && trigger != .launch { return }  // never leaves signedOut
        guard let secondsLeft else {
            move(to: .signedOut)
            return
        }
        if isPromptOnScreen { return }  // the prompt on screen decides
        if localValidation {
            guard status == .signedIn || status == .syncing else { return }
            move(to: .validating)
            if max(secondsLeft, 0) <= 180 {
                endSession()
            } else if biometricEnabled {
                presentPrompt()
            } else {
                move(to: .signedIn)
            }
        } else if biometricEnabled {
            presentPrompt()
        } else if status == .syncing {
            move(to: .signedIn)
        }
    }

    /// Post-fetch evaluation: refreshes and failed fetches.
    private mutating func evaluateAfterFetch() {
        guard let secondsLeft else {
            move(to: .signedOut)
            return
        }
        if !providerRefreshes && secondsLeft < 120 {
            endSession()
        } else if isPromptOnScreen {
            return
        } else if gateClosed && biometricEnabled {
            presentPrompt()  // the gate: never signed in past Face ID
        } else {
            move(to: .signedIn)
        }
    }

    // MARK: - Effects

    private mutating func move(to newStatus: AuthSessionStatus) {
        guard newStatus != status else { return }
        callbacks.append("status \(status)→\(newStatus)")
        if status == .validating || newStatus == .signedOut {
            isManualAuthenticationRequired = false
        }
        status = newStatus
        switch newStatus {
        case .signedOut:
            gateClosed = true
            abandonPrompt()
        case .signedIn:
            gateClosed = false
        default:
            break
        }
    }

    private mutating func presentPrompt() {
        launchFetchPending = false
        gateClosed = false
        isManualAuthenticationRequired = false
        armedByActivation = false
        move(to: .biometricAuthentication)
        promptsPresented += 1
        isPromptOnScreen = true
    }

    /// The prompt is dismissed (answered, or taken down): without an app lifecycle nothing else
    /// will re-arm revalidation.
    private mutating func promptFinished() {
        isPromptOnScreen = false
        if !hasApplicationLifecycle {
            armedByActivation = true
        }
    }

    /// The session the prompt gated is over: the handle takes the prompt down; its outcome
    /// counts for nothing.
    private mutating func abandonPrompt() {
        guard isPromptOnScreen else { return }
        promptFinished()
        abandonedPrompt = true
    }

    private mutating func signIn() {
        if mutation == .ignoresSignIn { return }
        launchFetchPending = false
        isManualAuthenticationRequired = false
        move(to: .signedIn)
        abandonPrompt()
        callbacks.append("login")
    }

    private mutating func signedOutEvent() {
        isManualAuthenticationRequired = false
        move(to: .signedOut)
        callbacks.append("logout")
    }

    /// The handle ends the session: signed out now, the provider asked after the step.
    private mutating func endSession() {
        move(to: .signedOut)
        pendingProviderSignOuts += 1
    }

    private mutating func providerSignOut(askedByHandle: Bool) {
        providerSignOutCalls += 1
        switch signOutMode {
        case .publishes:
            expiresAt = nil
            signedOutEvent()
        case .silent:
            expiresAt = nil
        case .throwing:
            if askedByHandle {
                callbacks.append("failure signingOutFailure")
            }
        }
    }
}
