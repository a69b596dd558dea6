import AuthSessionInterface
import Foundation
import Testing

private func underlying(_ message: String) -> NSError {
    NSError(domain: "test", code: 1, userInfo: [NSLocalizedDescriptionKey: message])
}

@Suite("AuthSessionError")
struct AuthSessionErrorTests {

    @Test("every case has its user-facing description")
    func descriptions() {
        let cause = underlying("offline")
        let expected: [(AuthSessionError, String)] = [
            (.sessionMalformed, "The authentication session is malformed."),
            (.sessionExpired, "The authentication session has timed out."),
            (.networkFailure(error: cause), "Network request failed: offline"),
            (.biometricAuthFailure(error: cause), "Biometric authentication failed: offline"),
            (.userUpdateFailure(error: cause), "Updating the user failed: offline"),
            (.signingInFailure(error: cause), "Sign-in failed: offline"),
            (.signingOutFailure(error: cause), "Sign-out failed: offline"),
            (.sessionFetchFailed(error: cause), "Fetching the session failed: offline"),
        ]
        for (error, text) in expected {
            #expect(error.errorDescription == text)
            #expect(error.localizedDescription == text)
        }
    }

    @Test("a biometric failure names the biometric reason")
    func biometricFailureNamesReason() {
        let error = AuthSessionError.biometricAuthFailure(error: BiometricAuthenticationError.canceledByUser)
        #expect(error.errorDescription == "Biometric authentication failed: Biometric authentication was cancelled.")
    }

    @Test("underlyingError is the wrapped error, or nil")
    func underlyingErrorIsExposed() {
        #expect(AuthSessionError.sessionExpired.underlyingError == nil)
        #expect(AuthSessionError.sessionMalformed.underlyingError == nil)
        let wrapped = AuthSessionError.signingOutFailure(error: underlying("x")).underlyingError as? NSError
        #expect(wrapped?.domain == "test")
    }

    @Test("description names the case and is safe to log")
    func descriptionNamesCase() {
        #expect(
            "\(AuthSessionError.sessionExpired)"
                == "AuthSessionError.sessionExpired: The authentication session has timed out."
        )
        let error = AuthSessionError.networkFailure(error: underlying("offline"))
        #expect(String(describing: error) == "AuthSessionError.networkFailure: Network request failed: offline")
        #expect(String(reflecting: error) == String(describing: error))
    }

    @Test(
        "no token reaches a description",
        arguments: [
            "request failed with Authorization: Bearer abc.def-123",
            "GET /me?access_token=s3cr3t-value&x=1 failed",
            #"{"refresh_token": "rt-s3cr3t-value"}"#,
            "token=s3cr3t-value rejected",
            "password: s3cr3t-value",
            "bad jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig rejected",
            "opaque QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlq rejected",
            "invalid token 9f86d081884c7d659a2feaa0c55ad015 rejected",
            "GET /cb?code=s3cr3t-value&state=x failed",
            "x-api-key=s3cr3t-value rejected",
        ]
    )
    func tokensAreRedacted(message: String) {
        let secrets = [
            "abc.def-123", "s3cr3t-value", "rt-s3cr3t-value", "eyJhbGci", "QUJDREVGR0hJSktMTU5PUFFS",
            "9f86d081884c7d659a2feaa0c55ad015",
        ]
        let cause = underlying(message)
        let errors: [AuthSessionError] = [
            .networkFailure(error: cause), .biometricAuthFailure(error: cause), .userUpdateFailure(error: cause),
            .signingInFailure(error: cause), .signingOutFailure(error: cause), .sessionFetchFailed(error: cause),
        ]
        for error in errors {
            for text in [error.errorDescription ?? "", error.description, error.debugDescription] {
                #expect(text.contains("<redacted>"), "\(text)")
                for secret in secrets {
                    #expect(!text.contains(secret), "\(text) leaks \(secret)")
                }
            }
        }
    }

    @Test("dump and reflection never reach the underlying error")
    func dumpIsRedacted() {
        let cause = underlying("Authorization: Bearer s3cr3t-value")
        var dumped = ""
        dump(AuthSessionError.networkFailure(error: cause), to: &dumped)
        #expect(!dumped.contains("s3cr3t"))
        #expect(dumped.contains("<redacted>"))
        var dumpedEvent = ""
        dump(AuthSessionEvent.sessionFetchFailed(cause), to: &dumpedEvent)
        dump(AuthSessionDelegateEvent.logout(error: cause), to: &dumpedEvent)
        #expect(!dumpedEvent.contains("s3cr3t"))
    }

    @Test("ordinary words, identifiers and UUIDs survive redaction")
    func ordinaryTextSurvives() {
        let message = "The token expired for request E621E1F8-C36C-495A-93FC-0C247A3E6E5F; status=42, user ada."
        let error = AuthSessionError.networkFailure(error: underlying(message))
        #expect(error.errorDescription == "Network request failed: \(message)")
    }
}

@Suite("BiometricAuthenticationError")
struct BiometricAuthenticationErrorTests {

    @Test("every case has a distinct user-facing description", arguments: BiometricAuthenticationError.allCases)
    func descriptions(error: BiometricAuthenticationError) {
        let text = error.errorDescription ?? ""
        #expect(!text.isEmpty)
        let others = BiometricAuthenticationError.allCases.filter { $0 != error }.map(\.errorDescription)
        #expect(!others.contains(text))
    }

    @Test("the cases a sign-out policy must tell apart exist")
    func casesExist() {
        #expect(BiometricAuthenticationError.allCases.count == 9)
        let cancelled: [BiometricAuthenticationError] = [.canceledByUser, .canceledBySystem, .fallback]
        #expect(Set(cancelled).count == 3)
    }
}
