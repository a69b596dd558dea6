import Foundation

/// The claims of an OpenID Connect ID token, read from its payload.
///
/// Reading and ``validate(issuer:clientID:expectedNonce:now:leeway:checksTimeClaims:)`` check the
/// claims only; the signature is an ``IDTokenSignatureVerifier``'s job (a
/// ``JSONWebKeySetVerifier`` with the issuer's keys). Claims alone catch a misconfigured or
/// mixed-up token, not a forged one: accept a token from any channel but the token endpoint (a
/// deep link, a push, another app) only once its signature is verified too.
///
/// All operations are thread-safe.
public struct IDTokenClaims: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{

    /// The issuer (`iss`).
    public var issuer: String

    /// The subject (`sub`): the user's stable identifier at the issuer.
    public var subject: String

    /// The audiences (`aud`, a string or an array of strings).
    public var audience: [String]

    /// The authorized party (`azp`), if present.
    public var authorizedParty: String?

    /// When the token expires (`exp`).
    public var expiresAt: Date

    /// When the token was issued (`iat`).
    public var issuedAt: Date

    /// The token is not valid before this date (`nbf`), if present.
    public var notBefore: Date?

    /// The `nonce` the authorization request sent, if present.
    public var nonce: String?

    /// The user's display name (`name`), if present.
    public var name: String?

    /// The user's email address (`email`), if present.
    public var email: String?

    /// Other string-valued profile claims (`preferred_username`, `given_name`, `family_name`, ...).
    public var profile: [String: String]

    /// The largest ID token parsed, in bytes.
    public static let maximumLength = 64 * 1024

    /// The registered claims, which are not profile claims.
    private static let registered: Set<String> = [
        "iss", "sub", "aud", "azp", "exp", "iat", "nbf", "nonce", "name", "email", "jti", "at_hash", "c_hash",
        "auth_time", "acr", "amr", "sid",
    ]

    /// Reads the claims of a compact-serialized JWT (`header.payload.signature`).
    ///
    /// - Parameter token: The ID token.
    /// - Throws: ``IDTokenValidationError/malformed(_:)`` for anything but three base64url parts
    ///   with a JSON object header and payload, for a header or payload that names a member
    ///   twice (at any depth), or an `alg` of `none`;
    ///   ``IDTokenValidationError/missingClaim(_:)`` for a missing or mistyped `iss`, `sub`,
    ///   `aud`, `exp` or `iat`.
    public init(parsing token: String) throws(IDTokenValidationError) {
        guard token.utf8.count <= Self.maximumLength else {
            throw .malformed("longer than \(Self.maximumLength) bytes")
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("not three dot-separated parts") }
        guard let headerData = Base64URL.decode(parts[0]), let payloadData = Base64URL.decode(parts[1]) else {
            throw .malformed("a part is not base64url")
        }
        guard JSONValue.isUTF8Text(headerData), JSONValue.isUTF8Text(payloadData) else {
            throw .malformed("header or payload is not UTF-8 JSON")
        }
        guard let header = try? JSONValue.decode(headerData).objectValue,
            let payload = try? JSONValue.decode(payloadData).objectValue
        else {
            throw .malformed("header or payload is not a JSON object")
        }
        // RFC 7515 §5.2: a member named twice is refused, never read one way here and another
        // elsewhere. The name is not quoted: a server may echo anything into it.
        guard !JSONValue.hasDuplicateMembers(headerData) else { throw .malformed("header names a member twice") }
        guard !JSONValue.hasDuplicateMembers(payloadData) else { throw .malformed("claims name a member twice") }
        guard let algorithm = header["alg"]?.stringValue, algorithm.lowercased() != "none" else {
            throw .malformed("unsecured (alg none or missing)")
        }

        func string(_ name: String) throws(IDTokenValidationError) -> String {
            guard let value = payload[name]?.stringValue, !value.isEmpty else { throw .missingClaim(name) }
            return value
        }
        func date(_ name: String) throws(IDTokenValidationError) -> Date {
            guard let seconds = payload[name]?.numberValue, seconds.isFinite else { throw .missingClaim(name) }
            return Date(timeIntervalSince1970: seconds)
        }

        issuer = try string("iss")
        subject = try string("sub")
        switch payload["aud"] {
        case .string(let audience)?:
            self.audience = [audience]
        case .array(let values)? where !values.isEmpty && values.allSatisfy({ $0.stringValue != nil }):
            audience = values.compactMap(\.stringValue)
        default:
            throw .missingClaim("aud")
        }
        authorizedParty = payload["azp"]?.stringValue
        expiresAt = try date("exp")
        issuedAt = try date("iat")
        if payload["nbf"] != nil {
            notBefore = try date("nbf")
        } else {
            notBefore = nil
        }
        nonce = payload["nonce"]?.stringValue
        name = payload["name"]?.stringValue
        email = payload["email"]?.stringValue
        profile = payload.stringMembers(excluding: Self.registered)
    }

    /// Checks the claims as OpenID Connect Core §3.1.3.7 asks, except the signature.
    ///
    /// - `iss` equals `issuer` exactly;
    /// - `aud` contains `clientID`; `azp`, when present, equals it, and must be present when
    ///   there are several audiences;
    /// - `exp` is after `now − leeway`; `iat` is before `now + leeway`; `nbf`, when present,
    ///   is before `now + leeway`;
    /// - `nonce` equals `expectedNonce` when one is expected.
    ///
    /// - Parameters:
    ///   - issuer: The issuer the client was configured with.
    ///   - clientID: The client's identifier.
    ///   - expectedNonce: The nonce the authorization request sent, if any.
    ///   - now: The current date.
    ///   - leeway: Seconds of clock difference tolerated; 60 by default.
    ///   - checksTimeClaims: Whether `exp`, `iat` and `nbf` are checked. A client checking the
    ///     ID token of a refresh passes `false`: the server has already rotated the tokens, and a
    ///     device clock minutes off must not throw the new tokens away (the old refresh token is
    ///     spent).
    /// - Throws: The first ``IDTokenValidationError`` found.
    public func validate(
        issuer: String,
        clientID: String,
        expectedNonce: String? = nil,
        now: Date,
        leeway: TimeInterval = 60,
        checksTimeClaims: Bool = true
    ) throws(IDTokenValidationError) {
        guard self.issuer == issuer else {
            throw .issuerMismatch(expected: issuer, actual: Self.shortened(self.issuer))
        }
        guard audience.contains(clientID) else {
            throw .audienceMismatch(expected: clientID, actual: audience.map(Self.shortened))
        }
        if let authorizedParty, authorizedParty != clientID {
            throw .authorizedPartyMismatch(expected: clientID, actual: Self.shortened(authorizedParty))
        }
        if audience.count > 1, authorizedParty == nil {
            throw .missingClaim("azp")
        }
        if checksTimeClaims {
            guard now.addingTimeInterval(-leeway) < expiresAt else { throw .expired(at: expiresAt) }
            guard issuedAt <= now.addingTimeInterval(leeway) else { throw .issuedInFuture(at: issuedAt) }
            if let notBefore, notBefore > now.addingTimeInterval(leeway) {
                throw .notYetValid(until: notBefore)
            }
        }
        if let expectedNonce, nonce != expectedNonce {
            throw .nonceMismatch
        }
    }

    /// The issuer, subject, audiences and expiry; no personal claim and no nonce.
    public var description: String {
        "IDTokenClaims(iss: \(Self.shortened(issuer)), sub: \(Self.shortened(subject)), "
            + "aud: \(audience.map(Self.shortened)), exp: \(expiresAt))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror with ``description``'s fields only, so `dump` shows no personal claim.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["issuer": issuer, "subject": subject, "audience": audience, "expiresAt": expiresAt],
            displayStyle: .struct
        )
    }

    /// The user the claims describe: `sub`, `name` (or `given_name family_name`), `email`, and
    /// the other profile claims.
    public var user: ManagedUser {
        ManagedUser(subject: subject, name: name, email: email, profile: profile)
    }

    private static func shortened(_ text: String) -> String {
        RemoteAuthError.sanitized(String(text.prefix(120)))
    }
}

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
        RemoteAuthError.sanitized(uncleanedDescription)
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
    static let registeredAlgorithms: Set<String> = [
        "HS256", "HS384", "HS512", "RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384",
        "PS512", "none", "EdDSA", "ES256K", "Ed25519", "Ed448",
    ]

    /// ` NAME` for a registered algorithm, and ` (not a registered algorithm)` for any other
    /// value, which is never shown.
    private static func registered(_ algorithm: String) -> String {
        registeredAlgorithms.contains(algorithm) ? " \(algorithm)" : " (not a registered algorithm)"
    }
}

extension ManagedUser {

    /// A user from OpenID Connect claims: the name is `name`, or `given_name family_name` when
    /// the server sent only those.
    package init(subject: String, name: String?, email: String?, profile: [String: String]) {
        let composed = [profile["given_name"], profile["family_name"]].compactMap { $0 }.joined(separator: " ")
        self.init(
            identifier: subject,
            name: name ?? (composed.isEmpty ? nil : composed),
            email: email,
            profile: profile
        )
    }
}
