/// Replaces token-shaped text with `<redacted>` so that no credential reaches a log or a message.
///
/// Defence in depth for text the package does not write itself (an underlying error's message).
/// It masks:
/// - the word after `Bearer` or `Basic`;
/// - the value after a key that names a secret (`access_token=`, `refresh_token:`, `token=`,
///   `password=` …);
/// - JWT-shaped words (`eyJ…` with two dots);
/// - any run of 40 or more token characters (`A-Z a-z 0-9 - _ . ~ + / =`), and any run of 24 or
///   more that mixes letters and digits, except a UUID.
enum SecretRedaction {

    static let placeholder = "<redacted>"

    private static let minimumOpaqueLength = 40
    private static let minimumMixedLength = 24
    private static let credentialSchemes: Set<String> = ["bearer", "basic"]
    /// A key containing one of these names a secret.
    private static let secretKeyFragments = [
        "token", "secret", "password", "passwd", "credential", "apikey", "api_key", "api-key", "authorization",
        "signature", "assertion",
    ]
    /// A key equal to one of these names a secret.
    private static let secretKeys: Set<String> = ["key", "sig", "code", "jwt", "otp", "pin", "auth"]

    /// `text` with every secret-looking word replaced by ``placeholder``.
    static func redacting(_ text: String) -> String {
        var output = ""
        output.reserveCapacity(text.count)
        var redactNextWord = false
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            guard isTokenCharacter(character) else {
                output.append(character)
                index = text.index(after: index)
                continue
            }
            var end = index
            while end < text.endIndex, isTokenCharacter(text[end]) {
                end = text.index(after: end)
            }
            let word = text[index..<end]
            if redactNextWord || looksSecret(word) {
                output += placeholder
                // `Authorization: Bearer x`: the scheme is redacted, and so is what follows it.
                redactNextWord = credentialSchemes.contains(word.lowercased()) && text[end...].first == " "
            } else if let (key, value) = keyValue(word), namesSecret(key), !value.isEmpty {
                output += key + "=" + placeholder
            } else {
                output += word
                redactNextWord = introducesSecret(word, followedBy: text[end...])
            }
            index = end
        }
        return output
    }

    private static func isTokenCharacter(_ character: Character) -> Bool {
        guard character.isASCII else { return false }
        return character.isLetter || character.isNumber || "-_.~+/=".contains(character)
    }

    private static func looksSecret(_ word: Substring) -> Bool {
        if word.count >= minimumOpaqueLength { return true }
        if word.hasPrefix("eyJ") && word.filter({ $0 == "." }).count == 2 { return true }
        return word.count >= minimumMixedLength && word.contains(where: \.isLetter) && word.contains(where: \.isNumber)
            && !isUUID(word)
    }

    private static func isUUID(_ word: Substring) -> Bool {
        let groups = word.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }

    /// `key=value` split at the first `=`, or `nil` when the word has none.
    private static func keyValue(_ word: Substring) -> (key: Substring, value: Substring)? {
        guard let equals = word.firstIndex(of: "=") else { return nil }
        return (word[..<equals], word[word.index(after: equals)...])
    }

    private static func namesSecret(_ key: Substring) -> Bool {
        let lowered = key.lowercased()
        return secretKeys.contains(lowered) || secretKeyFragments.contains { lowered.contains($0) }
    }

    /// Whether `word`, followed by `rest`, announces a secret as the next word: `Bearer x`,
    /// `token: x`, `"refresh_token": "x"`, `token= x`.
    private static func introducesSecret(_ word: Substring, followedBy rest: Substring) -> Bool {
        if credentialSchemes.contains(word.lowercased()) {
            return rest.first == " "
        }
        if word.hasSuffix("=") {
            return namesSecret(word.dropLast())
        }
        guard namesSecret(word) else { return false }
        let separator = rest.prefix { $0 == "\"" || $0 == "'" || $0 == " " || $0 == ":" }
        return separator.contains(":")
    }
}
