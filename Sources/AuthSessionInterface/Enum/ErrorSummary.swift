import Foundation

/// Describes any error for a log line without leaking a token.
enum ErrorSummary {

    /// `AuthSessionError` and `BiometricAuthenticationError` by their own descriptions; any
    /// other error by its type and its redacted localized description.
    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as AuthSessionError:
            error.description
        case let error as BiometricAuthenticationError:
            "BiometricAuthenticationError.\(error)"
        default:
            "\(type(of: error)): \(SecretRedactor.redact(error.localizedDescription))"
        }
    }
}
