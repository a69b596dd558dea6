import Foundation
import Testing

@testable import AuthSessionInterface

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
        // Found by the adversarial review of this redaction:
        (#"{"password": "correct horse battery staple"}"#, "battery staple"),
        ("Authorization=Bearer s3cr3tvalue", "s3cr3tvalue"),
        ("Bearer\ns3cr3tvalue", "s3cr3tvalue"),
        ("Bearer\u{00A0}s3cr3tvalue", "s3cr3tvalue"),
        ("Bearer \"s3cr3tvalue\"", "s3cr3tvalue"),
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

@Suite("Exact redaction of registered secrets", .serialized)
struct SecretRegistrationTests {

    @Test("8. a registered secret is scrubbed wherever it appears, raw or percent-encoded, until cancelled")
    func registeredSecretIsScrubbed() {
        // Shaped like nothing the heuristics know: only registration can catch it.
        let secret = "plain words secret"
        let encoded = "plain%20words%20secret"
        let cause = message("upstream echoed 'plain words secret' and /cb?x=\(encoded)")
        let registration = SecretRedactor.register(secret)
        for rendering in renderings(of: cause) {
            #expect(!rendering.contains(secret) && !rendering.contains(encoded), "\(rendering)")
        }
        registration.cancel()
        registration.cancel()  // twice is harmless
        let error = AuthSessionError.networkFailure(error: cause)
        #expect(error.description.contains(secret), "no longer registered, and shaped like ordinary words")
    }

    @Test("8. two registrations of one secret keep it until both end; deallocation ends one")
    func registrationsAreCounted() {
        // Its own secret, so that registrations made by tests running alongside change nothing
        // here (the registry is global: its count moves with them).
        let word = String((0..<6).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement()! })
        let secret = "s3cret-\(word)"  // short of the length that looks like a credential
        let first = SecretRedactor.register(secret)
        var second: SecretRegistration? = SecretRedactor.register(secret)
        first.cancel()
        #expect(SecretRedactor.redact("x \(secret) y") == "x <redacted> y")
        _ = second
        second = nil
        #expect(SecretRedactor.redact("x \(secret) y") == "x \(secret) y", "deallocation ended the last one")
    }

    @Test(
        "8. a registered secret is found in any mix of URL, form and JSON encodings, and before a combining mark",
        arguments: [
            "GET /x?t=ab.cd%2Fefgh-XY failed",  // RFC 3986
            "GET /x?t=ab%2ecd%2fefgh%2dXY failed",  // every byte, lower-case hex
            "GET /x?t=ab%252Ecd%252Fefgh-XY failed",  // encoded twice
            #"{"t":"ab.cd\/efgh-XY"}"#,  // JSON escapes
            #"{"t":"ab.cd\u002fefgh-XY"}"#,
            "got ab.cd/efgh-XY\u{0301} back",  // a combining mark after it
        ]
    )
    func registeredSecretEncodings(text: String) {
        let registration = SecretRedactor.register("ab.cd/efgh-XY")
        defer { registration.cancel() }
        let redacted = SecretRedactor.redact(text)
        // "<redacted" without its ">": a combining mark after the secret now marks that ">".
        #expect(redacted.contains("<redacted"), "\(redacted)")
        #expect(!redacted.contains("efgh"), "\(redacted)")
    }

    /// A secret with a quote, a backslash, a slash, non-ASCII letters and a character beyond the
    /// Basic Multilingual Plane, and the JSON each encoder writes it as.
    static let jsonSecret = "Zq\"7\\k/\u{E4}-\u{3A9}\u{1F600}-mn"

    static var jsonTexts: [String] {
        let serialized = try! JSONSerialization.data(withJSONObject: ["detail": jsonSecret])
        let encoded = try! JSONEncoder().encode(["detail": jsonSecret])
        return [
            String(decoding: serialized, as: UTF8.self),  // Foundation: \" \\ \/, the rest raw
            String(decoding: encoded, as: UTF8.self),
            #"{"detail":"Zq\"7\\k/\u00e4-\u03a9\ud83d\ude00-mn"}"#,  // Python's json.dumps (ensure_ascii)
            #"{"detail":"Zq\"7\\k\/\u00E4-\u03A9\uD83D\uDE00-mn"}"#,  // upper-case hex, \/
            #"{"detail":"Zq\u00227\u005ck\u002f\u00e4-\u03a9\ud83d\ude00-mn"}"#,  // everything as \u
            #"{"detail":"Zq\"7\\k/ä-Ω😀-mn"}"#,  // the minimal escape form
        ]
    }

    @Test(
        "8. a registered secret with a quote, a backslash, a slash or a non-ASCII letter is found in JSON text",
        arguments: jsonTexts
    )
    func registeredSecretInJSON(text: String) {
        let registration = SecretRedactor.register(Self.jsonSecret)
        defer { registration.cancel() }
        #expect(SecretRedactor.redact(text) == #"{"detail":"<redacted>"}"#, "\(text)")
    }

    @Test("8. a registered passphrase is found in form encoding")
    func registeredPassphraseInForm() {
        let registration = SecretRedactor.register("correct horse battery")
        defer { registration.cancel() }
        #expect(SecretRedactor.redact("rejected value correct+horse+battery") == "rejected value <redacted>")
    }

    @Test("8. secrets too short to be credentials are not registered")
    func shortSecretsAreIgnored() {
        let registration = SecretRedactor.register("abc")
        #expect(SecretRedactor.redact("abc def") == "abc def")
        registration.cancel()
    }
}
