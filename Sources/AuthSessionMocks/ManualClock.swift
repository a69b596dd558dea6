import AuthSession
import Foundation

/// A clock that moves only when a test moves it.
///
/// All operations are thread-safe.
public final class ManualClock: AuthSessionClock {

    /// The date a new clock shows unless told otherwise: 2027-01-15 08:00:00 UTC.
    public static let defaultStart = Date(timeIntervalSince1970: 1_800_000_000)

    private let current: ConcurrencySafeContainer<Date>

    /// Creates a clock showing `now`.
    ///
    /// - Parameter now: The starting date.
    public init(now: Date = ManualClock.defaultStart) {
        current = ConcurrencySafeContainer(now)
    }

    /// The date the clock shows; set it to jump.
    public var now: Date {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    /// Moves the clock forward (or back, with a negative interval).
    ///
    /// - Parameter interval: Seconds to move.
    public func advance(by interval: TimeInterval) {
        current.withLock { $0 += interval }
    }
}
