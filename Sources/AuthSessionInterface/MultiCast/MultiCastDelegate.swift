/// The base of every delegate protocol that many observers can subscribe to at once.
///
/// Delegates are classes so that a multicaster can hold them weakly and tell them apart by
/// identity. Refine this protocol to declare the callbacks:
///
/// ```swift
/// protocol DownloadDelegate: MultiCastDelegate {
///     func downloadDidFinish(_ url: URL)
/// }
/// ```
public protocol MultiCastDelegate: AnyObject, Sendable {}
