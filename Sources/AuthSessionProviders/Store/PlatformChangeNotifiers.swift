import AuthSession
import Dispatch
import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

#if canImport(notify)
import notify
#endif

#if os(Linux)
/// A ``SessionChangeNotifier`` over Linux's inotify: the kernel reports every file of `names`
/// renamed into, written in, created in or deleted from `directory`, by any process. A store's
/// writes are then notices themselves, and ``post()`` does nothing.
///
/// One inotify instance and one thread serve every observation in the process (the kernel limits
/// instances per user to 128 by default; watches are plentiful). The watch is in place when
/// ``observe(_:)`` returns, so no change after it is missed. Each observation's handler runs on a
/// serial queue of its own; notices that arrive while one is queued are coalesced. If the folder
/// does not exist yet, or is replaced or removed, the observation watches the folder at the path
/// as soon as there is one (looked for every second meanwhile). A watch follows its folder, not
/// the path, and the kernel tells it nothing when a parent folder is renamed: every 2 seconds
/// each watched path is asked again, and an observation whose path leads to another folder (or
/// none) watches that one and hears a notice.
public final class InotifyChangeNotifier: SessionChangeNotifier {

    /// The folder watched.
    public let directory: String

    /// The file names whose changes are notices.
    public let names: Set<String>

    /// Creates a notifier for the files `names` in `directory`.
    ///
    /// - Parameters:
    ///   - directory: The folder's path.
    ///   - names: The files whose changes count.
    public convenience init(directory: String, names: Set<String>) {
        self.init(directory: directory, names: names, hub: .shared)
    }

    /// The hub serving the observations: the process's, or one whose kernel calls a test forces
    /// to fail.
    private let hub: InotifyHub

    /// The polling of the observations made without an inotify instance.
    private let polling: PollingChangeNotifier

    /// Creates a notifier served by `hub`.
    init(directory: String, names: Set<String>, hub: InotifyHub) {
        self.directory = directory
        self.names = names
        self.hub = hub
        polling = PollingChangeNotifier(interval: TimeInterval(InotifyHub.pollingInterval) / 1000) {
            FileCoordination.signature(of: directory, names: names)
        }
    }

    /// Does nothing for the kernel's notices (the kernel reports the store's writes); an
    /// observation that fell back to polling reports a change at its next poll, whatever the
    /// files then look like (see ``PollingChangeNotifier/post()``).
    public func post() {
        polling.post()
        hub.posted(directory: directory)
    }

    /// Watches the folder until cancelled; see ``observe(_:onFallback:)``.
    ///
    /// - Parameter handler: What to run after each batch of changes.
    /// - Returns: The observation.
    public func observe(_ handler: @escaping @Sendable () -> Void) -> SessionChangeObservation {
        observe(handler, onFallback: { _ in })
    }

    /// Watches the folder until cancelled, and falls back to polling the files `names` (every
    /// second: their sizes, times and identities) when the kernel fails the observation: with no
    /// inotify instance (`inotify_init1` failed, ``SessionChangeNoticeFallback/instanceUnavailable(code:)``),
    /// the observation polls for its whole life (the next observation tries inotify again); with
    /// a watch refused (``SessionChangeNoticeFallback/watchRefused(code:)``), it polls until the
    /// kernel watches the folder. `onFallback` hears of it once per observation, on the
    /// observation's queue; a cancelled or released observation stops polling.
    ///
    /// - Parameters:
    ///   - handler: What to run after each batch of changes.
    ///   - onFallback: What to run, once, if the observation falls back to polling.
    /// - Returns: The observation.
    public func observe(
        _ handler: @escaping @Sendable () -> Void,
        onFallback: @escaping @Sendable (SessionChangeNoticeFallback) -> Void
    ) -> SessionChangeObservation {
        let hub = hub
        switch hub.add(directory: directory, names: names, handler: handler, onFallback: onFallback) {
        case .observing(let id):
            return SessionChangeObservation { hub.remove(id) }
        case .unavailable(let code):
            let observation = polling.observe(handler)
            let gate = ObservationGate()
            DispatchQueue(label: "AuthSessionKit.InotifyChangeNotifier").async {
                gate.deliver { onFallback(.instanceUnavailable(code: code)) }
            }
            return SessionChangeObservation {
                gate.close()
                observation.cancel()
            }
        }
    }
}

/// The kernel calls an ``InotifyHub`` makes: the system's, or failures a test forces (a real
/// per-user limit is out of a test's reach: `fs.inotify.max_user_instances` and
/// `max_user_watches` are changed by root only, for the whole machine).
struct InotifyCalls: Sendable {

    /// `inotify_init1`: the descriptor, or -1 and the `errno`.
    var initialize: @Sendable () -> (descriptor: Int32, code: Int32)

    /// `inotify_add_watch` of a folder: the watch, or -1 and the `errno`.
    var addWatch: @Sendable (_ descriptor: Int32, _ path: String, _ mask: UInt32) -> (watch: Int32, code: Int32)

    /// The system's calls.
    static let system = InotifyCalls(
        initialize: {
            let descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
            return (descriptor, descriptor < 0 ? errno : 0)
        },
        addWatch: { descriptor, path, mask in
            let watch = inotify_add_watch(descriptor, path, mask)
            return (watch, watch < 0 ? errno : 0)
        }
    )
}

/// The process's one inotify instance, its thread, and the observations it serves.
final class InotifyHub: Sendable {

    static let shared = InotifyHub(calls: .system)

    private let calls: InotifyCalls

    /// Creates a hub making `calls`; ``shared`` serves every notifier but the tests'.
    init(calls: InotifyCalls) {
        self.calls = calls
    }

    private struct Observer {
        let directory: String
        let names: Set<String>
        /// The watch, or -1 while the folder is missing or the kernel refuses to watch it.
        var watch: Int32
        /// While the kernel refuses to watch the folder: the files' signature at the last poll
        /// (empty after a post: the next poll reports a change).
        var polled: String?
        /// Whether ``onFallback`` was called (once per observation).
        var hasFallenBack = false
        let queue: DispatchQueue
        let handler: @Sendable () -> Void
        let onFallback: @Sendable (SessionChangeNoticeFallback) -> Void
        /// Whether a delivery is queued and not yet started: notices meanwhile are coalesced.
        let isQueued: ConcurrencySafeContainer<Bool>
        let isCancelled: ConcurrencySafeContainer<Bool>
    }

    private struct State {
        var descriptor: Int32 = -1
        /// A pipe whose write end wakes the thread from `poll` (an observation of a missing folder
        /// was added: it must be looked for every second).
        var wakeRead: Int32 = -1
        var wakeWrite: Int32 = -1
        var isRunning = false
        var nextID: UInt64 = 0
        var observers: [UInt64: Observer] = [:]
    }

    private let state = ConcurrencySafeContainer(State())

    /// What ``add(directory:names:handler:onFallback:)`` did.
    enum Addition {
        /// The hub serves the observation `id`.
        case observing(UInt64)
        /// There is no inotify instance: `inotify_init1` failed with `code`.
        case unavailable(code: Int32)
    }

    /// Adds an observation, its watch in place on return when the folder exists; with no inotify
    /// instance, nothing (the next addition tries again).
    func add(
        directory: String,
        names: Set<String>,
        handler: @escaping @Sendable () -> Void,
        onFallback: @escaping @Sendable (SessionChangeNoticeFallback) -> Void
    ) -> Addition {
        let addition = state.withLock { state -> (Addition, Bool, Int32?, (Observer, Int32)?) in
            if state.descriptor < 0 {
                let (descriptor, code) = calls.initialize()
                guard descriptor >= 0 else { return (.unavailable(code: code), false, nil, nil) }
                state.descriptor = descriptor
                var ends: [Int32] = [-1, -1]
                if state.descriptor >= 0, pipe(&ends) == 0 {
                    state.wakeRead = ends[0]
                    state.wakeWrite = ends[1]
                    _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
                    _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
                    _ = fcntl(ends[0], F_SETFL, O_NONBLOCK)
                    _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
                }
            }
            state.nextID += 1
            let (watch, code) = addWatch(state.descriptor, directory)
            var observer = Observer(
                directory: directory,
                names: names,
                watch: watch,
                queue: DispatchQueue(label: "AuthSessionKit.InotifyChangeNotifier"),
                handler: handler,
                onFallback: onFallback,
                isQueued: ConcurrencySafeContainer(false),
                isCancelled: ConcurrencySafeContainer(false)
            )
            let refused = watch < 0 && !Self.isAbsence(code)
            if refused {
                // Polled by the thread every second from now on, until the kernel watches it.
                observer.polled = FileCoordination.signature(of: directory, names: names)
                observer.hasFallenBack = true
            }
            state.observers[state.nextID] = observer
            let startsThread = !state.isRunning
            if startsThread { state.isRunning = true }
            // A thread asleep must look for a missing or refused folder within a second, and a
            // thread asleep without a timeout (nothing was watched) must start asking every
            // ``folderCheckInterval`` whether the new folder is still at its path. A folder
            // watched now, beside others already watched, needs no wake: the thread's sleep is
            // already bounded, and the kernel wakes it for the new watch's events (a launch saves
            // a context switch).
            // Any other observation bounds the sleep (a second while one is missing, else
            // ``folderCheckInterval``); with none, the thread sleeps until woken.
            let sleepsUnbounded = state.observers.count == 1
            let wakes = state.isRunning && !startsThread && (watch < 0 || sleepsUnbounded) ? state.wakeWrite : nil
            return (.observing(state.nextID), startsThread, wakes, refused ? (observer, code) : nil)
        }
        let (result, startsThread, wakes, refused) = addition
        if let (observer, code) = refused {
            reportFallback(.watchRefused(code: code), to: observer)
        }
        if let wakes, wakes >= 0 {
            // The read end is never closed: a write here cannot raise SIGPIPE.
            var byte: UInt8 = 1
            _ = write(wakes, &byte, 1)
        }
        if startsThread {
            let thread = Thread { [self] in run() }
            thread.name = "AuthSessionKit.InotifyChangeNotifier"
            thread.start()
        }
        return result
    }

    /// The store of `directory` wrote in this process: the observations of it that poll (the
    /// kernel refuses their watch) report a change at their next poll, whatever they find.
    func posted(directory: String) {
        state.withLock { state in
            for (id, observer) in state.observers where observer.polled != nil && observer.directory == directory {
                state.observers[id]?.polled = ""
            }
        }
    }

    /// Removes an observation; its handler is not called after this returns (except a call
    /// already running). The watch goes when no observation needs it.
    func remove(_ id: UInt64) {
        state.withLock { state in
            guard let observer = state.observers.removeValue(forKey: id) else { return }
            observer.isCancelled.withLock { $0 = true }
            if observer.watch >= 0, !state.observers.values.contains(where: { $0.watch == observer.watch }) {
                inotify_rm_watch(state.descriptor, observer.watch)
            }
        }
    }

    /// Watches `directory`: the watch, or -1 and the `errno`.
    private func addWatch(_ descriptor: Int32, _ directory: String) -> (watch: Int32, code: Int32) {
        let mask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
        return calls.addWatch(descriptor, directory, UInt32(mask) | UInt32(IN_ONLYDIR))
    }

    /// Whether `inotify_add_watch` failed with `code` because there is no folder at the path (it
    /// is looked for every second), rather than a refusal (polled meanwhile).
    private static func isAbsence(_ code: Int32) -> Bool {
        code == ENOENT || code == ENOTDIR
    }

    /// The time between two polls of the files of an observation whose notices fell back to
    /// polling, in milliseconds.
    static let pollingInterval: Int32 = 1000

    /// Tells `observer` (on its queue, unless cancelled meanwhile) that its notices fell back to
    /// polling.
    private func reportFallback(_ fallback: SessionChangeNoticeFallback, to observer: Observer) {
        observer.queue.async {
            if !observer.isCancelled.withLock({ $0 }) { observer.onFallback(fallback) }
        }
    }

    /// How often the thread asks whether each watched folder is still the one at its path, in
    /// milliseconds: a folder moved with its parent (or any ancestor) hears nothing of it.
    static let folderCheckInterval: Int32 = 2000

    /// The thread: waits for events (every second at most while a folder is missing, every
    /// ``folderCheckInterval`` while one is watched), and queues the handlers of the observations
    /// they concern. Runs for the life of the process.
    private func run() {
        let (descriptor, wakeRead) = state.withLock { ($0.descriptor, $0.wakeRead) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var lastCheck = DispatchTime.now()
        while true {
            let (isAnyMissing, isAnyWatched) = state.withLock { state in
                (
                    state.observers.values.contains { $0.watch < 0 },
                    state.observers.values.contains { $0.watch >= 0 }
                )
            }
            var polled = [
                pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            // Without a wake pipe (none could be made), the thread never sleeps for good: a new
            // observation must be served.
            let timeout: Int32 =
                isAnyMissing
                ? Self.pollingInterval : isAnyWatched || wakeRead < 0 ? Self.folderCheckInterval : -1
            let ready = poll(&polled, wakeRead >= 0 ? 2 : 1, timeout)
            if ready < 0 && errno != EINTR {
                // Not expected (the descriptors are this thread's own); look again in a second
                // rather than stop hearing changes for the life of the process.
                sleep(1)
                continue
            }
            if polled[1].revents & Int16(POLLIN) != 0 {
                var bytes = [UInt8](repeating: 0, count: 64)
                while read(wakeRead, &bytes, bytes.count) > 0 {}
            }
            var concerned = Set<UInt64>()
            if polled[0].revents & Int16(POLLIN) != 0 {
                concerned.formUnion(drain(descriptor, &buffer))
            }
            let now = DispatchTime.now()
            let checksWatched =
                now.uptimeNanoseconds - lastCheck.uptimeNanoseconds >= UInt64(Self.folderCheckInterval) * 1_000_000
            if checksWatched { lastCheck = now }
            let (changed, fallbacks) = watchFoldersAtTheirPaths(descriptor, includingWatched: checksWatched)
            concerned.formUnion(changed)
            deliver(to: concerned)
            for (observer, fallback) in fallbacks {
                reportFallback(fallback, to: observer)
            }
        }
    }

    /// Watches the folder now at each observation's path: those that had none (a folder appeared,
    /// or the kernel no longer refuses), and with `includingWatched` every other one too.
    /// `inotify_add_watch` answers the watch it already has for the same folder, so a different
    /// answer means the path leads to another folder now (the watched one was moved with its
    /// parent, which the kernel reports to the parent's watchers only), and a failure that it
    /// leads nowhere: the old watch goes. A folder the kernel refuses to watch is polled: its
    /// files' signature compared with the last one. Returns the observations whose folder or
    /// files changed, which read the store again, and the fallbacks to report (once each).
    private func watchFoldersAtTheirPaths(
        _ descriptor: Int32,
        includingWatched: Bool
    ) -> (changed: Set<UInt64>, fallbacks: [(Observer, SessionChangeNoticeFallback)]) {
        state.withLock { state in
            var changed = Set<UInt64>()
            var fallbacks: [(Observer, SessionChangeNoticeFallback)] = []
            var released = Set<Int32>()
            for (id, observer) in state.observers where observer.watch < 0 || includingWatched {
                let (watch, code) = addWatch(descriptor, observer.directory)
                if watch >= 0 || Self.isAbsence(code) {
                    if observer.polled != nil {
                        // Watched again (or gone): no more polling; read again.
                        state.observers[id]?.polled = nil
                        changed.insert(id)
                    }
                    guard watch != observer.watch else { continue }
                    if observer.watch >= 0 { released.insert(observer.watch) }
                    state.observers[id]?.watch = watch
                    if watch >= 0 || observer.watch >= 0 { changed.insert(id) }
                } else {
                    // Refused (a per-user limit, a permission): poll the files meanwhile.
                    if observer.watch >= 0 {
                        released.insert(observer.watch)
                        state.observers[id]?.watch = -1
                        changed.insert(id)
                    }
                    let signature = FileCoordination.signature(of: observer.directory, names: observer.names)
                    if let polled = observer.polled, polled != signature { changed.insert(id) }
                    state.observers[id]?.polled = signature
                    if !observer.hasFallenBack {
                        state.observers[id]?.hasFallenBack = true
                        fallbacks.append((observer, .watchRefused(code: code)))
                    }
                }
            }
            for watch in released where !state.observers.values.contains(where: { $0.watch == watch }) {
                inotify_rm_watch(descriptor, watch)
            }
            return (changed, fallbacks)
        }
    }

    /// Reads every pending event; the observations concerned.
    private func drain(_ descriptor: Int32, _ buffer: inout [UInt8]) -> Set<UInt64> {
        var concerned = Set<UInt64>()
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return concerned }
            var offset = 0
            let headerSize = MemoryLayout<inotify_event>.size
            while offset + headerSize <= count {
                let (watch, mask, nameLength) = buffer.withUnsafeBytes { bytes in
                    let event = bytes.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    return (event.wd, event.mask, Int(event.len))
                }
                let nameStart = offset + headerSize
                var name: String?
                if nameLength > 0, nameStart + nameLength <= count {
                    let bytes = buffer[nameStart..<(nameStart + nameLength)].prefix { $0 != 0 }
                    name = SessionFormatScanner.validUTF8(bytes)
                }
                let isGone = mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF) != 0
                if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    // Events were dropped: every observation may have missed one.
                    state.withLock { concerned.formUnion($0.observers.keys) }
                    offset = nameStart + nameLength
                    continue
                }
                state.withLock { state in
                    for (id, observer) in state.observers where observer.watch == watch {
                        if isGone {
                            // The folder is gone or replaced: watch the one at the path when
                            // there is one.
                            state.observers[id]?.watch = -1
                            concerned.insert(id)
                        } else if let name, observer.names.contains(name) {
                            concerned.insert(id)
                        }
                    }
                    if isGone, mask & UInt32(IN_IGNORED) == 0 {
                        inotify_rm_watch(descriptor, watch)
                    }
                }
                offset = nameStart + nameLength
            }
        }
    }

    private func deliver(to ids: Set<UInt64>) {
        let observers = state.withLock { state in ids.compactMap { state.observers[$0] } }
        for observer in observers {
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
}
#endif

#if canImport(notify)
/// A ``SessionChangeNotifier`` over the Darwin notification center (`notify(3)`): ``post()``
/// posts `name` with `notify_post`, and every process that registered it hears it, the app and
/// its extensions included.
///
/// The name must be one every process sharing the store uses; for an app group, start it with
/// the group's identifier (sandboxed macOS apps may post only such names). The stores derive such
/// a name themselves for a folder in a macOS app group container.
///
/// Cancelling an observation closes it before `notify_cancel`, which does not wait for a handler
/// already dispatched: no handler starts after the cancellation returns.
public final class DarwinNotifyChangeNotifier: SessionChangeNotifier {

    /// The notification's name.
    public let name: String

    private let queue = DispatchQueue(label: "AuthSessionKit.DarwinNotifyChangeNotifier")

    /// Creates a notifier for `name`.
    ///
    /// - Parameter name: The notification name every process sharing the store uses.
    public init(name: String) {
        self.name = name
    }

    /// Posts the notification.
    public func post() {
        _ = notify_post(name)
    }

    /// Registers for the notification until cancelled.
    ///
    /// - Parameter handler: What to run after each notification.
    /// - Returns: The observation; without one if registration fails (the store then coordinates
    ///   through its lease alone).
    public func observe(_ handler: @escaping @Sendable () -> Void) -> SessionChangeObservation {
        var token: Int32 = 0
        // notify_cancel does not wait for a handler the center already dispatched to the queue:
        // the gate, closed before the cancel, keeps such a handler from running afterwards.
        let gate = ObservationGate()
        let status = notify_register_dispatch(name, &token, queue) { _ in gate.deliver(handler) }
        // NOTIFY_STATUS_OK is 0 (a C macro, imported as Int32; the status is a UInt32).
        guard status == 0 else { return SessionChangeObservation {} }
        let registered = token
        return SessionChangeObservation {
            gate.close()
            _ = notify_cancel(registered)
        }
    }
}
#endif
