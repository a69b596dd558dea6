// A stand-in for the part of Apple's `Darwin` module this package uses, so that the package's
// `#if canImport(Darwin)` branches are type-checked on Linux (scripts/apple-typecheck). It
// re-exports Glibc for the POSIX calls both systems share; the C types therefore have Glibc's
// Swift types (`mode_t` is `UInt32` here, `UInt16` on Darwin), which this check cannot tell apart.

@_exported import Glibc

// MARK: os_unfair_lock
// https://developer.apple.com/documentation/os/os_unfair_lock
// https://developer.apple.com/documentation/os/os_unfair_lock_t
// https://developer.apple.com/documentation/os/os_unfair_lock_lock
// https://developer.apple.com/documentation/os/os_unfair_lock_unlock
// The C struct `os_unfair_lock_s { uint32_t _os_unfair_lock_opaque; }`, imported with its
// zero-initializing and memberwise initializers; a C struct of Sendable fields is Sendable.

public struct os_unfair_lock_s: Sendable {
    public var _os_unfair_lock_opaque: UInt32
    public init() { _os_unfair_lock_opaque = 0 }
    public init(_os_unfair_lock_opaque: UInt32) { self._os_unfair_lock_opaque = _os_unfair_lock_opaque }
}

public typealias os_unfair_lock = os_unfair_lock_s
public typealias os_unfair_lock_t = UnsafeMutablePointer<os_unfair_lock_s>

public func os_unfair_lock_lock(_ lock: os_unfair_lock_t) { fatalError("stand-in") }
public func os_unfair_lock_unlock(_ lock: os_unfair_lock_t) { fatalError("stand-in") }
public func os_unfair_lock_trylock(_ lock: os_unfair_lock_t) -> Bool { fatalError("stand-in") }

// MARK: fcntl commands
// fcntl(2) in Apple's man pages (xnu bsd/sys/fcntl.h): `#define F_FULLFSYNC 51`,
// `#define F_BARRIERFSYNC 85`; a C macro imports as a get-only global. `fcntl(_:_:)` and
// `fcntl(_:_:_:)` come from the Swift platform overlay, as re-exported from Glibc here.

public var F_FULLFSYNC: Int32 { 51 }
public var F_BARRIERFSYNC: Int32 { 85 }

// MARK: Foundation on Apple platforms
// Foundation on Linux lacks a few of the APIs Foundation has on Apple platforms. Those the
// package's documentation uses under `#if canImport(Darwin)` are declared here, where every such
// branch finds them.

import Foundation

extension FileManager {
    // https://developer.apple.com/documentation/foundation/filemanager/containerurl(forsecurityapplicationgroupidentifier:)
    public func containerURL(forSecurityApplicationGroupIdentifier groupIdentifier: String) -> URL? {
        fatalError("stand-in")
    }
}

// MARK: Sockets
// sys/socket.h in Apple's SDK (xnu bsd/sys/socket.h): `#define SOCK_STREAM 1` (an `Int32` on
// Darwin, where Glibc imports an enum `__socket_type`) and `#define SO_NOSIGPIPE 0x1022`, which
// Linux lacks (it has `MSG_NOSIGNAL` instead). Used by `LoopbackRedirectListener`.

public var SOCK_STREAM: Int32 { 1 }
public var SO_NOSIGPIPE: Int32 { 0x1022 }

extension ProcessInfo {
    // https://developer.apple.com/documentation/foundation/processinfo/performexpiringactivity(withreason:using:):
    // `func performExpiringActivity(withReason reason: String, using block: @escaping @Sendable (Bool) -> Void)`
    // (iOS 8.2, macOS 10.10.3, Mac Catalyst 13.1, app extensions included).
    @available(iOS 8.2, macOS 10.10.3, macCatalyst 13.1, *)
    public func performExpiringActivity(withReason reason: String, using block: @escaping @Sendable (Bool) -> Void) {
        fatalError("stand-in")
    }
}

// MARK: dyld
// dyld(3) in Apple's man pages (mach-o/dyld.h, which Darwin re-exports):
// `int _NSGetExecutablePath(char* buf, uint32_t* bufsize)`, available from macOS 10.2 and iOS 2.0;
// 0 when the path was copied, -1 with the size needed in `*bufsize` when the buffer is too small.
// "A path" to the executable, not necessarily the real path (it may be a symbolic link). Used by
// `ApplicationLifecycle` to tell a helper tool inside an app bundle from the app.
@available(macOS 10.2, iOS 2.0, macCatalyst 13.1, *)
public func _NSGetExecutablePath(_ buf: UnsafeMutablePointer<CChar>!, _ bufsize: UnsafeMutablePointer<UInt32>!) -> Int32 {
    fatalError("stand-in")
}
