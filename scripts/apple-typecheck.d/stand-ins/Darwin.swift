// A stand-in for the part of Apple's `Darwin` module this package uses, so that the package's
// `#if canImport(Darwin)` branches are type-checked on Linux (scripts/apple-typecheck).
//
// It does not re-export Glibc: a file that imports Darwin and not Foundation sees only what is
// declared here, with Darwin's Swift types (a `pthread_key_t` is a `UInt`, a `pthread_t` a
// pointer), and a Linux-only name there does not compile. A file that also imports Foundation
// sees Glibc's C names anyway (Foundation re-exports Glibc on Linux), and a name declared both
// here and in Glibc would be ambiguous there, so this module declares no name Glibc declares
// that such a file uses; those names are checked by name instead, against
// scripts/apple-typecheck.d/darwin-names.txt (availability.py --darwin-names). The one exception
// is `SOCK_STREAM`, whose types differ (`Int32` here, Glibc's enum `__socket_type` there): the
// argument's type picks this one.

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
@discardableResult public func os_unfair_lock_trylock(_ lock: os_unfair_lock_t) -> Bool { fatalError("stand-in") }

// MARK: POSIX threads
// For the files that import Darwin without Foundation (AuthSession's locks and InputQueue), as
// Apple's libpthread headers declare them and Swift imports them: sys/_pthread/_pthread_types.h
// (`struct _opaque_pthread_mutex_t { long __sig; char __opaque[56]; }`, the attribute's with 8
// bytes, `typedef unsigned long __darwin_pthread_key_t`, `typedef struct _opaque_pthread_t
// *__darwin_pthread_t`), pthread.h (`#define PTHREAD_MUTEX_RECURSIVE 2`, the functions below),
// and Apple's man pages pthread_mutex_init(3), pthread_mutexattr_settype(3), pthread_key_create(3),
// pthread_getspecific(3), pthread_self(3). A C struct imports with a zero-initializing `init()`;
// the mutex functions' unannotated pointers import as implicitly unwrapped optionals, a key's
// value and destructor are `_Nullable` in pthread.h. An imported C function's result may be
// ignored without a warning (`@discardableResult`).
// https://developer.apple.com/library/archive/documentation/System/Conceptual/ManPages_iPhoneOS/man3/pthread_mutex_init.3.html

public struct _opaque_pthread_mutex_t {
    public var __sig: Int
    public var __opaque:
        (
            CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar,
            CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar,
            CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar,
            CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar
        )
    public init() { fatalError("stand-in") }
}

public struct _opaque_pthread_mutexattr_t {
    public var __sig: Int
    public var __opaque: (CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar)
    public init() { fatalError("stand-in") }
}

public struct _opaque_pthread_t {}

public typealias pthread_mutex_t = _opaque_pthread_mutex_t
public typealias pthread_mutexattr_t = _opaque_pthread_mutexattr_t
public typealias pthread_key_t = UInt
public typealias pthread_t = UnsafeMutablePointer<_opaque_pthread_t>

public var PTHREAD_MUTEX_RECURSIVE: Int32 { 2 }

@discardableResult public func pthread_mutex_init(
    _ mutex: UnsafeMutablePointer<pthread_mutex_t>!,
    _ attributes: UnsafePointer<pthread_mutexattr_t>!
) -> Int32 { fatalError("stand-in") }
@discardableResult public func pthread_mutex_destroy(_ mutex: UnsafeMutablePointer<pthread_mutex_t>!) -> Int32 { fatalError("stand-in") }
@discardableResult public func pthread_mutex_lock(_ mutex: UnsafeMutablePointer<pthread_mutex_t>!) -> Int32 { fatalError("stand-in") }
@discardableResult public func pthread_mutex_trylock(_ mutex: UnsafeMutablePointer<pthread_mutex_t>!) -> Int32 { fatalError("stand-in") }
@discardableResult public func pthread_mutex_unlock(_ mutex: UnsafeMutablePointer<pthread_mutex_t>!) -> Int32 { fatalError("stand-in") }
@discardableResult public func pthread_mutexattr_init(_ attributes: UnsafeMutablePointer<pthread_mutexattr_t>!) -> Int32 {
    fatalError("stand-in")
}
@discardableResult public func pthread_mutexattr_destroy(_ attributes: UnsafeMutablePointer<pthread_mutexattr_t>!) -> Int32 {
    fatalError("stand-in")
}
@discardableResult public func pthread_mutexattr_settype(_ attributes: UnsafeMutablePointer<pthread_mutexattr_t>!, _ type: Int32) -> Int32 {
    fatalError("stand-in")
}
@discardableResult public func pthread_key_create(
    _ key: UnsafeMutablePointer<pthread_key_t>!,
    _ destructor: (@convention(c) (UnsafeMutableRawPointer) -> Void)?
) -> Int32 { fatalError("stand-in") }
@discardableResult public func pthread_getspecific(_ key: pthread_key_t) -> UnsafeMutableRawPointer? { fatalError("stand-in") }
@discardableResult public func pthread_setspecific(_ key: pthread_key_t, _ value: UnsafeRawPointer?) -> Int32 { fatalError("stand-in") }
@discardableResult public func pthread_self() -> pthread_t { fatalError("stand-in") }

// MARK: fcntl commands
// fcntl(2) in Apple's man pages (xnu bsd/sys/fcntl.h): `#define F_FULLFSYNC 51`,
// `#define F_BARRIERFSYNC 85`; a C macro imports as a get-only global. `fcntl(_:_:)` and
// `fcntl(_:_:_:)` come from the Swift platform overlay; the files that call them import Foundation,
// which brings Glibc's (checked by name).

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
