import AuthSession
import Dispatch
import Foundation

/// How a store shared between processes tells them it changed: one posts, every observer (in
/// every process sharing the store, this one included) hears it.
///
/// A notice carries nothing: an observer reads the store again to learn what changed, so notices
/// may be coalesced, delivered late or (with polling) missed between two changes without any
/// observer seeing a wrong state. The session manager listens to its store's notifier: a
/// sign-out in another process signs this one out at once, and a rotation made elsewhere is
/// adopted without a request.
///
/// | notifier | where | how |
/// | --- | --- | --- |
/// | ``InotifyChangeNotifier`` | Linux | the kernel reports writes to the store's folder |
/// | `DarwinNotifyChangeNotifier` | Apple platforms | `notify_post` and `notify_register_dispatch` |
/// | ``PollingChangeNotifier`` | anywhere | compares a signature of the store at an interval |
/// | ``LocalChangeNotifier`` | one process | in-memory stores and tests |
public protocol SessionChangeNotifier: Sendable {

    /// Tells every observer that the store changed. Returns at once; observers hear it on their
    /// notifier's own thread or queue, never inside this call.
    func post()

    /// Calls `handler` after each change, on a thread or queue of the notifier's, one call at a
    /// time per observation. Changes close together may be reported once.
    ///
    /// - Parameter handler: What to run; it should return quickly.
    /// - Returns: The observation; cancel it (or release it) to stop.
    func observe(_ handler: @escaping @Sendable () -> Void) -> SessionChangeObservation

    /// ``observe(_:)``, and tells `onFallback` (once, on a queue of the notifier's, never inside
    /// this call) if the operating system's notices fail this observation and it hears changes
    /// by polling instead: a kernel limit reached, say. The default implementation never calls
    /// it.
    ///
    /// - Parameters:
    ///   - handler: What to run after each change.
    ///   - onFallback: What to run, at most once, when the observation falls back to polling.
    /// - Returns: The observation; cancel it (or release it) to stop.
    func observe(
        _ handler: @escaping @Sendable () -> Void,
        onFallback: @escaping @Sendable (SessionChangeNoticeFallback) -> Void
    ) -> SessionChangeObservation
}

extension SessionChangeNotifier {

    /// ``observe(_:)``: a notifier that has no fallback never calls `onFallback`.
    ///
    /// - Parameters:
    ///   - handler: What to run after each change.
    ///   - onFallback: Not called.
    /// - Returns: The observation.
    public func observe(
        _ handler: @escaping @Sendable () -> Void,
        onFallback: @escaping @Sendable (SessionChangeNoticeFallback) -> Void
    ) -> SessionChangeObservation {
        observe(handler)
    }
}

/// Why an observation of a ``SessionChangeNotifier`` hears changes by polling the store's files
/// (about every second) instead of the operating system's notices, which failed it. Notices still
/// arrive, up to a second or so later; nothing else changes. It names the failing call and its
/// `errno`, never a path.
///
/// All operations are thread-safe.
public enum SessionChangeNoticeFallback: Sendable, Hashable, CustomStringConvertible {

    /// The kernel gave no notification instance (`inotify_init1` failed with `code`): the
    /// per-user limit on instances (`EMFILE`: `fs.inotify.max_user_instances`, 128 by default) or
    /// on open files (`EMFILE`, `ENFILE`), or no inotify at all (`ENOSYS`).
    case instanceUnavailable(code: Int32)

    /// The kernel refused to watch the store's folder (`inotify_add_watch` failed with `code`, for
    /// a reason other than the folder's absence): the per-user limit on watches (`ENOSPC`:
    /// `fs.inotify.max_user_watches`), no permission to read the folder (`EACCES`), no memory
    /// (`ENOMEM`). The folder is asked again every second; once it is watched, notices come from
    /// the kernel again.
    case watchRefused(code: Int32)

    /// `inotify_init1 failed: Too many open files (errno 24); polling`.
    public var description: String {
        switch self {
        case .instanceUnavailable(let code):
            "inotify_init1 failed: \(String(cString: strerror(code))) (errno \(code)); polling"
        case .watchRefused(let code):
            "inotify_add_watch failed: \(String(cString: strerror(code))) (errno \(code)); polling"
        }
    }
}

/// An observation of a ``SessionChangeNotifier``: ends when cancelled or released.
public final class SessionChangeObservation: Sendable {

    private let onCancel: ConcurrencySafeContainer<(@Sendable () -> Void)?>

    /// Creates an observation that runs `cancel` once, when cancelled or released.
    ///
    /// - Parameter cancel: What stops the observation.
    public init(cancel: @escaping @Sendable () -> Void) {
        onCancel = ConcurrencySafeContainer(cancel)
    }

    /// Stops the observation; its handler is not called after this returns, except for a call
    /// already running. Cancelling twice does nothing.
    public func cancel() {
        let cancel = onCancel.withLock { stored -> (@Sendable () -> Void)? in
            defer { stored = nil }
            return stored
        }
        cancel?()
    }

    deinit {
        cancel()
    }
}

/// Whether an observation's handler may still run: closed when the observation is cancelled, and
/// asked by each delivery. A cancellation that does not wait for a handler already dispatched
/// (`notify_cancel`) then keeps the promise of ``SessionChangeObservation/cancel()``: no handler
/// runs after it returns, except one already running.
final class ObservationGate: Sendable {

    private let isOpen = ConcurrencySafeContainer(true)

    /// Runs `handler` if the gate is still open.
    func deliver(_ handler: () -> Void) {
        if isOpen.withLock({ $0 }) { handler() }
    }

    /// No delivery that starts after this runs its handler.
    func close() {
        isOpen.withLock { $0 = false }
    }
}

/// A ``SessionChangeNotifier`` within one process: ``post()`` reaches every observation of this
/// instance, each on a serial queue of its own. For in-memory stores and tests.
public final class LocalChangeNotifier: SessionChangeNotifier {

    private struct Observer {
        let queue: DispatchQueue
        let handler: @Sendable () -> Void
        /// Whether a delivery is queued and not yet started: posts meanwhile are coalesced.
        let isQueued: ConcurrencySafeContainer<Bool>
        let isCancelled: ConcurrencySafeContainer<Bool>
    }

    private let observers = ConcurrencySafeContainer<[UInt64: Observer]>([:])
    private let nextID = ConcurrencySafeContainer<UInt64>(0)

    /// Creates a notifier with no observers.
    public init() {}

    /// Delivers a notice to every observation, asynchronously.
    public func post() {
        for observer in observers.withLock({ Array($0.values) }) {
            let isNew = observer.isQueued.withLock { isQueued in
                defer { isQueued = true }
                return !isQueued
            }
            guard isNew else { continue }
            observer.queue.async {
                observer.isQueued.withLock { $0 = false }
                if !observer.isCancelled.withLock({ $0 }) { observer.handler() }
            }
        }
    }

    /// Observes this notifier's posts.
    ///
    /// - Parameter handler: What to run after each post.
    /// - Returns: The observation.
    public func observe(_ handler: @escaping @Sendable () -> Void) -> SessionChangeObservation {
        let id = nextID.withLock { id in
            id += 1
            return id
        }
        let observer = Observer(
            queue: DispatchQueue(label: "AuthSessionKit.LocalChangeNotifier"),
            handler: handler,
            isQueued: ConcurrencySafeContainer(false),
            isCancelled: ConcurrencySafeContainer(false)
        )
        observers.withLock { $0[id] = observer }
        return SessionChangeObservation { [weak self] in
            observer.isCancelled.withLock { $0 = true }
            self?.observers.withLock { _ = $0.removeValue(forKey: id) }
        }
    }
}

/// A ``SessionChangeNotifier`` that asks, at an interval, for a signature of the store (file
/// sizes, times and identities, say) and reports a change when it differs: the fallback where the
/// operating system offers no notices. A write is seen at the next poll; ``post()`` makes sure a
/// write of this process is, even when another process undoes it before that poll.
public final class PollingChangeNotifier: SessionChangeNotifier {

    /// The time between two polls.
    public let interval: TimeInterval

    private let signature: @Sendable () -> String

    /// Each observation's signature at its last poll; `nil` after a post (the next poll reports a
    /// change, whatever it finds).
    private let observations = ConcurrencySafeContainer<[UInt64: ConcurrencySafeContainer<String?>]>([:])
    private let nextID = ConcurrencySafeContainer<UInt64>(0)

    /// Creates a polling notifier.
    ///
    /// - Parameters:
    ///   - interval: The time between two polls; at least 10 ms.
    ///   - signature: What the store looks like now; a change in it is a notice.
    public init(interval: TimeInterval = 1, signature: @escaping @Sendable () -> String) {
        self.interval = max(0.01, interval)
        self.signature = signature
    }

    /// Makes every observation of this instance report a change at its next poll, whatever the
    /// signature is then: a write of this process (which posts after it) undone by another
    /// process before that poll would otherwise look like no change at all, and leave this
    /// process believing its own write.
    public func post() {
        for last in observations.withLock({ Array($0.values) }) {
            last.withLock { $0 = nil }
        }
    }

    /// Polls until cancelled.
    ///
    /// - Parameter handler: What to run when the signature changed.
    /// - Returns: The observation.
    public func observe(_ handler: @escaping @Sendable () -> Void) -> SessionChangeObservation {
        let signature = signature
        let last = ConcurrencySafeContainer<String?>(signature())
        let id = nextID.withLock { id in
            id += 1
            return id
        }
        observations.withLock { $0[id] = last }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "AuthSessionKit.PollingChangeNotifier"))
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(10))
        timer.setEventHandler {
            let now = signature()
            let changed = last.withLock { last in
                defer { last = now }
                return last != now
            }
            if changed { handler() }
        }
        timer.resume()
        let source = TimerSource(timer: timer)
        return SessionChangeObservation { [weak self] in
            source.timer.cancel()
            self?.observations.withLock { _ = $0.removeValue(forKey: id) }
        }
    }
}

/// A dispatch timer handed to the observation's cancellation.
private final class TimerSource: @unchecked Sendable {
    // @unchecked: a dispatch source may be cancelled from any thread (Dispatch's documentation),
    // and this box holds it immutably.
    let timer: any DispatchSourceTimer

    init(timer: any DispatchSourceTimer) {
        self.timer = timer
    }
}
