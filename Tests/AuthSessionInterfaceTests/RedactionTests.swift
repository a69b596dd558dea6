import AuthSessionInterface
import Foundation
import Testing

/// Every place a secret could leak from an error: its sentence, `description`, `debugDescription`,
/// `localizedDescription`, and `dump` of the error and of the events that carry it.
private func renderings(of cause: any Error) -> [String] {
    let errors: [AuthSessionError] = [
        .networkFailure(error: cause), .signingInFailure(error: cause), .sessionFetchFailed(error: cause),
    ]
    var texts: [String] = []
    for error in errors {
        texts += [error.errorDescription ?? "", error.description, error.debugDescription, error.localizedDescription]
        var dumped = ""
        dump(error, to: &dumped)
        texts.append(dumped)
    }
    var dumped = ""
    dump(AuthSessionEvent.sessionFetchFailed(cause), to: &dumped)
    dump(AuthSessionEvent.sessionSignedOut(error: cause), to: &dumped)
    dump(AuthSessionDelegateEvent.logout(error: cause), to: &dumped)
    texts += [
        dumped, "\(AuthSessionEvent.sessionFetchFailed(cause))", "\(AuthSessionDelegateEvent.logout(error: cause))",
    ]
    return texts
}

private func message(_ text: String) -> NSError {
    NSError(domain: "test", code: 1, userInfo: [NSLocalizedDescriptionKey: text])
}

@Suite("Redaction of realistic secret shapes")
struct RedactionTests {

    /// Each message, and the secret in it that must not survive.
    static let shapes: [(message: String, secret: String)] = [
        ("HTTP 401 for Authorization: Token 1d4f00dc0ffee", "1d4f00dc0ffee"),
        ("HTTP 401 for authorization: token tokvalue", "tokvalue"),
        ("sent Authorization: Bearer\tabcDEF.ghi-jkl", "abcDEF.ghi-jkl"),
        ("sent Authorization: Bearer   abcDEF.ghi-jkl", "abcDEF.ghi-jkl"),
        ("redirect to /cb?access_token%3Dq9Xz-wv7Rt%26state%3Dabc", "q9Xz-wv7Rt"),
        ("redirect to /cb%3Frefresh_token%253Dq9Xz-wv7Rt", "q9Xz-wv7Rt"),
        ("Set-Cookie: sid=Zk31aQ; Path=/; HttpOnly", "Zk31aQ"),
        ("Cookie: theme=dark; sessionid=Zk31aQbb", "Zk31aQbb"),
        ("sid=Zk31aQ expired", "Zk31aQ"),
        ("bad token 0123456789abcdef0123 for user", "0123456789abcdef0123"),
        ("bad Token: deadbeefdeadbeefdead", "deadbeefdeadbeefdead"),
        (#"{"id_token":"short-but-secret"}"#, "short-but-secret"),
    ]

    @Test("realistic shapes never reach a description, a localized description or a dump")
    func realisticShapes() {
        for (text, secret) in Self.shapes {
            for rendering in renderings(of: message(text)) {
                #expect(!rendering.contains(secret), "\"\(text)\" leaked \(secret) in: \(rendering)")
            }
        }
    }

    @Test("ordinary sentences around the word token survive")
    func ordinaryTextAroundTokenSurvives() {
        let text = "The token validation failed; token expired at 12:00 for request 42."
        let error = AuthSessionError.networkFailure(error: message(text))
        #expect(error.errorDescription == "Network request failed: \(text)")
    }
}
