import AuthSessionProviders
import Foundation

/// The nonce of one Sign in with Apple request: a random value the app keeps, whose SHA-256 the
/// request carries and Apple puts in the identity token, so a token replayed from another
/// request is refused.
///
/// ```swift
/// let nonce = SignInWithAppleNonce()
/// request.nonce = nonce.hashed                        // ASAuthorizationAppleIDRequest
/// try await provider.signIn(with: credential, nonce: nonce)
/// ```
///
/// Make a new one for every request. ``description`` never shows the raw value.
///
/// All operations are thread-safe.
public struct SignInWithAppleNonce: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{

    /// The value the app keeps: 32 random bytes, base64url.
    public let raw: String

    /// What the request carries (`ASAuthorizationAppleIDRequest.nonce`) and the identity token's
    /// `nonce` claim must equal: the SHA-256 of ``raw``'s UTF-8, in lowercase hexadecimal.
    public var hashed: String { Self.hash(raw) }

    /// A new random nonce.
    public init() {
        var generator = SystemRandomNumberGenerator()
        raw = Base64URL.encode((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// A nonce the app made itself.
    ///
    /// - Parameter raw: The value it keeps.
    public init(raw: String) {
        self.raw = raw
    }

    /// The SHA-256 of `text`'s UTF-8, in lowercase hexadecimal.
    static func hash(_ text: String) -> String {
        SHA256.hash(Array(text.utf8)).map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
        }.joined()
    }

    /// `SignInWithAppleNonce(hashed: …)`: the hashed value only.
    public var description: String { "SignInWithAppleNonce(hashed: \(hashed))" }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror with the hashed value only.
    public var customMirror: Mirror {
        Mirror(self, children: ["hashed": hashed], displayStyle: .struct)
    }
}
