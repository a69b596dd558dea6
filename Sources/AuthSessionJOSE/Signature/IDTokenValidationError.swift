import AuthSessionRedaction
import Foundation

/// Why an ID token was rejected.
///
/// All operations are thread-safe.
public enum IDTokenValidationError: Error, Sendable, Hashable, CustomStringConvertible {

    /// Not a compact JWT with JSON header and payload, or unsecured; the value says which.
    case malformed(String)

    /// A required claim is missing or has the wrong type.
    case missingClaim(String)

    /// `iss` is not the configured issuer.
    case issuerMismatch(expected: String, actual: String)

    /// `aud` does not contain the client's identifier.
    case audienceMismatch(expected: String, actual: [String])

    /// `azp` is present and is not the client's identifier.
    case authorizedPartyMismatch(expected: String, actual: String)

    /// `exp` has passed (beyond the leeway).
    case expired(at: Date)

    /// `iat` is in the future (beyond the leeway).
    case issuedInFuture(at: Date)

    /// `nbf` is in the future (beyond the leeway).
    case notYetValid(until: Date)

    /// `nonce` is not the one the authorization request sent.
    case nonceMismatch

    /// `sub` is not the session's user: a refresh answered with another user's tokens (OpenID
    /// Connect Core §12.2). The session is over; the tokens are not used.
    case subjectMismatch(expected: String, actual: String)

    /// The token claims an algorithm this package does not verify (only `RS256` and `ES256`;
    /// never `none`, never an HMAC with a public key as its secret).
    ///
    /// The value is the header's `alg` as the token carried it (shortened), for code to compare;
    /// ``description`` names it only when it is a registered JWS algorithm (RFC 7518), since a
    /// server may echo anything into a header.
    case unsupportedAlgorithm(String)

    /// No key of the issuer's key set verifies the token, as the set stands: none has its `kid`
    /// (or, without a `kid`, its algorithm), also after fetching it again; or the keys that do
    /// fail it while the set may not be fetched again yet to confirm (the issuer may have rotated
    /// a key a moment ago). Transient.
    ///
    /// The value is the header's `kid` as the token carried it (shortened), for code to compare;
    /// ``description`` never shows it.
    case unknownSigningKey(keyID: String?)

    /// The key with the token's `kid` verifies another algorithm than the one the token claims:
    /// the algorithm is the key's, never the token's alone.
    ///
    /// The values are as the token and the key set carried them (shortened); ``description``
    /// shows no `kid`, and an algorithm only when it is a registered JWS algorithm.
    case keyAlgorithmMismatch(keyID: String, keyAlgorithm: String, tokenAlgorithm: String)

    /// The signature is not the issuer's: the token was changed, or signed by another key.
    case invalidSignature

    /// What failed, with the claim values that are not secret (cleaned as a server's text is:
    /// registered secrets and credential-shaped words redacted). A header parameter (`alg`,
    /// `kid`) is named, never quoted: only a registered JWS algorithm's name is shown.
    public var description: String {
        SecretRedactor.sanitized(uncleanedDescription)
    }

    private var uncleanedDescription: String {
        switch self {
        case .malformed(let what): return "malformed: \(what)"
        case .missingClaim(let claim): return "missing or mistyped claim \(claim)"
        case .issuerMismatch(let expected, let actual): return "issuer \(actual) is not \(expected)"
        case .audienceMismatch(let expected, let actual): return "audience \(actual) does not contain \(expected)"
        case .authorizedPartyMismatch(let expected, let actual): return "authorized party \(actual) is not \(expected)"
        case .expired(let date): return "expired at \(date)"
        case .issuedInFuture(let date): return "issued in the future, at \(date)"
        case .notYetValid(let date): return "not valid before \(date)"
        case .nonceMismatch: return "nonce does not match the request's"
        case .subjectMismatch(let expected, let actual): return "subject \(actual) is not the session's \(expected)"
        case .unsupportedAlgorithm(let algorithm):
            return "the ID token's alg\(Self.registered(algorithm)) is not supported"
        case .unknownSigningKey(let keyID):
            return keyID == nil
                ? "no signing key for the ID token's alg in the issuer's key set"
                : "no signing key for the ID token's kid in the issuer's key set"
        case .keyAlgorithmMismatch(_, let keyAlgorithm, let tokenAlgorithm):
            return "the key the ID token's kid names verifies\(Self.registered(keyAlgorithm)) "
                + "another algorithm than the token's alg\(Self.registered(tokenAlgorithm))"
        case .invalidSignature: return "the signature does not verify with the issuer's key"
        }
    }

    /// The JWS algorithms IANA registers (RFC 7518 §3.1, RFC 8037, RFC 8812): names no secret can
    /// hide behind, shown as they are.
    package static let registeredAlgorithms: Set<String> = [
        "HS256", "HS384", "HS512", "RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384",
        "PS512", "none", "EdDSA", "ES256K", "Ed25519", "Ed448",
    ]

    /// ` NAME` for a registered algorithm, and ` (not a registered algorithm)` for any other
    /// value, which is never shown.
    private static func registered(_ algorithm: String) -> String {
        registeredAlgorithms.contains(algorithm) ? " \(algorithm)" : " (not a registered algorithm)"
    }
}

extension IDTokenValidationError: CustomReflectable {

    /// The description only (cleaned): `dump` never shows a claim as the token carried it, in a
    /// program that uses this module alone as in any other.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description], displayStyle: .enum)
    }
}
