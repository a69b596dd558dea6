import AuthSessionProviders
import Foundation

/// What an introspection endpoint says of a token (RFC 7662 §2.2).
///
/// ``description`` and `dump` show whether it is active, its client and expiry; never the user
/// name (personal data) or the subject.
///
/// All operations are thread-safe.
public struct TokenIntrospection: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{

    /// Whether the token is active: issued by this server, not expired, not revoked.
    public var isActive: Bool

    /// The token's scopes, if the server said.
    public var scope: [String]?

    /// The client the token was issued to, if the server said.
    public var clientID: String?

    /// The resource owner's user name, if the server said.
    public var username: String?

    /// The subject, if the server said.
    public var subject: String?

    /// When the token expires, if the server said.
    public var expiresAt: Date?

    /// Whether it is active, its client and its expiry.
    public var description: String {
        "TokenIntrospection(active: \(isActive), client: \(clientID.map(RemoteAuthError.sanitized) ?? "none"), "
            + "expiresAt: \(expiresAt.map { "\($0)" } ?? "unknown"))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror with ``description``'s fields, and whether a user name and a subject are present.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "isActive": isActive, "scope": scope as Any, "clientID": clientID as Any,
                "hasUsername": username != nil,
                "hasSubject": subject != nil, "expiresAt": expiresAt as Any,
            ],
            displayStyle: .struct
        )
    }

    /// Creates an introspection result.
    ///
    /// - Parameters:
    ///   - isActive: Whether the token is active.
    ///   - scope: Its scopes.
    ///   - clientID: Its client.
    ///   - username: Its user name.
    ///   - subject: Its subject.
    ///   - expiresAt: Its expiry.
    public init(
        isActive: Bool,
        scope: [String]? = nil,
        clientID: String? = nil,
        username: String? = nil,
        subject: String? = nil,
        expiresAt: Date? = nil
    ) {
        self.isActive = isActive
        self.scope = scope
        self.clientID = clientID
        self.username = username
        self.subject = subject
        self.expiresAt = expiresAt
    }

    init(_ object: [String: JSONValue]) throws(RemoteAuthError) {
        guard let isActive = object["active"]?.boolValue else {
            throw RemoteAuthError(.invalidResponse("active is missing or not a boolean"))
        }
        self.init(
            isActive: isActive,
            scope: object["scope"]?.stringValue.map { $0.split(separator: " ").map(String.init) },
            clientID: object["client_id"]?.stringValue,
            username: object["username"]?.stringValue,
            subject: object["sub"]?.stringValue,
            expiresAt: object["exp"]?.numberValue.flatMap { $0.isFinite ? Date(timeIntervalSince1970: $0) : nil }
        )
    }
}
