import Foundation

/// A token whose revocation could not reach the server (offline, a server error), kept so that
/// it is revoked later: at the next launch, activation or ``ManagedSessionProvider/revokePendingTokens()``,
/// by this process or another sharing the store, until the server accepts it or the token could
/// no longer be valid (``notAfter``).
///
/// Neither ``description`` nor a `dump` shows the token.
public struct PendingRevocation: Sendable, Hashable, Codable, CustomStringConvertible, CustomReflectable {

    /// The token to revoke.
    public var token: String

    /// Whether it is an access or a refresh token.
    public var kind: TokenKind

    /// When the revocation was first attempted, in seconds since 1970.
    public var recordedAt: TimeInterval

    /// When the token can no longer be valid, in seconds since 1970: an access token's expiry; for
    /// a refresh token, whose lifetime the client does not know,
    /// ``ManagedSessionProvider/Configuration/pendingRevocationLifetime`` after ``recordedAt``.
    /// A revocation still pending then is given up.
    public var notAfter: TimeInterval

    /// The server and client the token was issued to (``ManagedSession/origin``): only a manager
    /// configured for them sends it; `nil` for any.
    public var origin: SessionOrigin?

    /// Creates a record.
    ///
    /// - Parameters:
    ///   - token: The token to revoke.
    ///   - kind: Its kind.
    ///   - recordedAt: When the revocation was first attempted.
    ///   - notAfter: When the token can no longer be valid.
    ///   - origin: The server and client the token was issued to, if known.
    public init(
        token: String,
        kind: TokenKind,
        recordedAt: TimeInterval,
        notAfter: TimeInterval,
        origin: SessionOrigin? = nil
    ) {
        self.token = token
        self.kind = kind
        self.recordedAt = recordedAt
        self.notAfter = notAfter
        self.origin = origin
    }

    /// The kind and the dates, never the token.
    public var description: String {
        "PendingRevocation(\(kind.rawValue), recordedAt: \(recordedAt), notAfter: \(notAfter))"
    }

    /// The kind and the dates, never the token.
    public var customMirror: Mirror {
        Mirror(self, children: ["kind": kind, "recordedAt": recordedAt, "notAfter": notAfter])
    }
}

extension TokenKind: Codable {}
