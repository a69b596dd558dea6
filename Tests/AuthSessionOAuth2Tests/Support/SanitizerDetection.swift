import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// Whether this test process runs under ThreadSanitizer (`swift test --sanitize=thread`), which
/// slows it 5 to 15 times on this project's 2-core machines: a test whose subject is a real-time
/// window on real sockets (a tenth of a second) cannot hold there, and runs in plain `swift test`.
let isThreadSanitized: Bool = {
    guard let process = dlopen(nil, RTLD_NOW) else { return false }
    defer { dlclose(process) }
    return dlsym(process, "__tsan_init") != nil
}()
