import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

// The same detection as AuthSessionOAuth2Tests/Support/SanitizerDetection.swift's: test targets
// share no source without a shared target of their own.

/// Whether this test process runs under ThreadSanitizer (`swift test --sanitize=thread`), which
/// slows it 5 to 15 times on this project's 2-core machines: pure computation with no thread to
/// watch (the signature vectors) runs in plain `swift test` only, so it does not starve the
/// tests whose subject is timing.
let isThreadSanitized: Bool = {
    guard let process = dlopen(nil, RTLD_NOW) else { return false }
    defer { dlclose(process) }
    return dlsym(process, "__tsan_init") != nil
}()
