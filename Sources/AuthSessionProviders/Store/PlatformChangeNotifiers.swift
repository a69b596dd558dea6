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
    public init(directory: String, names: Set<String>) {
        self.directory = directory
        self.names = names
    }

    /// Does nothing: the kernel reports the store's writes.
    public func post() {}

    /// Watches the folder until cancelled.
    ///
    /// - Parameter handler: What to run after each batch of changes.
    /// - Returns: The observation.
    public func observe(_ handler: @escaping @Sendable () -> Void) -> SessionChangeObservation {
        let id = InotifyHub.shared.add(directory: directory, names: names, handler: handler)
        return SessionChangeObservation { InotifyHub.shared.remove(id) }
    }
}

/// The process's one inotify instance, its thread, and the observations it serves.
private final class InotifyHub: Sendable {

    static let shared = InotifyHub()

    private struct Observer {
        let directory: String
        let names: Set<String>
        /// The watch, or -1 while the folder is missing.
        var watch: Int32
        let queue: DispatchQueue
        let handler: @Sendable () -> Void
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

    /// Adds an observation, its watch in place on return when the folder exists.
    func add(directory: String, names: Set<String>, handler: @escaping @Sendable () -> Void) -> UInt64 {
        let (id, startsThread, wakes) = state.withLock { state -> (UInt64, Bool, Int32?) in
            if state.descriptor < 0 {
                state.descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
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
            let watch = state.descriptor >= 0 ? Self.addWatch(state.descriptor, directory) : -1
            state.observers[state.nextID] = Observer(
                directory: directory,
                names: names,
                watch: watch,
                queue: DispatchQueue(label: "AuthSessionKit.InotifyChangeNotifier"),
                handler: handler,
                isQueued: ConcurrencySafeContainer(false),
                isCancelled: ConcurrencySafeContainer(false)
            )
            let startsThread = !state.isRunning && state.descriptor >= 0
            if startsThread { state.isRunning = true }
            // A thread asleep must look for a missing folder within a second, and ask whether a
            // watched one is still at its path (it may sleep without a timeout).
            let wakes = state.isRunning && !startsThread ? state.wakeWrite : nil
            return (state.nextID, startsThread, wakes)
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
        return id
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

    private static func addWatch(_ descriptor: Int32, _ directory: String) -> Int32 {
        let mask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
        return inotify_add_watch(descriptor, directory, UInt32(mask) | UInt32(IN_ONLYDIR))
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
            let timeout: Int32 = isAnyMissing ? 1000 : isAnyWatched ? Self.folderCheckInterval : -1
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
            concerned.formUnion(watchFoldersAtTheirPaths(descriptor, includingWatched: checksWatched))
            deliver(to: concerned)
        }
    }

    /// Watches the folder now at each observation's path: those that had none (a folder appeared),
    /// and with `includingWatched` every other one too. `inotify_add_watch` answers the watch it
    /// already has for the same folder, so a different answer means the path leads to another
    /// folder now (the watched one was moved with its parent, which the kernel reports to the
    /// parent's watchers only), and a failure that it leads nowhere: the old watch goes. Returns
    /// the observations whose folder changed, which read the store again.
    private func watchFoldersAtTheirPaths(_ descriptor: Int32, includingWatched: Bool) -> Set<UInt64> {
        state.withLock { state in
            var changed = Set<UInt64>()
            var released = Set<Int32>()
            for (id, observer) in state.observers where observer.watch < 0 || includingWatched {
                let watch = Self.addWatch(descriptor, observer.directory)
                guard watch != observer.watch else { continue }
                if observer.watch >= 0 { released.insert(observer.watch) }
                state.observers[id]?.watch = watch
                if watch >= 0 || observer.watch >= 0 { changed.insert(id) }
            }
            for watch in released where !state.observers.values.contains(where: { $0.watch == watch }) {
                inotify_rm_watch(descriptor, watch)
            }
            return changed
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
