import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

/// A key set download a test scripts: it answers with the current set (or an error), counts its
/// calls, and can be held shut until the test opens it.
final class ScriptedKeySetDownload: Sendable {

    private struct State {
        var answer: Result<JSONWebKeySet, RemoteAuthError>
        var calls = 0
        var isHeld = false
        var held: [CheckedContinuation<Void, Never>] = []
    }

    private let state: ConcurrencySafeContainer<State>

    init(_ signers: [JWTSigner]) {
        state = ConcurrencySafeContainer(State(answer: .success(JSONWebKeySet(keys: signers.map(\.publicKey)))))
    }

    /// From now on the download answers with `signers`' keys.
    func publish(_ signers: [JWTSigner]) {
        state.withLock { $0.answer = .success(JSONWebKeySet(keys: signers.map(\.publicKey))) }
    }

    /// From now on the download fails with `error`.
    func fail(with error: RemoteAuthError) {
        state.withLock { $0.answer = .failure(error) }
    }

    /// Downloads from now on wait until ``release()``.
    func hold() {
        state.withLock { $0.isHeld = true }
    }

    /// Lets every waiting download answer, and those after it.
    func release() {
        let waiting = state.withLock { state in
            state.isHeld = false
            defer { state.held = [] }
            return state.held
        }
        for continuation in waiting {
            continuation.resume()
        }
    }

    /// How many downloads started.
    var calls: Int { state.withLock { $0.calls } }

    /// How many downloads wait for ``release()``.
    var heldCount: Int { state.withLock { $0.held.count } }

    func download() async throws(RemoteAuthError) -> JSONWebKeySet {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isHeld = state.withLock { state in
                state.calls += 1
                if state.isHeld { state.held.append(continuation) }
                return state.isHeld
            }
            if !isHeld { continuation.resume() }
        }
        return try state.withLock { $0.answer }.get()
    }

    /// A verifier that downloads through this script on `clock`.
    func verifier(clock: ManualClock) -> JSONWebKeySetVerifier {
        JSONWebKeySetVerifier(clock: clock) { () throws(RemoteAuthError) in try await self.download() }
    }
}

/// Claims that carry nothing a signature check looks at.
func someClaims(_ subject: String = "user-1") -> [String: Any] {
    ["iss": "https://issuer.example", "sub": subject, "aud": "client", "iat": 1_800_000_000, "exp": 1_800_000_600]
}

/// The refusal inside a `RemoteAuthError`, or `nil` for another error.
func refusal(_ error: RemoteAuthError) -> IDTokenValidationError? {
    if case .invalidIDToken(let reason) = error.reason { return reason }
    return nil
}

/// What `verifier.verifySignature` threw for `token`, or `nil` when it verified.
func verificationError(_ verifier: any IDTokenSignatureVerifier, _ token: String) async -> RemoteAuthError? {
    do throws(RemoteAuthError) {
        let signed: JSONWebSignature
        do throws(IDTokenValidationError) {
            signed = try JSONWebSignature(compact: token)
        } catch {
            return RemoteAuthError(.invalidIDToken(error))
        }
        try await verifier.verifySignature(of: signed)
        return nil
    } catch {
        return error
    }
}

/// `token` with one byte of its payload changed (a claim value, so the JSON stays valid).
func tamperedPayload(_ token: String, replacing old: String = "user-1", with new: String = "user-2") -> String {
    let parts = token.split(separator: ".").map(String.init)
    let payload = String(decoding: Base64URL.decode(parts[1])!, as: UTF8.self)
    let changed = payload.replacingOccurrences(of: old, with: new)
    return parts[0] + "." + Base64URL.encode(Data(changed.utf8)) + "." + parts[2]
}

/// `token` with its header's `kid` replaced: its signature no longer verifies, which a verifier
/// that does not know the `kid` never gets to check.
func replacingKid(of token: String, with keyID: String) -> String {
    let parts = token.split(separator: ".").map(String.init)
    var header = try! JSONSerialization.jsonObject(with: Base64URL.decode(parts[0])!) as! [String: Any]
    header["kid"] = keyID
    let data = try! JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
    return Base64URL.encode(data) + "." + parts[1] + "." + parts[2]
}
