import Foundation

/// A JWS compact serialization (`header.payload.signature`, RFC 7515 §7.1) split and its parts
/// decoded from base64url, in one pass over the token's UTF-8: what ``JSONWebSignature`` and the
/// session manager's claims reader share.
package struct CompactSerialization: Sendable {

    /// Why a token is not three base64url parts.
    package enum Failure: Error, Sendable, Hashable {
        /// Not exactly two dots.
        case notThreeParts
        /// A part is not canonical base64url.
        case notBase64URL
    }

    /// The decoded protected header.
    package let header: [UInt8]

    /// The decoded payload.
    package let payload: [UInt8]

    /// The decoded signature; empty when the split was asked not to decode it.
    package let signature: [UInt8]

    /// The bytes a signature covers, `header.payload` as they appear in the token; empty when the
    /// split was asked not to decode the signature.
    package let signingInput: [UInt8]

    /// Splits `token` and decodes its parts.
    ///
    /// - Parameters:
    ///   - token: The compact serialization.
    ///   - decodesSignature: Whether the third part is decoded (and checked) too.
    /// - Throws: ``Failure``.
    package init(_ token: String, decodesSignature: Bool = true) throws(Failure) {
        var token = token
        let result = token.withUTF8 { bytes -> Result<CompactSerialization, Failure> in
            Result { () throws(Failure) in try CompactSerialization(bytes, decodesSignature: decodesSignature) }
        }
        self = try result.get()
    }

    private init(_ bytes: UnsafeBufferPointer<UInt8>, decodesSignature: Bool) throws(Failure) {
        // The dots, found with memchr: the only scan of the token that is not a decoding.
        func dot(after start: Int) -> Int? {
            guard start < bytes.count, let base = bytes.baseAddress,
                let found = memchr(base + start, Int32(UInt8(ascii: ".")), bytes.count - start)
            else { return nil }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
        guard let first = dot(after: 0), let second = dot(after: first + 1), dot(after: second + 1) == nil else {
            throw .notThreeParts
        }
        let dots = (first: first, second: second)
        func part(_ range: Range<Int>) throws(Failure) -> [UInt8] {
            guard let decoded = Base64URL.decodeBytes(UnsafeBufferPointer(rebasing: bytes[range])) else {
                throw .notBase64URL
            }
            return decoded
        }
        header = try part(0..<dots.first)
        payload = try part((dots.first + 1)..<dots.second)
        signature = decodesSignature ? try part((dots.second + 1)..<bytes.count) : []
        signingInput = decodesSignature ? Array(UnsafeBufferPointer(rebasing: bytes[..<dots.second])) : []
    }
}
