/// The user an authentication session belongs to.
///
/// `Hashable` so a user can key a dictionary or sit in a set, and `Sendable` so it can cross
/// concurrency domains with the session that carries it.
///
/// ```swift
/// struct MyUser: AuthSessionUserProtocol {
///     let identifier: String
/// }
/// ```
public protocol AuthSessionUserProtocol: Hashable, Sendable {

    /// A stable identifier for the user, unique within the identity provider.
    var identifier: String { get }
}
