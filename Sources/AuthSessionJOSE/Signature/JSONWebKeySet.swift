import AuthSessionRedaction
import Foundation

/// An issuer's signing keys: a JWK Set (RFC 7517 §5), such as the document at an OpenID
/// provider's `jwks_uri`.
///
/// Keys this package cannot use (another type or curve, another algorithm, an encryption key, an
/// RSA modulus under 2048 bits) are skipped, not fatal: issuers publish such keys beside theirs.
/// Each skipped key is listed with its reason, for the developer reading an "unknown key" error.
///
/// All operations are thread-safe.
public struct JSONWebKeySet: Sendable, Hashable, CustomStringConvertible {

    /// A key the set holds that this package cannot use, and why.
    ///
    /// All operations are thread-safe.
    public struct SkippedKey: Sendable, Hashable {

        /// The key's `kid`, if it has one.
        public let keyID: String?

        /// Why it cannot be used.
        public let reason: String
    }

    /// The keys that verify signatures.
    public let keys: [JSONWebKey]

    /// The keys skipped, with their reasons.
    public let skippedKeys: [SkippedKey]

    /// The most keys a set may hold: more is refused as hostile (each RSA key costs work to load).
    public static let maximumKeyCount = 100

    /// A set of the given keys.
    ///
    /// - Parameter keys: The keys.
    public init(keys: [JSONWebKey]) {
        self.keys = keys
        self.skippedKeys = []
    }

    /// Reads a JWK Set document: a JSON object whose `keys` member is an array of keys.
    ///
    /// - Parameter jsonData: The document.
    /// - Throws: ``JSONWebKeySetError/malformed(_:)`` for anything but such an object with at most
    ///   ``maximumKeyCount`` keys. A key that cannot be used is skipped, not thrown.
    public init(jsonData: Data) throws(JSONWebKeySetError) {
        guard let object = try? JSONValue.readObject(Array(jsonData)) else {
            throw .malformed("not a JSON object")
        }
        try self.init(jsonObject: object)
    }

    /// Reads a JWK Set from its decoded JSON object.
    package init(jsonObject object: [String: JSONValue]) throws(JSONWebKeySetError) {
        guard case .array(let members)? = object["keys"] else { throw .malformed("keys is missing or not an array") }
        guard members.count <= Self.maximumKeyCount else {
            throw .malformed("more than \(Self.maximumKeyCount) keys")
        }
        var keys: [JSONWebKey] = []
        var skipped: [SkippedKey] = []
        for member in members {
            guard let memberObject = member.objectValue else {
                skipped.append(SkippedKey(keyID: nil, reason: "not a JSON object"))
                continue
            }
            do throws(JSONWebKeySetError) {
                keys.append(try JSONWebKey(jsonObject: memberObject))
            } catch {
                if case .unusableKey(let keyID, let reason) = error {
                    skipped.append(SkippedKey(keyID: keyID, reason: reason))
                }
            }
        }
        self.keys = keys
        self.skippedKeys = skipped
    }

    /// The keys that may have signed `token`: those with its `kid` (all of them when it names
    /// none) whose algorithm is the one it claims.
    ///
    /// - Parameter token: The token.
    /// - Returns: The candidate keys, possibly none.
    public func candidates(for token: JSONWebSignature) -> [JSONWebKey] {
        keys.filter { key in
            key.algorithm == token.algorithm && (token.keyID == nil || key.keyID == token.keyID)
        }
    }

    /// Why no key of the set verifies `token`, when ``candidates(for:)`` is empty: a key with its
    /// `kid` for another algorithm, or no such key (listing a skipped key's reason if one has it).
    package func missingKeyError(for token: JSONWebSignature) -> IDTokenValidationError {
        let keyID = token.keyID.map { String($0.prefix(64)) }
        if let keyID, let other = keys.first(where: { $0.keyID == token.keyID }) {
            return .keyAlgorithmMismatch(
                keyID: keyID,
                keyAlgorithm: other.algorithm,
                tokenAlgorithm: String(token.algorithm.prefix(32))
            )
        }
        return .unknownSigningKey(keyID: keyID)
    }

    /// How many keys, and their identifiers.
    public var description: String {
        let identifiers = keys.map { $0.keyID.map { SecretRedactor.sanitized(String($0.prefix(64))) } ?? "none" }
        return "JSONWebKeySet(\(keys.count) keys: \(identifiers.joined(separator: ", ")); \(skippedKeys.count) skipped)"
    }
}

/// Why a JWK Set or one of its keys cannot be used.
///
/// All operations are thread-safe.
public enum JSONWebKeySetError: Error, Sendable, Hashable, CustomStringConvertible {

    /// The document is not a JWK Set; the value says why.
    case malformed(String)

    /// The key cannot verify signatures here; the values say which key and why.
    case unusableKey(keyID: String?, reason: String)

    /// What is wrong; key identifiers and reasons are cleaned as a server's text is (registered
    /// secrets and credential-shaped words redacted).
    public var description: String {
        switch self {
        case .malformed(let reason):
            return "malformed key set: \(SecretRedactor.sanitized(reason))"
        case .unusableKey(let keyID, let reason):
            let name = keyID.map { SecretRedactor.sanitized(String($0.prefix(64))) } ?? "without kid"
            return "unusable key \(name): \(SecretRedactor.sanitized(reason))"
        }
    }
}

extension JSONWebKeySetError: CustomReflectable {

    /// The description only (cleaned): `dump` never shows a key identifier or a reason as given.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description], displayStyle: .enum)
    }
}

extension JSONWebKeySet: CustomReflectable {

    /// The keys and the skipped keys, each as its own mirror shows it: `dump` never shows a key
    /// identifier as the set carried it.
    public var customMirror: Mirror {
        Mirror(self, children: ["keys": keys, "skippedKeys": skippedKeys], displayStyle: .struct)
    }
}

extension JSONWebKeySet.SkippedKey: CustomReflectable {

    /// The key identifier and the reason, cleaned as a server's text is.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "keyID": keyID.map { SecretRedactor.sanitized(String($0.prefix(64))) } ?? "none",
                "reason": SecretRedactor.sanitized(reason),
            ],
            displayStyle: .struct
        )
    }
}
