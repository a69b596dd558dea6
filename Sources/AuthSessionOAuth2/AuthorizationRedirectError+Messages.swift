import AuthSessionProviders
import Foundation

extension AuthorizationRedirectError: LocalizedError {

    /// What went wrong, as the person using the app would put it: the user declined
    /// (`access_denied`), or the sign-in could not be completed (any other answer, a redirect that
    /// does not answer the request).
    public var problem: AuthProblem {
        if case .server(let code, _) = self {
            switch code {
            case "access_denied": return .signInDeclined
            case "temporarily_unavailable", "server_error": return .serverNotResponding
            case "invalid_client", "unauthorized_client", "invalid_scope", "invalid_request",
                "unsupported_response_type":
                return .appMisconfigured
            default: return .signInFailed
            }
        }
        return .signInFailed
    }

    /// The person's message: ``problem``'s, never the server's text.
    public var errorDescription: String? { problem.message }

    /// What the person can do: ``problem``'s suggestion.
    public var recoverySuggestion: String? { problem.recoverySuggestion }
}

extension AuthorizationRedirectError: CustomReflectable {

    /// The description, cleaned as a server's text is: `dump` never shows the redirect's values
    /// as they came.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": RemoteAuthError.sanitized(description)], displayStyle: .enum)
    }
}
