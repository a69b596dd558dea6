import AuthSessionInterface
import Foundation

// Every error of the manager and of the client speaks to the person using the app through its
// `AuthProblem`: `errorDescription` is the problem's message and `recoverySuggestion` what to
// do. Neither ever quotes the server, a path or a token; the developer's detail is in
// `description`.

extension RemoteAuthError: LocalizedError {

    /// What went wrong, as the person using the app would put it.
    public var problem: AuthProblem {
        switch reason {
        case .network(let code):
            // Not connected, roaming off, data not allowed; every other failure reaches no server.
            return [-1009, -1018, -1020].contains(code) ? .offline : .serverNotResponding
        case .timedOut:
            return .serverNotResponding
        case .httpStatus:
            return kind == .transient ? .serverNotResponding : .appMisconfigured
        case .server(let code):
            switch code {
            case "invalid_grant":
                // The grant is refused: a wrong password, a spent refresh token, a used code.
                switch grantType {
                case "password": return .wrongCredentials
                case "refresh_token": return .sessionEnded
                default: return .signInFailed
                }
            case "access_denied": return .signInDeclined
            case "expired_token": return .signInExpired
            case "authorization_pending", "slow_down": return .approvalPending
            case "invalid_token": return .sessionEnded
            default:
                switch kind {
                case .transient: return .serverNotResponding
                case .terminal: return .sessionEnded
                case .misconfiguration: return .appMisconfigured
                }
            }
        case .invalidResponse, .responseTooLarge:
            return .serverError
        case .invalidIDToken(let error):
            return error.problem
        case .unsupportedTokenType, .unsupported:
            return .appMisconfigured
        case .cancelled:
            return .cancelled
        case .accessTokenRejected:
            return .sessionEnded
        }
    }

    /// The person's message: ``problem``'s, through ``AuthProblem/localizer``.
    public var errorDescription: String? { problem.message }

    /// What the person can do: ``problem``'s suggestion.
    public var recoverySuggestion: String? { problem.recoverySuggestion }
}

extension RemoteAuthError {

    /// Equal when everything but ``grantType`` is.
    public static func == (lhs: RemoteAuthError, rhs: RemoteAuthError) -> Bool {
        lhs.reason == rhs.reason && lhs.statusCode == rhs.statusCode && lhs.serverDescription == rhs.serverDescription
            && lhs.retryAfter == rhs.retryAfter
    }

    /// Hashes everything but ``grantType``.
    ///
    /// - Parameter hasher: The hasher.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(reason)
        hasher.combine(statusCode)
        hasher.combine(serverDescription)
        hasher.combine(retryAfter)
    }

    /// The same error, naming the grant its token request presented (see ``grantType``).
    func presenting(grantType: String) -> RemoteAuthError {
        var error = self
        error.grantType = grantType
        return error
    }
}

extension IDTokenValidationError: LocalizedError {

    /// What went wrong, as the person using the app would put it: a time claim off is the
    /// device's clock; the rest is the app's setup, or (another subject) an ended session.
    public var problem: AuthProblem {
        switch self {
        case .expired, .issuedInFuture, .notYetValid: .deviceClockWrong
        case .subjectMismatch: .sessionEnded
        case .unknownSigningKey: .serverError
        case .malformed, .missingClaim, .issuerMismatch, .audienceMismatch, .authorizedPartyMismatch, .nonceMismatch,
            .unsupportedAlgorithm, .keyAlgorithmMismatch, .invalidSignature:
            .appMisconfigured
        }
    }

    /// The person's message: ``problem``'s.
    public var errorDescription: String? { problem.message }

    /// What the person can do: ``problem``'s suggestion.
    public var recoverySuggestion: String? { problem.recoverySuggestion }
}

extension SessionStoreError {

    /// What went wrong, as the person using the app would put it.
    public var problem: AuthProblem {
        switch self {
        case .unavailable: .storageUnavailable
        case .missingEntitlement, .issuedToAnotherClient: .appMisconfigured
        case .corrupt, .unsupportedFormatVersion, .insecurePermissions, .foreignOwner, .symbolicLink,
            .notARegularFile, .io, .keychain:
            .storageFailed
        }
    }
}

extension ManagedSessionError {

    /// What went wrong, as the person using the app would put it.
    public var problem: AuthProblem {
        switch self {
        case .notSignedIn: .notSignedIn
        case .refreshUnavailable: .sessionEnded
        case .remote(let error): error.problem
        case .storage(let error): error.problem
        case .credentialRevoked: .accessRevoked
        case .signedOutElsewhere: .signedOutElsewhere
        case .superseded: .interrupted
        case .cancelled: .cancelled
        case .accountDeleted: .accountDeleted
        case .readOnly: .openAppToContinue
        }
    }
}

extension ManagedSessionError: CustomReflectable {

    /// The description only: `dump` never walks into an underlying error's fields.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description], displayStyle: .enum)
    }
}

extension SessionStoreError: CustomReflectable {

    /// The description only (redacted): `dump` never shows a field as it was given.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description], displayStyle: .enum)
    }
}
