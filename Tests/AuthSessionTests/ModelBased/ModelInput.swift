import AuthSessionInterface
import AuthSessionMocks
import Foundation

/// One input of a model-based run: something a provider, the app, the user or time does.
enum ModelInput: Sendable, CustomStringConvertible {
    case fetchingSession
    case sessionFetched(isInitialFetch: Bool)
    case sessionFetchFailed
    case sessionSignIn
    case sessionSignedOut(withError: Bool)
    case sessionUpdated
    case unexpectedError
    /// The provider's session is replaced: `nil` clears it, otherwise it expires this many
    /// seconds from now.
    case setSession(secondsLeft: TimeInterval?)
    case advanceClock(seconds: TimeInterval)
    case setLocalValidation(Bool)
    case setAutoRefresh(Bool)
    case setBiometricEnabled(Bool)
    case setKeptBiometricErrors(Set<BiometricAuthenticationError>)
    case setSignOutBehavior(SignOutMode)
    case activation
    case manualAuthenticationRequest
    case promptOutcome(MockBiometricAuthenticator.Outcome)
    /// The app signs a user in through the provider: a new session, then `sessionSignIn`.
    case appSignsIn(secondsLeft: TimeInterval)
    /// The app calls the provider's `signout()` directly.
    case appSignsOut

    enum SignOutMode: Sendable {
        case publishes
        case throwing
        case silent
    }

    var description: String {
        switch self {
        case .fetchingSession: "publish fetchingSession"
        case .sessionFetched(let initial): "publish sessionFetched(isInitialFetch: \(initial))"
        case .sessionFetchFailed: "publish sessionFetchFailed"
        case .sessionSignIn: "publish sessionSignIn"
        case .sessionSignedOut(let withError): "publish sessionSignedOut(error: \(withError ? "an error" : "nil"))"
        case .sessionUpdated: "publish sessionUpdated"
        case .unexpectedError: "publish unexpectedError"
        case .setSession(let seconds): "provider session \(seconds.map { "expiring in \($0) s" } ?? "cleared")"
        case .advanceClock(let seconds): "clock +\(seconds) s"
        case .setLocalValidation(let value): "allowsLocalSessionValidation = \(value)"
        case .setAutoRefresh(let value): "isSessionAutoRefreshEnabled = \(value)"
        case .setBiometricEnabled(let value): "biometrics enabled = \(value)"
        case .setKeptBiometricErrors(let errors): "keeps session on \(errors.map { "\($0)" }.sorted())"
        case .setSignOutBehavior(let mode): "signout(with:) \(mode)"
        case .activation: "app becomes active"
        case .manualAuthenticationRequest: "requestManualAuthentication()"
        case .promptOutcome(.success): "prompt outcome success"
        case .promptOutcome(.failure(let error)): "prompt outcome failure(.\(error))"
        case .appSignsIn(let seconds): "app signs in (session \(seconds) s)"
        case .appSignsOut: "app calls provider.signout()"
        }
    }

    /// The case name, without payload.
    var kind: String {
        switch self {
        case .fetchingSession: "fetchingSession"
        case .sessionFetched: "sessionFetched"
        case .sessionFetchFailed: "sessionFetchFailed"
        case .sessionSignIn: "sessionSignIn"
        case .sessionSignedOut: "sessionSignedOut"
        case .sessionUpdated: "sessionUpdated"
        case .unexpectedError: "unexpectedError"
        case .setSession: "setSession"
        case .advanceClock: "advanceClock"
        case .setLocalValidation: "setLocalValidation"
        case .setAutoRefresh: "setAutoRefresh"
        case .setBiometricEnabled: "setBiometricEnabled"
        case .setKeptBiometricErrors: "setKeptBiometricErrors"
        case .setSignOutBehavior: "setSignOutBehavior"
        case .activation: "activation"
        case .manualAuthenticationRequest: "manualAuthenticationRequest"
        case .promptOutcome: "promptOutcome"
        case .appSignsIn: "appSignsIn"
        case .appSignsOut: "appSignsOut"
        }
    }

    /// Whether this input is a provider fetch or sign-in event: the only inputs that may leave
    /// `.signedOut`.
    var mayLeaveSignedOut: Bool {
        switch self {
        case .fetchingSession, .sessionFetched, .sessionFetchFailed, .sessionSignIn, .appSignsIn: true
        default: false
        }
    }

    /// What may reach a handle before its launch fetch, in a third of the runs: a few of failed
    /// fetches, sign-outs, a session appearing or vanishing, biometrics switched on, activations,
    /// then the launch fetch and a refresh. Empty for the other runs.
    static func launchPrelude(using generator: inout SeededRandomNumberGenerator) -> [ModelInput] {
        guard Int.random(in: 0..<3, using: &generator) == 0 else { return [] }
        let choices: [ModelInput] = [
            .fetchingSession, .sessionFetchFailed, .sessionSignedOut(withError: false),
            .sessionSignedOut(withError: true),
            .setSession(secondsLeft: 3600), .setSession(secondsLeft: nil), .setBiometricEnabled(true), .activation,
        ]
        var prelude = (0..<Int.random(in: 1...4, using: &generator)).map { _ in
            choices.randomElement(using: &generator)!
        }
        prelude += [.sessionFetched(isInitialFetch: true), .sessionFetched(isInitialFetch: false)]
        return prelude
    }

    /// A random input, weighted towards the ones that move the session.
    static func random(using generator: inout SeededRandomNumberGenerator) -> ModelInput {
        let edges: [TimeInterval] = [30, 119.5, 120, 120.5, 179.5, 180, 180.5, 600, 3600]
        switch Int.random(in: 0..<100, using: &generator) {
        case 0..<6: return .fetchingSession
        case 6..<14: return .sessionFetched(isInitialFetch: Bool.random(using: &generator))
        case 14..<18: return .sessionFetchFailed
        case 18..<22: return .sessionSignIn
        case 22..<26: return .sessionSignedOut(withError: Bool.random(using: &generator))
        case 26..<28: return .sessionUpdated
        case 28..<30: return .unexpectedError
        case 30..<38:
            let clears = Int.random(in: 0..<5, using: &generator) == 0
            return .setSession(secondsLeft: clears ? nil : edges.randomElement(using: &generator)!)
        case 38..<44: return .advanceClock(seconds: [0.5, 1, 30, 60, 1800].randomElement(using: &generator)!)
        case 44..<47: return .setLocalValidation(Bool.random(using: &generator))
        case 47..<49: return .setAutoRefresh(Bool.random(using: &generator))
        case 49..<54: return .setBiometricEnabled(Bool.random(using: &generator))
        case 54..<56:
            let kept = BiometricAuthenticationError.allCases.filter { _ in Bool.random(using: &generator) }
            return .setKeptBiometricErrors(Set(kept))
        case 56..<58:
            return .setSignOutBehavior([.publishes, .publishes, .throwing, .silent].randomElement(using: &generator)!)
        case 58..<72: return .activation
        case 72..<77: return .manualAuthenticationRequest
        case 77..<90:
            if Bool.random(using: &generator) { return .promptOutcome(.success) }
            return .promptOutcome(.failure(BiometricAuthenticationError.allCases.randomElement(using: &generator)!))
        case 90..<95: return .appSignsIn(secondsLeft: edges.randomElement(using: &generator)!)
        default: return .appSignsOut
        }
    }
}
