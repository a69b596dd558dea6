import AuthSessionMocks
import AuthSessionProviders
import Foundation

/// ID-token signature checks: one verification beside what reading the same token costs.
enum SignatureBenchmarks {

    /// One verification of an ID token (`JSONWebKey.verifies`, the key already looked up) vs
    /// reading the token: splitting and decoding it (`JSONWebSignature(compact:)`) and reading its
    /// claims (`IDTokenClaims(parsing:)`).
    ///
    /// - Parameter signer: The key: RS256 with a 2048-bit modulus, or ES256.
    static func verification(_ signer: JWTSigner) -> Comparison {
        let now = Int(Date().timeIntervalSince1970)
        let token = signer.sign(claims: [
            "iss": "https://auth.example.com/o", "sub": "248289761001", "aud": "s6BhdRkqt3", "iat": now,
            "exp": now + 600, "nonce": "n-0S6_WzA2Mj", "email": "jane@example.com", "name": "Jane Doe",
            "at_hash": "77QmUPtjPfzWtF2AnpK9RQ",
        ])
        let signed = try! JSONWebSignature(compact: token)
        let key = signer.publicKey
        precondition(key.verifies(signed), "the benchmark's own token does not verify")
        let operations = signer.algorithm == "RS256" ? 2_000 : 200
        return Comparison(
            name: "\(signer.algorithm) verification",
            subjectLabel: "\(signer.algorithm) signature check",
            baselineLabel: "reading the token (JWS + claims)",
            unit: "ns/token",
            operations: operations,
            goal: nil,
            subject: {
                var valid = 0
                for _ in 0..<operations where key.verifies(signed) {
                    valid += 1
                }
                blackHole(valid)
            },
            baseline: {
                var read = 0
                for _ in 0..<operations {
                    if let parsed = try? JSONWebSignature(compact: token),
                        let claims = try? IDTokenClaims(parsing: token)
                    {
                        read += parsed.signature.count + claims.subject.count
                    }
                }
                blackHole(read)
            }
        )
    }
}
