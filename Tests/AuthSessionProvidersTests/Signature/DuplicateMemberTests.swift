import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

/// RFC 7515 §5.2: a JWS header or claims set that names a member twice, at any depth, is refused
/// (`{"alg":"RS256","alg":"none"}` read as RS256 here and as none elsewhere), and the error quotes
/// no value.
@Suite struct DuplicateMemberTests {

    private let rs256 = JWTSigner(.rs256(.testKeyA), keyID: "rsa-a")
    private static let claims =
        #"{"iss":"https://issuer.example","sub":"user-1","aud":"client","iat":1800000000,"exp":1800000600}"#

    /// A token with these exact header and claims bytes, signed by the test key.
    private func token(header: String, claims: String = claims) -> String {
        let input = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data(claims.utf8))
        return input + "." + Base64URL.encode(rs256.signature(for: Array(input.utf8)))
    }

    static let duplicateHeaders = [
        #"{"alg":"RS256","kid":"rsa-a","alg":"none"}"#,
        #"{"alg":"RS256","kid":"rsa-a","kid":"hunter2"}"#,
        #"{"alg":"RS256","kid":"rsa-a","\u0061lg":"ES256"}"#,  // the same name, escaped
        #"{"alg":"RS256","kid":"rsa-a","x":{"a":1,"a":2}}"#,  // nested
        #"{"alg":"RS256","kid":"rsa-a","x":[{"b":1},{"c":{"d":1,"d":2}}]}"#,  // in an array
    ]

    @Test("a header that names a member twice, at any depth, is refused", arguments: duplicateHeaders)
    func duplicateHeaderMemberIsRefused(header: String) async throws {
        let compact = token(header: header)

        #expect(throws: IDTokenValidationError.malformed("header names a member twice")) {
            try JSONWebSignature(compact: compact)
        }
        #expect(throws: IDTokenValidationError.malformed("header names a member twice")) {
            try IDTokenClaims(parsing: compact)
        }
        let verifier = JSONWebKeySetVerifier(keySet: JSONWebKeySet(keys: [rs256.publicKey]))
        #expect(await verificationError(verifier, compact) != nil)
    }

    static let duplicateClaims = [
        #"{"iss":"https://issuer.example","sub":"user-1","sub":"admin","aud":"client","iat":1800000000,"exp":1800000600}"#,
        #"{"iss":"https://issuer.example","sub":"user-1","aud":"client","iat":1800000000,"exp":1800000600,"exp":1900000000}"#,
        #"{"iss":"https://issuer.example","sub":"user-1","aud":"client","iat":1800000000,"exp":1800000600,"address":{"country":"DE","country":"FR"}}"#,
        #"{"iss":"https://issuer.example","s\u0075b":"admin","sub":"user-1","aud":"client","iat":1800000000,"exp":1800000600}"#,
    ]

    @Test("a claims set that names a member twice, at any depth, is refused", arguments: duplicateClaims)
    func duplicateClaimIsRefused(claims: String) throws {
        let compact = token(header: #"{"alg":"RS256","kid":"rsa-a"}"#, claims: claims)

        #expect(throws: IDTokenValidationError.malformed("claims name a member twice")) {
            try IDTokenClaims(parsing: compact)
        }
        #expect(!String(describing: IDTokenValidationError.malformed("claims name a member twice")).contains("admin"))
    }

    @Test("the same name in different objects, or as a value, is no duplicate")
    func distinctObjectsMayShareNames() async throws {
        let header = #"{"alg":"RS256","kid":"rsa-a","x":{"alg":"a","kid":"kid"},"y":["alg","alg"]}"#
        let claims =
            #"{"iss":"https://issuer.example","sub":"user-1","aud":"client","iat":1800000000,"exp":1800000600,"a":{"sub":"x"},"b":{"sub":"y"},"note":"sub"}"#
        let compact = token(header: header, claims: claims)

        let parsed = try IDTokenClaims(parsing: compact)
        #expect(parsed.subject == "user-1")
        let verifier = JSONWebKeySetVerifier(keySet: JSONWebKeySet(keys: [rs256.publicKey]))
        #expect(await verificationError(verifier, compact) == nil)
    }
}
