import AuthSessionInterface
import Foundation

/// A session for tests, with an expiry you place exactly.
///
/// Its `description` never shows the token. The default token, ``defaultAccessToken``, is shaped
/// like a real one (a JWT), so a test that leaks it into a message is caught by the same
/// redaction that protects real tokens.
///
/// All operations are thread-safe.
public struct MockSession: AuthSessionProtocol, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{

    /// The token every mock session has unless a test gives another: a JWT-shaped string
    /// (`{"alg":"none"}`, `{"sub":"mock-user"}`), never a real credential.
    public static let defaultAccessToken = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJtb2NrLXVzZXIifQ.bW9jay1zaWduYXR1cmUtMDAwMQ"

    /// The bearer token.
    public var accessToken: String

    /// The expiry, in seconds since 1970.
    public var expiresAt: TimeInterval

    /// The owner.
    public var user: MockUser

    /// Creates a session that expires at `expiresAt`.
    ///
    /// - Parameters:
    ///   - accessToken: The bearer token.
    ///   - expiresAt: The expiry, in seconds since 1970.
    ///   - user: The owner.
    public init(accessToken: String = Self.defaultAccessToken, expiresAt: TimeInterval, user: MockUser = MockUser()) {
        self.accessToken = accessToken
        self.expiresAt = expiresAt
        self.user = user
    }

    /// Creates a session that expires `seconds` after `now`.
    ///
    /// - Parameters:
    ///   - seconds: Time left; negative for a session that has already expired.
    ///   - now: The reference date; use your test clock's `now`.
    ///   - accessToken: The bearer token.
    ///   - user: The owner.
    public init(
        expiresIn seconds: TimeInterval,
        from now: Date = Date(),
        accessToken: String = Self.defaultAccessToken,
        user: MockUser = MockUser()
    ) {
        self.init(accessToken: accessToken, expiresAt: now.timeIntervalSince1970 + seconds, user: user)
    }

    /// The user and the expiry; the token is shown as `<redacted>`.
    public var description: String {
        "MockSession(user: \(user.identifier), expiresAt: \(expiresAt), accessToken: <redacted>)"
    }

    /// The same as ``description``: `debugPrint` never shows the token either.
    public var debugDescription: String { description }

    /// The user and the expiry, with the token replaced: `dump` never shows it.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["user": user, "expiresAt": expiresAt, "accessToken": "<redacted>"],
            displayStyle: .struct
        )
    }
}
