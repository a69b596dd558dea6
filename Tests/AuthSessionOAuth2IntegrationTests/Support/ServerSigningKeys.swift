import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real server's ID-token signing keys: where it publishes them, what it publishes, and a
/// discovered service whose verifier fetches them.
enum ServerSigningKeys {

    /// One published key: its `kid`, and its RFC 7638 thumbprint computed here.
    struct PublishedKey: Sendable, Hashable {
        var keyID: String?
        var algorithm: String?
        var thumbprint: String
        /// The public key as the canonical JWK members (`{"e","kty","n"}`, RFC 7638 §3.3).
        var canonicalJSON: String
    }

    /// The server's `jwks` URL.
    static func jwksURL() throws -> URL {
        try RealServer.require().endpoints.jwks
    }

    /// The keys the server publishes now, in its order (active first), read from the raw document.
    static func published() async throws -> [PublishedKey] {
        let request = URLRequest(url: try jwksURL(), cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 10)
        let response = try await URLSessionTransport().send(request, maximumResponseSize: 256 * 1024)
        try #require(response.statusCode == 200, "the JWKS answered HTTP \(response.statusCode)")
        let document = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
        let keys = try #require(document["keys"] as? [[String: Any]])
        return try keys.map { key in
            let modulus = try #require(key["n"] as? String)
            let exponent = try #require(key["e"] as? String)
            let kty = try #require(key["kty"] as? String)
            let canonical = #"{"e":"\#(exponent)","kty":"\#(kty)","n":"\#(modulus)"}"#
            return PublishedKey(
                keyID: key["kid"] as? String,
                algorithm: key["alg"] as? String,
                thumbprint: Base64URL.encode(SHA256.hash(Array(canonical.utf8))),
                canonicalJSON: canonical
            )
        }
    }

    /// A service made by discovery from the real metadata (so its `jwksURI` is the server's),
    /// for the client of `role`.
    static func discoveredService(
        role: String,
        scope: [String],
        transport: any OAuth2HTTPTransport = URLSessionTransport(),
        signatureVerifier: (any IDTokenSignatureVerifier)? = nil
    ) async throws -> OAuth2Service {
        let server = try RealServer.require()
        let client = try #require(server.clients[role], "no client for role \(role)")
        return try await OAuth2Service.discover(
            issuer: try #require(URL(string: server.issuer)),
            client: OAuth2Client(
                id: client.clientId,
                authentication: client.clientSecret.map { .clientSecretBasic(secret: $0) } ?? .none
            ),
            scope: scope,
            transport: transport,
            clock: SystemClock(),
            signatureVerifier: signatureVerifier
        )
    }

    /// The `kid` in `idToken`'s header.
    static func keyID(of idToken: String) throws -> String? {
        try JSONWebSignature(compact: idToken).keyID
    }
}

/// What `scripts/oauth-test-server rotate-key` printed: the restarted server's kids, active first.
struct KeyRotation: Decodable, Sendable {
    var activeKid: String
    var publishedKids: [String]
}

extension ServerScript {

    /// Gives the running server a new signing key and restarts it (same port, database and
    /// state folder), keeping the replaced key published when `keepOld`. Blocks until the
    /// restarted server answers: call it off the cooperative pool.
    static func rotateKey(keepOld: Bool) throws -> KeyRotation {
        let server = try RealServer.require()
        let stateDir = try #require(server.stateDir, "the endpoints file names no state folder")
        let process = Process()
        // The script restarts the server, which inherits the signal mask of the thread that spawns
        // it; threads of this process block SIGTERM, and a server that blocks it outlives `stop`'s
        // SIGTERM (stop then waits 5 s and kills it). So the script runs with an empty mask.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c",
            "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
            path, "rotate-key", "--state-dir", stateDir, keepOld ? "--keep-old" : "--drop-old",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // The restarted server writes to its own log, never to this pipe: the read ends with the script.
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(
            process.terminationStatus == 0,
            "oauth-test-server rotate-key exited \(process.terminationStatus)"
        )
        return try JSONDecoder().decode(KeyRotation.self, from: printed)
    }
}

/// The real transport, watched: it counts the key-set fetches, keeps the ID tokens the token
/// endpoint issued (as issued), and can replace each one with a forgery before the client reads it.
final class WatchingTransport: OAuth2HTTPTransport {

    private struct State {
        var keySetFetches = 0
        var issuedIDTokens: [String] = []
    }

    private let base = URLSessionTransport()
    private let jwksURL: URL
    private let forge: (@Sendable (String) throws -> String)?
    private let state = ConcurrencySafeContainer(State())

    /// - Parameters:
    ///   - jwksURL: The key set's URL, whose requests are counted.
    ///   - forge: Replaces each issued ID token before the client sees it.
    init(jwksURL: URL, forge: (@Sendable (String) throws -> String)? = nil) {
        self.jwksURL = jwksURL
        self.forge = forge
    }

    /// The requests sent to the key set's URL.
    var keySetFetches: Int { state.withLock { $0.keySetFetches } }

    /// Every ID token the server issued through this transport, oldest first, before any forgery.
    var issuedIDTokens: [String] { state.withLock { $0.issuedIDTokens } }

    func send(_ request: URLRequest, maximumResponseSize: Int) async throws(RemoteAuthError) -> OAuth2HTTPResponse {
        if request.url == jwksURL {
            state.withLock { $0.keySetFetches += 1 }
        }
        var response = try await base.send(request, maximumResponseSize: maximumResponseSize)
        guard var object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
            let idToken = object["id_token"] as? String
        else {
            return response
        }
        state.withLock { $0.issuedIDTokens.append(idToken) }
        if let forge {
            guard let forged = try? forge(idToken) else {
                throw RemoteAuthError(.invalidResponse("the test could not forge the ID token"))
            }
            object["id_token"] = forged
            guard let body = try? JSONSerialization.data(withJSONObject: object) else {
                throw RemoteAuthError(.invalidResponse("the test could not encode the forged answer"))
            }
            response.body = body
        }
        return response
    }
}

/// Forged versions of a real ID token.
enum IDTokenForgery {

    /// The token with one byte of its payload changed: the `sub` claim's first character (`"1"`
    /// becomes `"2"`, another user), header and signature kept.
    static func oneByteChanged(_ idToken: String) throws -> String {
        let parts = idToken.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        var payload = Array(try #require(Base64URL.decode(parts[1])))
        let text = String(decoding: payload, as: UTF8.self)
        let claim = try #require(text.range(of: #""sub""#), "no sub claim")
        let value = try #require(text[claim.upperBound...].range(of: "\""), "no sub value")
        let offset = text.utf8.distance(from: text.startIndex, to: value.upperBound)
        payload[offset] = payload[offset] == UInt8(ascii: "2") ? UInt8(ascii: "3") : UInt8(ascii: "2")
        return "\(parts[0]).\(Base64URL.encode(payload)).\(parts[2])"
    }

    /// The token's payload signed again by the test kit's RSA key A, under the token's own `kid`.
    static func resignedWithTestKey(_ idToken: String) throws -> String {
        let parts = idToken.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        let payload = try #require(Base64URL.decode(parts[1]))
        return JWTSigner(.rs256(.testKeyA), keyID: try ServerSigningKeys.keyID(of: idToken)).sign(payload: payload)
    }

    /// The token's payload with an `HS256` header under its own `kid`, MACed with `secret` (the
    /// classic attack: the issuer's public key used as an HMAC secret).
    static func hs256(_ idToken: String, secret: [UInt8]) throws -> String {
        let parts = idToken.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        var header: [String: Any] = ["alg": "HS256", "typ": "JWT"]
        header["kid"] = try ServerSigningKeys.keyID(of: idToken)
        let input =
            Base64URL.encode(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]))
            + "." + String(parts[1])
        return input + "." + Base64URL.encode(hmacSHA256(key: secret, message: Array(input.utf8)))
    }

    /// HMAC-SHA256 (RFC 2104).
    static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var block = key.count > 64 ? SHA256.hash(key) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        let inner = SHA256.hash(block.map { $0 ^ 0x36 } + message)
        return SHA256.hash(block.map { $0 ^ 0x5c } + inner)
    }
}

/// `.build/id-token-signatures.txt`: one line per result of this run, rewritten as each arrives.
enum IDTokenSignatureReport {

    static let fileName = "id-token-signatures.txt"

    private static let lines = ConcurrencySafeContainer<[String: String]>([:])
    private static let order = ["verified", "forged", "rotation"]

    /// Records `line` under `key` and rewrites the file with every line of this run.
    static func record(_ key: String, _ line: String) throws {
        print("\(key): \(line)")
        let all = lines.withLock { lines in
            lines[key] = line
            return order.compactMap { key in lines[key].map { "\(key): \($0)" } }
        }
        try ResultFile.write(all.joined(separator: "\n"), to: fileName)
    }
}
