import Foundation

/// Tells the current date; the handle asks it for every expiry decision.
///
/// Inject a clock you control (`ManualClock` in `AuthSessionMocks`) to test expiry edges
/// without waiting.
///
/// Conformers must be thread-safe.
public protocol AuthSessionClock: Sendable {

    /// The current date.
    var now: Date { get }
}

/// The system's wall clock: `Date()`.
///
/// All operations are thread-safe.
public struct SystemClock: AuthSessionClock {

    /// Creates the system clock.
    public init() {}

    /// `Date()`.
    public var now: Date { Date() }
}
