// A stand-in for Apple's `notify` module (the Darwin notification API, <notify.h>), so that the
// package's `#if canImport(notify)` branch is type-checked on Linux (scripts/apple-typecheck).
// Swift code imports it as `import notify`. Declared as Apple's documentation shows it:
// https://developer.apple.com/documentation/darwinnotify/darwin-notification-api

import Dispatch

// https://developer.apple.com/documentation/darwinnotify/notify_handler_t:
// `typealias notify_handler_t = (Int32) -> Void`, a C block type.
public typealias notify_handler_t = @convention(block) (Int32) -> Void

// https://developer.apple.com/documentation/darwinnotify/notify_post(_:):
// `func notify_post(_ name: UnsafePointer<CChar>!) -> UInt32`
public func notify_post(_ name: UnsafePointer<CChar>!) -> UInt32 { fatalError("stand-in") }

// https://developer.apple.com/documentation/darwinnotify/notify_register_dispatch(_:_:_:_:):
// `func notify_register_dispatch(_ name: UnsafePointer<CChar>!, _ out_token:
// UnsafeMutablePointer<Int32>!, _ queue: dispatch_queue_t!, _ handler: notify_handler_t!) -> UInt32`;
// `dispatch_queue_t` is `DispatchQueue` in Swift.
public func notify_register_dispatch(
    _ name: UnsafePointer<CChar>!,
    _ out_token: UnsafeMutablePointer<Int32>!,
    _ queue: DispatchQueue!,
    _ handler: notify_handler_t!
) -> UInt32 { fatalError("stand-in") }

// https://developer.apple.com/documentation/darwinnotify/notify_cancel(_:):
// `func notify_cancel(_ token: Int32) -> UInt32`
public func notify_cancel(_ token: Int32) -> UInt32 { fatalError("stand-in") }

// The status codes (notify.h: `#define NOTIFY_STATUS_OK 0`): a C integer macro imports as `Int32`;
// the package compares the returned `UInt32` with 0 instead.
public var NOTIFY_STATUS_OK: Int32 { 0 }
