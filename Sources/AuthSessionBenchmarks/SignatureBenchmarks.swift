import AuthSessionMocks
import AuthSessionProviders
import Foundation

/// ID-token signature checks: one verification beside what reading the same token costs.
enum SignatureBenchmarks {

    /// The claims of a typical ID token: with an RS256 signature (2048 bits), about 1 KB.
    static func typicalClaims() -> [String: Any] {
        let now = Int(Date().timeIntervalSince1970)
        return [
            "iss": "https://auth.example.com/o", "sub": "248289761001", "aud": "s6BhdRkqt3", "iat": now,
            "exp": now + 600, "auth_time": now - 30, "nonce": "n-0S6_WzA2Mj", "email": "jane@example.com",
            "email_verified": true, "name": "Jane Doe", "given_name": "Jane", "family_name": "Doe",
            "preferred_username": "jane.doe", "locale": "en-GB", "sid": "08a5019c-17e1-4977-8f42-65a12843ea02",
            "at_hash": "77QmUPtjPfzWtF2AnpK9RQ", "amr": ["pwd", "mfa"], "acr": "urn:mace:incommon:iap:silver",
            "picture": "https://auth.example.com/avatars/248289761001.png",
        ]
    }

    /// Reading an ID token (splitting and decoding it with `JSONWebSignature(compact:)`, reading its
    /// claims from it with `IDTokenClaims(_:)`, as a client that checks both does) vs one RS256 verification of the same token (the key
    /// already looked up): reading must cost at most a tenth of the check it prepares.
    static func reading() -> Comparison {
        let signer = JWTSigner(.rs256(.testKeyA), keyID: "bench")
        let token = signer.sign(claims: typicalClaims())
        let signed = try! JSONWebSignature(compact: token)
        let key = signer.publicKey
        precondition(key.verifies(signed), "the benchmark's own token does not verify")
        let operations = 2_000
        return Comparison(
            name: "reading a \(token.utf8.count)-byte ID token",
            subjectLabel: "reading the token (JWS + claims)",
            baselineLabel: "RS256 signature check",
            unit: "ns/token",
            operations: operations,
            goal: 0.1,
            subject: {
                var read = 0
                for _ in 0..<operations {
                    if let parsed = try? JSONWebSignature(compact: token), let claims = try? IDTokenClaims(parsed) {
                        read += parsed.signature.count + claims.subject.count
                    }
                }
                blackHole(read)
            },
            baseline: {
                var valid = 0
                for _ in 0..<operations where key.verifies(signed) {
                    valid += 1
                }
                blackHole(valid)
            }
        )
    }

    /// One verification of an ID token (`JSONWebKey.verifies`, the key already looked up) vs
    /// reading the token as ``reading()`` does; for ES256 (RS256 is ``reading()``'s baseline).
    ///
    /// - Parameter signer: The key.
    static func verification(_ signer: JWTSigner) -> Comparison {
        let token = signer.sign(claims: typicalClaims())
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
                    if let parsed = try? JSONWebSignature(compact: token), let claims = try? IDTokenClaims(parsed) {
                        read += parsed.signature.count + claims.subject.count
                    }
                }
                blackHole(read)
            }
        )
    }
}
