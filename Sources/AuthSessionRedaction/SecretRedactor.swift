import Foundation

/// Keeps credentials out of every message the package renders: error sentences, `description`,
/// `debugDescription`, `dump`.
///
/// Two layers, applied in this order:
/// 1. **Exact**: every secret registered with ``register(_:)`` is replaced wherever it appears,
///    raw or in any mix of the encodings a URL, a form or JSON gives it (`%XX` in either case,
///    `%25XX`, `+` for a space; JSON's `\"`, `\\`, `\/`, `\n` and the like, and `\uXXXX` in
///    either case, surrogate pairs included, as Python's `json.dumps` writes every non-ASCII
///    character), and matched byte for byte (a combining mark after it does not hide it). A component that holds live tokens, such as a session manager,
///    registers them; for those secrets this layer is complete.
/// 2. **Shapes**: text the package does not write itself (an underlying error's message) is
///    scanned for what credentials look like:
///    - the rest of an `Authorization`, `Proxy-Authorization`, `Cookie` or `Set-Cookie` value
///      (`:` or `=`; up to the end of the line, or of the quoted string);
///    - the word after a scheme (`Bearer`, `Basic`, `Digest`, `DPoP`, `Negotiate`), whatever
///      white space or quotes separate them;
///    - the value of a key that names a secret (`access_token=`, `"refresh_token": "…"`,
///      `password:`, `sid=`, `sessionid=` …), the whole quoted string when it is quoted, also
///      when the `=` is percent-encoded (`%3D`, `%253D`);
///    - an opaque-looking word right after a word that names a secret (`token 9f86d0…`);
///    - JWT-shaped words, any run of 40 or more token characters, and any run of 24 or more that
///      mixes letters and digits, except a UUID.
///
/// Shapes cannot be complete; they are defence in depth behind the exact layer.
///
/// All operations are thread-safe.
public enum SecretRedactor {

    /// What replaces a secret.
    public static let placeholder = "<redacted>"

    /// Secrets shorter than this are not registered: scrubbing them would mangle ordinary text,
    /// and no credential is that short.
    public static let minimumSecretLength = 8

    /// Registers `secret` for exact redaction until the returned registration is cancelled or
    /// deallocated.
    ///
    /// Registering the same secret twice keeps it until both registrations end.
    ///
    /// ```swift
    /// let registration = SecretRedactor.register(session.refreshToken)
    /// // ... while the token is live ...
    /// registration.cancel()
    /// ```
    ///
    /// - Parameter secret: A token, key or password; ignored when shorter than
    ///   ``minimumSecretLength``.
    /// - Returns: The registration; keep it for as long as the secret is live.
    public static func register(_ secret: String) -> SecretRegistration {
        // At least `minimumSecretLength` characters: walks that many, not the whole secret.
        let isLongEnough =
            secret.index(secret.startIndex, offsetBy: minimumSecretLength, limitedBy: secret.endIndex) != nil
        let forms = isLongEnough ? [secret] : []
        registry.withLock { counts in
            for form in forms {
                counts[form, default: 0] += 1
            }
        }
        return SecretRegistration(forms: forms)
    }

    /// `text` with every registered secret, and every word shaped like a credential, replaced by
    /// ``placeholder``.
    ///
    /// - Parameter text: Any text that may hold a secret, such as an underlying error's message.
    /// - Returns: The text, safe for a log or a user-facing message.
    public static func redact(_ text: String) -> String {
        redactingShapes(redactingRegistered(text))
    }

    /// `text` with every registered secret replaced by ``placeholder``, and nothing else: for a
    /// text known to hold no credential of its own shape (a file path in a developer's message).
    ///
    /// - Parameter text: The text.
    /// - Returns: The text without registered secrets.
    package static func redactRegistered(_ text: String) -> String {
        redactingRegistered(text)
    }

    /// The number of distinct registered secrets; for tests.
    package static var registeredSecretCount: Int {
        registry.withLock { $0.count }
    }

    // MARK: - Exact

    private static let registry = RedactionLock<[String: Int]>([:])

    fileprivate static func unregister(_ forms: [String]) {
        registry.withLock { counts in
            for form in forms {
                let remaining = (counts[form] ?? 1) - 1
                counts[form] = remaining > 0 ? remaining : nil
            }
        }
    }

    private static func redactingRegistered(_ text: String) -> String {
        let secrets = registry.withLock { Array($0.keys) }
        guard !secrets.isEmpty else { return text }
        var bytes = Array(text.utf8)
        var changed = false
        // Longest first, so that a secret containing another is replaced whole.
        for secret in secrets.sorted(by: { $0.utf8.count > $1.utf8.count }) {
            changed = EncodedMatch.replace(Array(secret.utf8), in: &bytes, with: Array(placeholder.utf8)) || changed
        }
        return changed ? String(decoding: bytes, as: UTF8.self) : text
    }

    // MARK: - Shapes

    private static let minimumOpaqueLength = 40
    private static let minimumMixedLength = 24
    private static let credentialSchemes: Set<String> = ["bearer", "basic", "digest", "dpop", "negotiate"]
    /// Header names whose whole value is a credential.
    private static let credentialHeaders: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie",
    ]
    /// A key containing one of these names a secret.
    private static let secretKeyFragments = [
        "token", "secret", "password", "passwd", "credential", "apikey", "api_key", "api-key", "authorization",
        "signature", "assertion", "session", "sessid", "cookie",
    ]
    /// A key equal to one of these names a secret.
    private static let secretKeys: Set<String> = ["key", "sig", "code", "jwt", "otp", "pin", "auth", "sid", "sess"]
    /// `=` as it appears in a query string, raw or percent-encoded once or twice.
    private static let assignments = ["=", "%3D", "%3d", "%253D", "%253d"]

    /// What the word before asked of the next one.
    private enum NextWord {
        case keep
        case redact
        case redactIfOpaque
    }

    private static func redactingShapes(_ text: String) -> String {
        var output = ""
        output.reserveCapacity(text.count)
        var next = NextWord.keep
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            guard isTokenCharacter(character) else {
                output.append(character)
                if !isSeparator(character) {
                    next = .keep
                }
                index = text.index(after: index)
                continue
            }
            var end = index
            while end < text.endIndex, isTokenCharacter(text[end]) {
                end = text.index(after: end)
            }
            let word = text[index..<end]
            let rest = text[end...]
            let separator = rest.prefix(while: isSeparator)

            let isCredentialHeader = credentialHeaders.contains(word.lowercased())
            if (isCredentialHeader && separator.contains(":"))
                || (namesSecret(word) && (separator.contains(":") || separator.contains("="))
                    && isQuote(separator.last))
            {
                // `Authorization: <anything>`, `"password": "several words"`: the whole value goes.
                output += word + separator
                index = redactValue(in: text, from: separator.endIndex, quotedBy: separator.last, into: &output)
                next = .keep
                continue
            }
            if next == .redact || (next == .redactIfOpaque && looksOpaque(word)) || looksSecret(word) {
                output += placeholder
                next = credentialSchemes.contains(word.lowercased()) && isSchemeSeparator(separator) ? .redact : .keep
            } else if let (key, assignment, value) = keyValue(word), namesSecret(key), !value.isEmpty {
                output += key + assignment
                if credentialHeaders.contains(key.lowercased()) {
                    // `Authorization=Bearer x`: the rest of the value goes too.
                    index = redactValue(in: text, from: value.startIndex, quotedBy: nil, into: &output)
                    next = .keep
                    continue
                }
                output += placeholder
                next = .keep
            } else {
                output += word
                next = expectation(after: word, separator: separator)
            }
            index = end
        }
        return output
    }

    /// What `word`, followed by `separator`, says of the next word: `Bearer x`, `token: x`,
    /// `"refresh_token": "x"`, `token= x`, `token 9f86d0…`.
    private static func expectation(after word: Substring, separator: Substring) -> NextWord {
        guard !separator.isEmpty else { return .keep }
        if credentialSchemes.contains(word.lowercased()) {
            return isSchemeSeparator(separator) ? .redact : .keep
        }
        if word.hasSuffix("=") {
            return namesSecret(word.dropLast()) ? .redact : .keep
        }
        guard namesSecret(word) else { return .keep }
        return separator.contains(":") || separator.contains("=") ? .redact : .redactIfOpaque
    }

    /// Appends the placeholder for the value starting at `start` (if there is one) and returns
    /// where the value ends.
    private static func redactValue(
        in text: String,
        from start: String.Index,
        quotedBy quote: Character?,
        into output: inout String
    ) -> String.Index {
        let end = endOfValue(in: text, from: start, quotedBy: quote)
        if start < end {
            output += placeholder
        }
        return end
    }

    /// The end of a value starting at `start`: the closing quote if it is quoted, else the end of
    /// the line.
    private static func endOfValue(
        in text: String,
        from start: String.Index,
        quotedBy quote: Character?
    ) -> String.Index {
        if let quote, quote == "\"" || quote == "'" {
            return text[start...].firstIndex(of: quote) ?? text.endIndex
        }
        return text[start...].firstIndex(where: \.isNewline) ?? text.endIndex
    }

    private static func isTokenCharacter(_ character: Character) -> Bool {
        guard character.isASCII else { return false }
        return character.isLetter || character.isNumber || "-_.~+/=%".contains(character)
    }

    /// Characters that may sit between a key and its value without ending the expectation: any
    /// white space (a new line and a no-break space included), `:` and quotes.
    private static func isSeparator(_ character: Character) -> Bool {
        character.isWhitespace || character == ":" || isQuote(character)
    }

    private static func isQuote(_ character: Character?) -> Bool {
        character == "\"" || character == "'"
    }

    /// What may separate a scheme from its credential: white space or quotes, nothing else.
    private static func isSchemeSeparator(_ text: Substring) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isWhitespace || isQuote($0) }
    }

    private static func looksSecret(_ word: Substring) -> Bool {
        if word.count >= minimumOpaqueLength { return true }
        if word.hasPrefix("eyJ") && word.filter({ $0 == "." }).count == 2 { return true }
        return word.count >= minimumMixedLength && word.contains(where: \.isLetter) && word.contains(where: \.isNumber)
            && !isUUID(word)
    }

    /// A word that reads as a value rather than as English: long hex, letters mixed with digits,
    /// or simply long.
    private static func looksOpaque(_ word: Substring) -> Bool {
        if word.count >= 20 { return true }
        if word.count >= 16 && word.allSatisfy(\.isHexDigit) { return true }
        return word.count >= 8 && word.contains(where: \.isLetter) && word.contains(where: \.isNumber)
    }

    private static func isUUID(_ word: Substring) -> Bool {
        let groups = word.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }

    /// `key=value` split at the first `=` (raw or percent-encoded), or `nil` when the word has none.
    private static func keyValue(_ word: Substring) -> (key: Substring, assignment: Substring, value: Substring)? {
        let found = assignments.compactMap { assignment in word.range(of: assignment).map { ($0, assignment) } }
        guard let (range, _) = found.min(by: { $0.0.lowerBound < $1.0.lowerBound }) else { return nil }
        return (word[..<range.lowerBound], word[range], word[range.upperBound...])
    }

    private static func namesSecret(_ key: Substring) -> Bool {
        let lowered = key.lowercased()
        let name = lowered.split(whereSeparator: { "/?&.;".contains($0) }).last.map(String.init) ?? lowered
        return secretKeys.contains(name) || secretKeyFragments.contains { lowered.contains($0) }
    }
}

/// A secret registered with ``SecretRedactor/register(_:)``: it is redacted until this
/// registration is cancelled or deallocated.
///
/// All operations are thread-safe.
public final class SecretRegistration: Sendable {

    private let forms: RedactionLock<[String]?>

    fileprivate init(forms: [String]) {
        self.forms = RedactionLock(forms)
    }

    /// Stops redacting the secret (unless another registration holds it). Calling it again does
    /// nothing.
    public func cancel() {
        let forms = forms.withLock { forms in
            defer { forms = nil }
            return forms
        }
        if let forms {
            SecretRedactor.unregister(forms)
        }
    }

    deinit {
        cancel()
    }
}
