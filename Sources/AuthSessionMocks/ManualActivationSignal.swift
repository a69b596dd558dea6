import AuthSession

/// An app-activation signal a test fires by hand.
///
/// All operations are thread-safe. ``fire()`` calls every observer synchronously on the calling
/// thread, so when it returns a handle observing it has applied the activation (unless another
/// thread was applying inputs to that handle: `AuthSessionHandle.waitUntilIdle()` waits for it).
public final class ManualActivationSignal: AppActivationSignal {

    /// Whether it stands for an app lifecycle (the launch counts as an activation the test fires)
    /// or for a client without one (the handle counts the launch itself).
    public let hasApplicationLifecycle: Bool

    private struct State {
        var observers: [UInt64: @Sendable () -> Void] = [:]
        var lastID: UInt64 = 0
        var fireCount = 0
    }

    private let state = ConcurrencySafeContainer(State())

    /// Creates a signal with no observers.
    ///
    /// - Parameter hasApplicationLifecycle: `true` (the default) to behave as UIKit or AppKit do,
    ///   where the test fires the launch's activation itself; `false` to behave as a command-line
    ///   client, where the handle counts the launch as the first activation.
    public init(hasApplicationLifecycle: Bool = true) {
        self.hasApplicationLifecycle = hasApplicationLifecycle
    }

    /// Registers `handler` until the observation is cancelled.
    ///
    /// - Parameter handler: Called on every ``fire()``.
    /// - Returns: The observation.
    public func observe(_ handler: @escaping @Sendable () -> Void) -> AppActivationObservation {
        let id = state.withLock { state in
            state.lastID += 1
            state.observers[state.lastID] = handler
            return state.lastID
        }
        return AppActivationObservation { [weak self] in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
    }

    /// Tells every observer that the app became active.
    public func fire() {
        let handlers = state.withLock { state in
            state.fireCount += 1
            return Array(state.observers.values)
        }
        for handler in handlers {
            handler()
        }
    }

    /// How many observations are live.
    public var observerCount: Int {
        state.withLock { $0.observers.count }
    }

    /// How many times ``fire()`` ran since creation or ``reset()``.
    public var fireCount: Int {
        state.withLock { $0.fireCount }
    }

    /// Forgets the fire count; observers stay.
    public func reset() {
        state.withLock { $0.fireCount = 0 }
    }
}
