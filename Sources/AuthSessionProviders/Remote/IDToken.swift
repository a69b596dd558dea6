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
    public static let maximumLength = JSONWebSignature.maximumLength

    /// The registered claims, which are not profile claims, in the slots of ``knownClaims``.
    private enum KnownClaim: Int, CaseIterable {
        case iss, sub, aud, azp, exp, iat, nbf, nonce, name, email, jti, atHash, cHash, authTime, acr, amr, sid

        /// The claim's name as a token spells it.
        var name: String {
            switch self {
            case .atHash: "at_hash"
            case .cHash: "c_hash"
            case .authTime: "auth_time"
            default: "\(self)"
            }
        }
    }

    /// The registered claims, read into slots rather than hashed: one pass over the payload.
    private static let knownClaims = JOSEKnownNames(KnownClaim.allCases.map(\.name))

    /// Reads the claims of a compact-serialized JWT (`header.payload.signature`).
    ///
    /// - Parameter token: The ID token.
    /// - Throws: `IDTokenValidationError.malformed(_:)` for anything but three base64url parts
    ///   with a JSON object header and payload, for a header or payload that names a member
    ///   twice (at any depth), for a header without a string `alg` or with `alg` `none`, with
    ///   `crit`, or with a `kid` that is not a string, and for an empty signature: the header is
    ///   held to what `JSONWebSignature(compact:)` holds it to, so the two readers accept the same
    ///   tokens;
    ///   `IDTokenValidationError.missingClaim(_:)` for a missing or mistyped `iss`, `sub`,
    ///   `aud`, `exp` or `iat`.
    public init(parsing token: String) throws(IDTokenValidationError) {
        guard token.utf8.count <= Self.maximumLength else {
            throw .malformed("longer than \(Self.maximumLength) bytes")
        }
        let parts: CompactSerialization
        do throws(CompactSerialization.Failure) {
            parts = try CompactSerialization(token)
        } catch {
            switch error {
            case .notThreeParts: throw .malformed("not three dot-separated parts")
            case .notBase64URL: throw .malformed("a part is not base64url")
            }
        }
        // One strict pass over each part (RFC 7515 §5.2: a member named twice is refused, never
        // read one way here and another elsewhere; the name is not quoted: a server may echo
        // anything into it). Encoding faults are reported first, as either part has them.
        let header: Result<[String: JSONValue], JOSEJSONError> = Result { () throws(JOSEJSONError) in
            try JSONValue.readObject(parts.header)
        }
        let claims: Result<JOSEObject, JOSEJSONError> = Result { () throws(JOSEJSONError) in
            try JSONValue.readObject(parts.payload, knowing: Self.knownClaims)
        }
        switch (header, claims) {
        case (.success(let header), .success(let claims)):
            guard let algorithm = header["alg"]?.stringValue, !algorithm.isEmpty, algorithm.lowercased() != "none"
            else {
                throw .malformed("unsecured (alg none or missing)")
            }
            guard header["crit"] == nil else { throw .malformed("header names critical extensions") }
            switch header["kid"] {
            case nil, .string?: break
            default: throw .malformed("kid is not a string")
            }
            guard !parts.signature.isEmpty else { throw .malformed("empty signature") }
            try self.init(claims: claims)
        case (.failure(.notUTF8), _), (_, .failure(.notUTF8)):
            throw .malformed("header or payload is not UTF-8 JSON")
        case (.failure(.invalid), _), (_, .failure(.invalid)):
            throw .malformed("header or payload is not a JSON object")
        case (.failure(.duplicateMember), _):
            throw .malformed("header names a member twice")
        case (_, .failure(.duplicateMember)):
            throw .malformed("claims name a member twice")
        }
    }

    /// Reads the claims of a token `JSONWebSignature.init(compact:)` has already split and
    /// decoded: its payload is read once more, its header not at all (the split refused an
    /// unsecured one). What a client that verifies the signature and then the claims calls.
    ///
    /// - Parameter token: The split token.
    /// - Throws: `IDTokenValidationError.malformed(_:)` for a payload that is not a JSON object
    ///   or names a member twice (at any depth); `IDTokenValidationError.missingClaim(_:)` as
    ///   ``init(parsing:)`` does.
    public init(_ token: JSONWebSignature) throws(IDTokenValidationError) {
        let claims: JOSEObject
        do throws(JOSEJSONError) {
            claims = try JSONValue.readObject(token.payloadBytes, knowing: Self.knownClaims)
        } catch {
            switch error {
            case .notUTF8: throw .malformed("header or payload is not UTF-8 JSON")
            case .invalid: throw .malformed("header or payload is not a JSON object")
            case .duplicateMember: throw .malformed("claims name a member twice")
            }
        }
        try self.init(claims: claims)
    }

    private init(claims: JOSEObject) throws(IDTokenValidationError) {
        func claim(_ known: KnownClaim) -> JSONValue? {
            claims.known[known.rawValue]
        }
        func string(_ known: KnownClaim) throws(IDTokenValidationError) -> String {
            guard let value = claim(known)?.stringValue, !value.isEmpty else { throw .missingClaim(known.name) }
            return value
        }
        func date(_ known: KnownClaim) throws(IDTokenValidationError) -> Date {
            guard let seconds = claim(known)?.numberValue, seconds.isFinite else { throw .missingClaim(known.name) }
            return Date(timeIntervalSince1970: seconds)
        }

        issuer = try string(.iss)
        subject = try string(.sub)
        switch claim(.aud) {
        case .string(let audience)?:
            self.audience = [audience]
        case .array(let values)? where !values.isEmpty && values.allSatisfy({ $0.stringValue != nil }):
            audience = values.compactMap(\.stringValue)
        default:
            throw .missingClaim("aud")
        }
        authorizedParty = claim(.azp)?.stringValue
        expiresAt = try date(.exp)
        issuedAt = try date(.iat)
        if claim(.nbf) != nil {
            notBefore = try date(.nbf)
        } else {
            notBefore = nil
        }
        nonce = claim(.nonce)?.stringValue
        name = claim(.name)?.stringValue
        email = claim(.email)?.stringValue
        profile = claims.otherStrings
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
    /// - Throws: The first `IDTokenValidationError` found.
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
