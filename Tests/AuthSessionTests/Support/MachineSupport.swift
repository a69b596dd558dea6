import AuthSessionInterface
import Foundation

@testable import AuthSession

/// A snapshot with a session expiring in `expiresIn` seconds (`nil`: no session).
func snapshot(
    expiresIn: TimeInterval? = 3600,
    localValidation: Bool = true,
    autoRefresh: Bool = false,
    biometric: Bool = false
) -> SessionSnapshot {
    SessionSnapshot(
        session: expiresIn.map {
            SessionSnapshot.Expiry(expiresIn: max($0, 0), isSessionExpired: $0 < 120)
        },
        allowsLocalSessionValidation: localValidation,
        isSessionAutoRefreshEnabled: autoRefresh,
        canPerformAuthentication: biometric
    )
}

extension SessionAction {

    /// A compact, comparable rendering: `status(syncing→signedIn)`, `prompt(#1)`, …
    var summary: String {
        switch self {
        case .notify(let notification): notification.summary
        case .presentBiometricPrompt(let id): "prompt(\(id))"
        case .cancelBiometricPrompt(let id): "cancelPrompt(\(id))"
        case .signOut(.sessionExpired): "signOut(sessionExpired)"
        case .signOut(.biometricFailure(let error)): "signOut(biometric.\(error))"
        }
    }
}

extension SessionNotification {

    var summary: String {
        switch self {
        case .observationStarted(let status): "observing(\(status))"
        case .statusChanged(let from, let to): "status(\(from)→\(to))"
        case .fetchCompleted(let isInitialFetch): "fetched(\(isInitialFetch ? "initial" : "refresh"))"
        case .login: "login"
        case .logout(nil): "logout(nil)"
        case .logout(let error?): "logout(\(type(of: error)))"
        case .userUpdated: "userUpdate"
        case .failure(let error): "failure(\(error.caseName))"
        }
    }
}

extension Array where Element == SessionAction {
    var summaries: [String] { map(\.summary) }
}

/// Ways to put a fresh machine into each resting status, using inputs only.
enum MachineFixture {

    /// A machine that completed its launch fetch and rests in `status`.
    ///
    /// `.biometricAuthentication` has prompt #1 on screen.
    static func ready(in status: AuthSessionStatus) -> SessionStateMachine {
        var machine = SessionStateMachine()
        switch status {
        case .syncing:
            _ = machine.sessionFetched(isInitialFetch: true, snapshot: snapshot())
            _ = machine.fetchingSession()
        case .signedIn:
            _ = machine.sessionFetched(isInitialFetch: true, snapshot: snapshot())
        case .signedOut:
            _ = machine.sessionFetched(isInitialFetch: true, snapshot: snapshot(expiresIn: nil))
        case .biometricAuthentication:
            _ = machine.sessionFetched(isInitialFetch: true, snapshot: snapshot(biometric: true))
        case .validating:
            preconditionFailure("validating is transient")
        }
        precondition(machine.status == status)
        return machine
    }

    /// A machine that completed its launch fetch, was armed by a first activation, and rests in
    /// `status`, so the next activation validates.
    static func armed(in status: AuthSessionStatus) -> SessionStateMachine {
        var machine = ready(in: status)
        if status == .biometricAuthentication {
            return machine
        }
        _ = machine.applicationDidBecomeActive(snapshot: snapshot())
        precondition(machine.allowsSessionValidationFromNotifications)
        return machine
    }

    /// Signed in after a biometric failure the provider kept the session on.
    static func manualAuthenticationRequired() -> SessionStateMachine {
        var machine = ready(in: .biometricAuthentication)
        let id = machine.biometricPrompt!.id
        _ = machine.biometricPromptCompleted(
            id,
            result: .failure(.canceledByUser),
            snapshot: snapshot(),
            allowsSigningOut: false
        )
        precondition(machine.isManualAuthenticationRequired && machine.status == .signedIn)
        return machine
    }
}
