/// Tells when the app becomes active (returns to the foreground).
///
/// `AuthSessionHandle` observes one from its initializer and revalidates the session on each
/// activation (after the first, which only arms it), and stops observing when it is
/// deallocated.
///
/// Conformers must be thread-safe and may call the handler on any thread.
public protocol AppActivationSignal: Sendable {

    /// Whether the platform reports activations itself, including the one at launch and the one
    /// that follows a system prompt's dismissal (UIKit, AppKit): `true` by default.
    ///
    /// When `false` (a command-line client or a service on Linux, where nothing posts an
    /// activation at launch), the handle counts the launch as the first activation and re-arms
    /// revalidation when a biometric prompt finishes, so the first activation the client does
    /// post revalidates.
    var hasApplicationLifecycle: Bool { get }

    /// Calls `handler` on every activation until the returned observation is cancelled or
    /// deallocated.
    ///
    /// - Parameter handler: Called once per activation.
    /// - Returns: The observation; keep it for as long as you want to be called.
    func observe(_ handler: @escaping @Sendable () -> Void) -> AppActivationObservation
}

extension AppActivationSignal {

    /// `true`: activations come from an app lifecycle, the launch included.
    public var hasApplicationLifecycle: Bool { true }
}

/// A running observation of an ``AppActivationSignal``; cancels itself when deallocated.
///
/// All operations are thread-safe.
public final class AppActivationObservation: Sendable {

    private let onCancel: ConcurrencySafeContainer<(@Sendable () -> Void)?>

    /// Creates an observation that runs `onCancel` once, when cancelled or deallocated.
    ///
    /// - Parameter onCancel: Stops the observation, for example by removing an observer.
    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = ConcurrencySafeContainer(onCancel)
    }

    /// Stops the observation. Calling it again does nothing.
    public func cancel() {
        let stop = onCancel.withLock { stop in
            defer { stop = nil }
            return stop
        }
        stop?()
    }

    /// Whether ``cancel()`` has run.
    public var isCancelled: Bool {
        onCancel.withLock { $0 == nil }
    }

    deinit {
        cancel()
    }
}
