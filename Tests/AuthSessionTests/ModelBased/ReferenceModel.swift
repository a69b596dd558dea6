import AuthSessionInterface
import AuthSessionMocks
import Foundation

@testable import AuthSession

/// A reference model of the handle, written from the spec's decision trees and the package's
/// documented guarantees, independently of `SessionStateMachine`.
///
/// It tracks the world the test controls (session, clock, provider policies) and the handle's
/// observable state, and lists the delegate callbacks the handle must produce, as tokens:
/// `status a→b`, `fetch initial`, `fetch refresh`, `login`, `logout`, `userUpdate`,
/// `failure <case>`.
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

    // MARK: The handle, as observed

    var status = AuthSessionStatus.syncing
    var isManualAuthenticationRequired = false
    /// A prompt is on screen; `promptMatters` says whether its outcome will be applied.
    var isPromptOnScreen = false
    var promptMatters = false
    var promptsPresented = 0
    var providerSignOutCalls = 0
    var callbacks: [String] = []

    private var pendingProviderSignOuts = 0
    /// Whether a fetch result (success or failure) has arrived: validation waits for one.
    private(set) var hasFetchResult = false
    private var armedByActivation = false
    /// Only the first launch fetch validates.
    private var launchFetchPending = true
    /// Fetch results may not sign in without a prompt: at launch and after every sign-out.
    private var gateClosed = true

    private var secondsLeft: TimeInterval? { expiresAt.map { $0 - now.timeIntervalSince1970 } }

    // MARK: - Inputs

    mutating func apply(_ input: ModelInput) {
        switch input {
        case .fetchingSession:
            move(to: .syncing)
        case .sessionFetched(let initial):
            hasFetchResult = true
            if initial && launchFetchPending {
                launchFetchPending = false
                gateClosed = false
                validate(fromLaunch: true)
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
                armedByActivation = false
            } else if !armedByActivation {
                armedByActivation = true
            } else if !isManualAuthenticationRequired {
                validate(fromLaunch: false)
            }
        case .manualAuthenticationRequest:
            if isManualAuthenticationRequired {
                isManualAuthenticationRequired = false
                validate(fromLaunch: false)
            }
        case .promptOutcome(let outcome):
            guard isPromptOnScreen else { break }
            isPromptOnScreen = false
            guard promptMatters else { break }
            switch outcome {
            case .success:
                // The gate passed; the session is judged as it is now.
                if secondsLeft == nil {
                    move(to: .signedOut)
                } else if secondsLeft! < 120 && !(autoRefresh && !localValidation) {
                    endSession()
                } else {
                    move(to: .signedIn)
                }
            case .failure(let error) where keptErrors.contains(error):
                isManualAuthenticationRequired = true
                move(to: .signedIn)
                callbacks.append("failure biometricAuthFailure")
            case .failure:
                endSession()
            }
        case .appSignsOut:
            providerSignOut()
        }
        // The provider is called after the step, outside the handle's lock: its own callbacks
        // come after the step's.
        while pendingProviderSignOuts > 0 {
            pendingProviderSignOuts -= 1
            providerSignOut(askedByHandle: true)
        }
    }

    // MARK: - Decision trees

    private mutating func validate(fromLaunch: Bool) {
        guard hasFetchResult else { return }
        if status == .signedOut && !fromLaunch { return }
        guard let secondsLeft else {
            move(to: .signedOut)
            return
        }
        if isPromptOnScreen && promptMatters { return }
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

    private mutating func evaluateAfterFetch() {
        guard let secondsLeft else {
            move(to: .signedOut)
            return
        }
        let providerRefreshes = !localValidation && autoRefresh
        if !providerRefreshes && secondsLeft < 120 {
            endSession()
        } else if isPromptOnScreen && promptMatters {
            return
        } else if gateClosed && biometricEnabled {
            presentPrompt()
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
        if newStatus == .signedOut {
            promptMatters = false
            gateClosed = true
        }
        status = newStatus
    }

    private mutating func presentPrompt() {
        if !isPromptOnScreen {
            promptsPresented += 1  // otherwise the prompt still up is reused
        }
        isPromptOnScreen = true
        promptMatters = true
        gateClosed = false
        launchFetchPending = false
        isManualAuthenticationRequired = false
        armedByActivation = false
        move(to: .biometricAuthentication)
    }

    private mutating func signIn() {
        if mutation == .ignoresSignIn { return }
        launchFetchPending = false
        gateClosed = false
        isManualAuthenticationRequired = false
        promptMatters = false
        move(to: .signedIn)
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

    private mutating func providerSignOut(askedByHandle: Bool = false) {
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
