import AuthSessionInterface

/// A user for tests.
///
/// All operations are thread-safe.
public struct MockUser: AuthSessionUserProtocol, CustomStringConvertible {

    /// The user's identifier.
    public var identifier: String

    /// Creates a user.
    ///
    /// - Parameter identifier: The user's identifier.
    public init(identifier: String = "mock-user") {
        self.identifier = identifier
    }

    /// `MockUser(<identifier>)`.
    public var description: String { "MockUser(\(identifier))" }
}
