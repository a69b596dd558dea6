import Foundation

/// Everything that can go wrong with an authentication session.
///
/// Each case carries enough to choose a recovery: expired sessions call for a new sign-in,
/// network failures for a retry. ``errorDescription`` is a sentence fit for the user; it,
/// ``description``, `localizedDescription` and `dump` never contain a token: an underlying error's
/// message passes through `SecretRedactor.redact(_:)`, which replaces every registered secret and
/// every credential-shaped word (JWTs, `Bearer` credentials, `Authorization` and cookie values,
/// `token=` parameters, long opaque strings) with `<redacted>`.
public enum AuthSessionError: Error, Sendable {

    /// The session is missing required fields or holds invalid values.
    case sessionMalformed

    /// The session has expired (or is within its expiry buffer) and cannot be used.
    case sessionExpired

    /// A network request needed for authentication failed.
    case networkFailure(error: any Error)

    /// A biometric prompt failed; `error` is usually a ``BiometricAuthenticationError``.
    case biometricAuthFailure(error: any Error)

    /// Updating the signed-in user failed.
    case userUpdateFailure(error: any Error)

    /// Signing in failed.
    case signingInFailure(error: any Error)

    /// Signing out failed.
    case signingOutFailure(error: any Error)

    /// Fetching the session failed.
    case sessionFetchFailed(error: any Error)

    /// The error that caused this one, if the case carries one.
    public var underlyingError: (any Error)? {
        switch self {
        case .sessionMalformed, .sessionExpired:
            nil
        case .networkFailure(let error), .biometricAuthFailure(let error), .userUpdateFailure(let error),
            .signingInFailure(let error), .signingOutFailure(let error), .sessionFetchFailed(let error):
            error
        }
    }
}

extension AuthSessionError: LocalizedError {

    /// A sentence fit for the user, naming the underlying cause where there is one.
    public var errorDescription: String? {
        switch self {
        case .sessionMalformed:
            "The authentication session is malformed."
        case .sessionExpired:
            "The authentication session has timed out."
        case .networkFailure(let error):
            "Network request failed: \(Self.reason(error))"
        case .biometricAuthFailure(let error):
            "Biometric authentication failed: \(Self.reason(error))"
        case .userUpdateFailure(let error):
            "Updating the user failed: \(Self.reason(error))"
        case .signingInFailure(let error):
            "Sign-in failed: \(Self.reason(error))"
        case .signingOutFailure(let error):
            "Sign-out failed: \(Self.reason(error))"
        case .sessionFetchFailed(let error):
            "Fetching the session failed: \(Self.reason(error))"
        }
    }

    private static func reason(_ error: any Error) -> String {
        SecretRedactor.redact(error.localizedDescription)
    }
}

extension AuthSessionError: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {

    /// The case name and the redacted user-facing sentence, safe for logs.
    public var description: String {
        "AuthSessionError.\(caseName): \(errorDescription ?? "")"
    }

    /// The same text as ``description``: a debugger or log never sees the underlying error's
    /// `userInfo`, where a token could hide.
    public var debugDescription: String {
        description
    }

    /// A mirror with the redacted description as its only child, so `dump` and debuggers that
    /// walk the value never reach the underlying error.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description], displayStyle: .enum)
    }

    /// The case's name alone (the tests name recorded errors by it).
    package var caseName: String {
        switch self {
        case .sessionMalformed: "sessionMalformed"
        case .sessionExpired: "sessionExpired"
        case .networkFailure: "networkFailure"
        case .biometricAuthFailure: "biometricAuthFailure"
        case .userUpdateFailure: "userUpdateFailure"
        case .signingInFailure: "signingInFailure"
        case .signingOutFailure: "signingOutFailure"
        case .sessionFetchFailed: "sessionFetchFailed"
        }
    }
}
