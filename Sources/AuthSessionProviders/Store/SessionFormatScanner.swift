import Foundation

/// Reads the one document a launch meets: a version 2 (or 1) session in exactly the shape
/// ``SessionFormat/encode(_:)`` writes, in one pass over the bytes and without `JSONDecoder`.
///
/// It accepts a strict subset of what ``SessionFormat/decode(_:)`` accepts, and gives up (`nil`)
/// on anything else, so that `JSONDecoder` decides it, with its reasons: a document of another
/// format or version, a field that is unknown, repeated, `null`, missing or of another type, a
/// string with a `\u` escape, a control character or bytes that are not UTF-8, a number that is
/// negative, has an exponent or is longer than 32 characters, bytes after the document, or bytes
/// that are not JSON. So whatever it accepts, `JSONDecoder` would decode to the same session (a
/// change to the layouts or their conversion must be made here too).
struct SessionFormatScanner {

    private let bytes: UnsafeRawBufferPointer
    private var position = 0

    /// The session in `data`, or `nil` to leave the document to `JSONDecoder`.
    static func session(in data: Data) -> ManagedSession? {
        data.withUnsafeBytes { bytes in
            var scanner = SessionFormatScanner(bytes: bytes)
            return scanner.document()
        }
    }

    private init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    // MARK: - Layout

    private mutating func document() -> ManagedSession? {
        var format: String?
        var version: Int?
        var session: ManagedSession?
        let isObject = members { scanner, key in
            if Self.matches(key, "format") { return assign(&format, scanner.string()) }
            if Self.matches(key, "version") { return assign(&version, scanner.integer()) }
            if Self.matches(key, "session") { return assign(&session, scanner.session()) }
            return false
        }
        skipWhiteSpace()
        guard isObject, position == bytes.count, format == SessionFormat.formatName, var session,
            version == 1 || version == 2
        else {
            return nil
        }
        // Version 1 has no lineage and no origin: those found there are not read.
        if version == 1 {
            session.lineage = nil
            session.origin = nil
        }
        return session
    }

    private mutating func session() -> ManagedSession? {
        var accessToken: String?
        var refreshToken: String?
        var idToken: String?
        var tokenType: String?
        var scope: String?
        var expiresAt: TimeInterval?
        var issuedAt: TimeInterval?
        var user: ManagedUser?
        var biometrics: Bool?
        var lineage: String?
        var origin: SessionOrigin?
        let isObject = members { scanner, key in
            if Self.matches(key, "access_token") { return assign(&accessToken, scanner.string()) }
            if Self.matches(key, "refresh_token") { return assign(&refreshToken, scanner.string()) }
            if Self.matches(key, "id_token") { return assign(&idToken, scanner.string()) }
            if Self.matches(key, "token_type") { return assign(&tokenType, scanner.string()) }
            if Self.matches(key, "scope") { return assign(&scope, scanner.string()) }
            if Self.matches(key, "expires_at") { return assign(&expiresAt, scanner.number()) }
            if Self.matches(key, "issued_at") { return assign(&issuedAt, scanner.number()) }
            if Self.matches(key, "user") { return assign(&user, scanner.user()) }
            if Self.matches(key, "biometric_authentication_enabled") { return assign(&biometrics, scanner.boolean()) }
            if Self.matches(key, "lineage") { return assign(&lineage, scanner.string()) }
            if Self.matches(key, "issued_to") { return assign(&origin, scanner.origin()) }
            return false
        }
        guard isObject, let accessToken, let tokenType, let expiresAt, let issuedAt, let user, let biometrics else {
            return nil
        }
        return ManagedSession(
            accessToken: accessToken,
            refreshToken: refreshToken,
            idToken: idToken,
            tokenType: tokenType,
            scope: scope,
            expiresAt: expiresAt,
            issuedAt: issuedAt,
            user: user,
            isBiometricAuthenticationEnabled: biometrics,
            lineage: lineage,
            origin: origin
        )
    }

    private mutating func origin() -> SessionOrigin? {
        var issuer: String?
        var clientID: String?
        var server: String?
        let isObject = members { scanner, key in
            if Self.matches(key, "issuer") { return assign(&issuer, scanner.string()) }
            if Self.matches(key, "client_id") { return assign(&clientID, scanner.string()) }
            if Self.matches(key, "server") { return assign(&server, scanner.string()) }
            return false
        }
        guard isObject, let clientID else { return nil }
        return SessionOrigin(issuer: issuer, clientID: clientID, server: server)
    }

    private mutating func user() -> ManagedUser? {
        var subject: String?
        var name: String?
        var email: String?
        var profile: [String: String]?
        let isObject = members { scanner, key in
            if Self.matches(key, "subject") { return assign(&subject, scanner.string()) }
            if Self.matches(key, "name") { return assign(&name, scanner.string()) }
            if Self.matches(key, "email") { return assign(&email, scanner.string()) }
            if Self.matches(key, "profile") { return assign(&profile, scanner.profile()) }
            return false
        }
        guard isObject, let subject else { return nil }
        return ManagedUser(identifier: subject, name: name, email: email, profile: profile ?? [:])
    }

    private mutating func profile() -> [String: String]? {
        var profile: [String: String] = [:]
        let isObject = members { scanner, key in
            guard let name = Self.validUTF8(key), profile[name] == nil,
                let value = scanner.string()
            else { return false }
            profile[name] = value
            return true
        }
        return isObject ? profile : nil
    }

    // MARK: - JSON

    /// An object: calls `member` with each key, the value's first byte next; `member` reads the
    /// value, or returns `false` to give up. Keys are taken as they are written: one with an
    /// escape gives up.
    private mutating func members(_ member: (inout SessionFormatScanner, UnsafeRawBufferPointer) -> Bool) -> Bool {
        skipWhiteSpace()
        guard take(UInt8(ascii: "{")) else { return false }
        skipWhiteSpace()
        if take(UInt8(ascii: "}")) { return true }
        while true {
            skipWhiteSpace()
            guard take(UInt8(ascii: "\"")) else { return false }
            let start = position
            position = plainRun(from: start).end
            guard take(UInt8(ascii: "\"")) else { return false }
            let key = UnsafeRawBufferPointer(rebasing: bytes[start..<position - 1])
            skipWhiteSpace()
            guard take(UInt8(ascii: ":")) else { return false }
            skipWhiteSpace()
            guard member(&self, key) else { return false }
            skipWhiteSpace()
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "}"))
        }
    }

    /// A string whose escapes are among `\" \\ \/ \b \f \n \r \t`.
    private mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = position
        let (end, isASCII) = plainRun(from: start)
        guard end < bytes.count else { return nil }
        switch bytes[end] {
        case UInt8(ascii: "\""):
            position = end + 1
            let text = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            return isASCII ? String(decoding: text, as: UTF8.self) : Self.validUTF8(text)
        case UInt8(ascii: "\\"):
            position = end
            return escapedString(from: start)
        default:
            // A control character, which JSON escapes.
            return nil
        }
    }

    /// `bytes` as a string when they are valid UTF-8, else `nil`.
    ///
    /// `String(validating:as:)` says the same, but it is new in iOS 18 and macOS 15, later than
    /// the package's deployment targets. Decoding replaces each invalid sequence with U+FFFD, so
    /// the bytes come back unchanged exactly when they were valid.
    static func validUTF8<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.utf8.elementsEqual(bytes) ? text : nil
    }

    /// Where, from `start`, the first quote, backslash or control character is (or the end), and
    /// whether the bytes before it are all ASCII. Eight bytes at a time while there are eight.
    private func plainRun(from start: Int) -> (end: Int, isASCII: Bool) {
        var end = start
        var seen: UInt64 = 0
        if let base = bytes.baseAddress {
            while bytes.count - end >= 8 {
                let word = (base + end).loadUnaligned(as: UInt64.self)
                if Self.hasQuoteBackslashOrControl(word) { break }
                seen |= word
                end += 8
            }
        }
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            seen |= UInt64(byte)
            end += 1
        }
        return (end, seen & 0x8080_8080_8080_8080 == 0)
    }

    /// Whether one of the eight bytes of `word` is a quote, a backslash or below 0x20. The two
    /// tests are exact (a borrow can only make a byte after a matching one look matching too):
    /// `(v - 0x01…) & ~v & 0x80…` is non-zero exactly when a byte of `v` is zero, and
    /// `(v - 0x20…) & ~v & 0x80…` exactly when a byte of `v` is below 0x20.
    private static func hasQuoteBackslashOrControl(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ value: UInt64) -> Bool {
            (value &- ones) & ~value & highs != 0
        }
        let hasControl = (word &- (ones &* 0x20)) & ~word & highs != 0
        return hasControl || hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\""))))
            || hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\\"))))
    }

    /// The rest of a string with an escape at `position`, its first part at `start`.
    private mutating func escapedString(from start: Int) -> String? {
        var text = Array(bytes[start..<position])
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return Self.validUTF8(text)
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { return nil }
                let escaped = bytes[position]
                position += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escaped)
                case UInt8(ascii: "b"): text.append(0x08)
                case UInt8(ascii: "f"): text.append(0x0C)
                case UInt8(ascii: "n"): text.append(0x0A)
                case UInt8(ascii: "r"): text.append(0x0D)
                case UInt8(ascii: "t"): text.append(0x09)
                default: return nil
                }
            case ..<0x20:
                return nil
            default:
                text.append(byte)
            }
        }
        return nil
    }

    /// A number that is not negative, without an exponent, of at most 32 characters: it neither
    /// overflows nor underflows a `Double`, so any correctly rounded parse gives the same value.
    private mutating func number() -> Double? {
        guard let (start, hasExponent) = numberText(), !hasExponent, position - start <= 32 else { return nil }
        return Double(String(decoding: bytes[start..<position], as: UTF8.self))
    }

    /// A number of at most 18 digits, without a fraction or an exponent.
    private mutating func integer() -> Int? {
        let start = position
        guard let (_, hasExponent) = numberText(), !hasExponent,
            !bytes[start..<position].contains(UInt8(ascii: ".")), position - start <= 18
        else { return nil }
        return bytes[start..<position].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    /// Steps over a JSON number without a sign; where it started, and whether it has an exponent.
    private mutating func numberText() -> (start: Int, hasExponent: Bool)? {
        let start = position
        guard position < bytes.count, Self.isDigit(bytes[position]) else { return nil }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else {
            skipDigits()
        }
        if take(UInt8(ascii: ".")) {
            guard skipDigits() else { return nil }
        }
        var hasExponent = false
        if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
            hasExponent = true
            _ = take(UInt8(ascii: "+")) || take(UInt8(ascii: "-"))
            guard skipDigits() else { return nil }
        }
        return (start, hasExponent)
    }

    private mutating func boolean() -> Bool? {
        if take("true") { return true }
        if take("false") { return false }
        return nil
    }

    // MARK: - Bytes

    /// Whether `key` is `name`.
    private static func matches(_ key: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
        guard key.count == name.utf8CodeUnitCount, let base = key.baseAddress else { return false }
        return memcmp(base, name.utf8Start, key.count) == 0
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// Steps over digits; whether there was one.
    @discardableResult
    private mutating func skipDigits() -> Bool {
        let start = position
        while position < bytes.count, Self.isDigit(bytes[position]) {
            position += 1
        }
        return position > start
    }

    private mutating func skipWhiteSpace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    private mutating func take(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count - position >= count else { return false }
        let matches = word.withUTF8Buffer { $0.elementsEqual(bytes[position..<position + count]) }
        if matches {
            position += count
        }
        return matches
    }
}

/// Sets `slot` to `value`; `false` (give up) if the value is missing or `slot` was already set: a
/// repeated field is left to `JSONDecoder`.
private func assign<Value>(_ slot: inout Value?, _ value: Value?) -> Bool {
    guard slot == nil, let value else { return false }
    slot = value
    return true
}
