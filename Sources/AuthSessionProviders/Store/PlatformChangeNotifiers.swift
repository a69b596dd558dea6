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
/// Each observation has its own inotify instance and thread, which waits in `poll` and calls the
/// handler once per batch of events. If the folder is replaced or removed, the observation watches
/// the new one (checked at least every 250 ms while it is missing).
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

    /// Watches the folder on a thread of its own until cancelled.
    ///
    /// - Parameter handler: What to run after each batch of changes.
    /// - Returns: The observation.
    public func observe(_ handler: @escaping @Sendable () -> Void) -> SessionChangeObservation {
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { return SessionChangeObservation {} }
        let wake = pipeEnds[1]
        let watcher = InotifyWatcher(
            directory: directory,
            names: names,
            stop: pipeEnds[0],
            handler: handler
        )
        let thread = Thread { watcher.run() }
        thread.name = "AuthSessionKit.InotifyChangeNotifier"
        thread.start()
        return SessionChangeObservation {
            var byte: UInt8 = 1
            _ = write(wake, &byte, 1)
            // The watcher closes the read end when it sees the byte; this end is closed here.
            close(wake)
        }
    }
}

/// The loop of one inotify observation. Only its own thread touches it after `run()` starts.
private final class InotifyWatcher: @unchecked Sendable {
    // @unchecked: the descriptors and the watch are used by the watcher's one thread only;
    // `stop` is a pipe whose other end the observation writes.
    let directory: String
    let names: Set<String>
    let stop: Int32
    let handler: @Sendable () -> Void
    private var descriptor: Int32 = -1
    private var watch: Int32 = -1

    init(directory: String, names: Set<String>, stop: Int32, handler: @escaping @Sendable () -> Void) {
        self.directory = directory
        self.names = names
        self.stop = stop
        self.handler = handler
    }

    func run() {
        descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        defer {
            if descriptor >= 0 { close(descriptor) }
            close(stop)
        }
        guard descriptor >= 0 else { return }
        addWatch()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            var polled = [
                pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stop, events: Int16(POLLIN), revents: 0),
            ]
            // Without a watch (the folder is missing), look again every 250 ms.
            let ready = poll(&polled, 2, watch < 0 ? 250 : -1)
            if ready < 0 && errno != EINTR { return }
            if polled[1].revents != 0 { return }
            var changed = false
            if watch < 0 {
                addWatch()
                // The folder appeared, or was replaced: what it holds may be new.
                changed = watch >= 0
            }
            if polled[0].revents & Int16(POLLIN) != 0 {
                changed = drain(&buffer) || changed
            }
            if changed { handler() }
        }
    }

    private func addWatch() {
        let mask = UInt32(
            IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
        )
        watch = inotify_add_watch(descriptor, directory, mask | UInt32(IN_ONLYDIR))
    }

    /// Reads every pending event; whether one is about a watched name, or the folder went away.
    private func drain(_ buffer: inout [UInt8]) -> Bool {
        var changed = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return changed }
            var offset = 0
            let headerSize = MemoryLayout<inotify_event>.size
            while offset + headerSize <= count {
                let (mask, nameLength) = buffer.withUnsafeBytes { bytes in
                    let event = bytes.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    return (event.mask, Int(event.len))
                }
                let nameStart = offset + headerSize
                if mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                    // The folder is gone or replaced: watch again (the new one, when it exists).
                    if watch >= 0 { inotify_rm_watch(descriptor, watch) }
                    watch = -1
                    changed = true
                } else if nameLength > 0, nameStart + nameLength <= count {
                    let nameBytes = buffer[nameStart..<(nameStart + nameLength)].prefix { $0 != 0 }
                    if let name = String(validating: nameBytes, as: UTF8.self), names.contains(name) {
                        changed = true
                    }
                }
                offset = nameStart + nameLength
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
/// the group's identifier (sandboxed macOS apps may post only such names).
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
        let status = notify_register_dispatch(name, &token, queue) { _ in handler() }
        // NOTIFY_STATUS_OK is 0 (a C macro, imported as Int32; the status is a UInt32).
        guard status == 0 else { return SessionChangeObservation {} }
        let registered = token
        return SessionChangeObservation { _ = notify_cancel(registered) }
    }
}
#endif
