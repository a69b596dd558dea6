import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

// The same detection as the other test targets' Support/SanitizerDetection.swift: test targets
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

/// Claims that carry nothing a signature check looks at (as the session manager's signature tests
/// use them).
func someClaims(_ subject: String = "user-1") -> [String: Any] {
    ["iss": "https://issuer.example", "sub": subject, "aud": "client", "iat": 1_800_000_000, "exp": 1_800_000_600]
}
