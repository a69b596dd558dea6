import Foundation

/// A JWT in the JWS compact serialization (`header.payload.signature`, RFC 7515 §7.1), split and
/// decoded but not yet trusted: what an `IDTokenSignatureVerifier` checks.
///
/// Parsing reads only what a verifier needs from the protected header: `alg` and `kid`. It
/// refuses a header with `crit` (RFC 7515 §4.1.11: this package understands no extension, so it
/// must not accept one it would ignore). Keys a header names or carries (`jku`, `jwk`, `x5u`,
/// `x5c`) are never used: a token cannot choose the key that verifies it.
///
/// ``description`` shows the algorithm when it is a registered JWS algorithm, and whether there
/// is a key identifier; never the token, and never a header value as it came (a server may echo
/// anything into a header).
///
/// All operations are thread-safe.
public struct JSONWebSignature: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{

    /// The header's `alg`: the algorithm the token claims it was signed with. A verifier takes
    /// the algorithm from the key, and refuses a token whose claim differs.
    public let algorithm: String

    /// The header's `kid`, if present: which of the issuer's keys signed the token.
    public let keyID: String?

    /// The bytes the signature covers: the ASCII of `header.payload` as they appear in the token.
    public let signingInput: [UInt8]

    /// The decoded payload (the claims, for a JWT).
    public var payload: Data { Data(payloadBytes) }

    /// The decoded payload's bytes, as the reader of claims takes them (no copy into `Data`).
    package let payloadBytes: [UInt8]

    /// The decoded signature.
    public let signature: [UInt8]

    /// The header parameters read, in their slots (``HeaderParameter``'s raw values).
    private static let knownHeaderParameters = JOSEKnownNames(HeaderParameter.allCases.map { "\($0)" })

    /// The header parameters a verifier reads.
    private enum HeaderParameter: Int, CaseIterable {
        case alg, kid, crit
    }

    /// The longest token read, in bytes (64 KiB): a longer one is refused as hostile before any
    /// decoding.
    public static let maximumLength = 64 * 1024

    /// Splits and decodes a compact JWS.
    ///
    /// - Parameter compact: The token.
    /// - Throws: ``IDTokenValidationError/malformed(_:)`` for anything but three base64url parts
    ///   (at most ``maximumLength`` bytes in all) whose header is a JSON object with
    ///   a string `alg` and, if present, a string `kid`; for a header that names a member twice
    ///   (at any depth); for a `crit` header; and for `alg` `none`, or an empty signature.
    public init(compact: String) throws(IDTokenValidationError) {
        guard compact.utf8.count <= Self.maximumLength else {
            throw .malformed("longer than \(Self.maximumLength) bytes")
        }
        let parts: CompactSerialization
        do throws(CompactSerialization.Failure) {
            parts = try CompactSerialization(compact)
        } catch {
            switch error {
            case .notThreeParts: throw .malformed("not three dot-separated parts")
            case .notBase64URL: throw .malformed("a part is not base64url")
            }
        }
        let header: JOSEObject
        do throws(JOSEJSONError) {
            header = try JSONValue.readObject(parts.header, knowing: Self.knownHeaderParameters)
        } catch {
            // RFC 7515 §5.2: a member named twice is refused, never read one way here and another
            // elsewhere. The name is not quoted: a server may echo anything into it.
            switch error {
            case .notUTF8: throw .malformed("header is not UTF-8 JSON")
            case .duplicateMember: throw .malformed("header names a member twice")
            case .invalid: throw .malformed("header is not a JSON object")
            }
        }
        guard let algorithm = header.known[HeaderParameter.alg.rawValue]?.stringValue, !algorithm.isEmpty else {
            throw .malformed("header has no alg")
        }
        guard algorithm.lowercased() != "none" else { throw .malformed("unsecured (alg none)") }
        guard header.known[HeaderParameter.crit.rawValue] == nil else {
            throw .malformed("header names critical extensions")
        }
        switch header.known[HeaderParameter.kid.rawValue] {
        case nil: keyID = nil
        case .string(let value)?: keyID = value
        default: throw .malformed("kid is not a string")
        }
        guard !parts.signature.isEmpty else { throw .malformed("empty signature") }
        self.algorithm = algorithm
        self.signingInput = parts.signingInput
        self.payloadBytes = parts.payload
        self.signature = parts.signature
    }

    /// The algorithm (a registered JWS algorithm's name, or `unregistered`) and whether there is a
    /// key identifier (`present` or `none`); never the token, never a header value as it came.
    public var description: String {
        "JSONWebSignature(alg: \(displayedAlgorithm), kid: \(keyID == nil ? "none" : "present"))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror with the algorithm and the key identifier as ``description`` shows them: `dump`
    /// never shows the token or a header value as it came.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["algorithm": displayedAlgorithm, "keyID": keyID == nil ? "none" : "present"],
            displayStyle: .struct
        )
    }

    private var displayedAlgorithm: String {
        IDTokenValidationError.registeredAlgorithms.contains(algorithm) ? algorithm : "unregistered"
    }
}
