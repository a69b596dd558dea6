import AuthSessionProviders
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file store's figures, each beside the bare Foundation or POSIX calls it stands for.
enum StoreBenchmarks {

    /// A session of realistic size: JWT-sized tokens and a profile.
    static let session = ManagedSession(
        accessToken: String(repeating: "a", count: 800),
        refreshToken: String(repeating: "r", count: 64),
        idToken: String(repeating: "i", count: 900),
        scope: "openid profile email",
        expiresAt: 1_800_003_600,
        issuedAt: 1_800_000_000,
        user: ManagedUser(identifier: "bench-user", name: "Bench", email: "bench@example.com")
    )

    /// The same fields as the store's format, for the baseline's `JSONEncoder`.
    private struct BareSession: Codable, Equatable {
        let accessToken: String
        let refreshToken: String?
        let idToken: String?
        let tokenType: String
        let scope: String?
        let expiresAt: TimeInterval
        let issuedAt: TimeInterval
        let subject: String
        let name: String?
        let email: String?
        let biometric: Bool

        init(_ session: ManagedSession) {
            accessToken = session.accessToken
            refreshToken = session.refreshToken
            idToken = session.idToken
            tokenType = session.tokenType
            scope = session.scope
            expiresAt = session.expiresAt
            issuedAt = session.issuedAt
            subject = session.user.identifier
            name = session.user.name
            email = session.user.email
            biometric = session.isBiometricAuthenticationEnabled
        }
    }

    /// A private folder for one benchmark; left for the system's temporary-file cleanup.
    private static func folder(_ name: String) -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("auth-session-bench-\(name)-\(getpid())", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        chmod(url.path, 0o700)
        return url
    }

    /// A save then a load through the store vs the same round trip through
    /// `JSONEncoder` + `Data.write(options: .atomic)` and `Data(contentsOf:)` + `JSONDecoder`.
    ///
    /// - Parameter durable: Whether the store `fsync`s (the baseline never does: this row then
    ///   shows the price of not losing data).
    static func saveLoad(durable: Bool) -> Comparison {
        let store = FileSessionStore(directory: folder(durable ? "durable" : "fast"), synchronizesWrites: durable)
        let bareURL = folder("bare").appendingPathComponent("session.json")
        let rounds = durable ? 200 : 2_000
        let session = session
        return Comparison(
            name: durable ? "session save + load, durable (fsync file and folder)" : "session save + load (no fsync)",
            subjectLabel: "FileSessionStore save + load",
            baselineLabel: "JSONEncoder + Data.write(.atomic) + read",
            unit: "ns/round trip",
            operations: rounds,
            goal: durable ? nil : 1.5,
            subject: {
                for _ in 0..<rounds {
                    try? store.save(session)
                    blackHole(try? store.load())
                }
            },
            baseline: {
                let encoder = JSONEncoder()
                let decoder = JSONDecoder()
                for _ in 0..<rounds {
                    try? encoder.encode(BareSession(session)).write(to: bareURL, options: .atomic)
                    blackHole(
                        (try? Data(contentsOf: bareURL)).flatMap { try? decoder.decode(BareSession.self, from: $0) }
                    )
                }
            }
        )
    }

    /// Uncontended exclusive access (this process's lock and an advisory `flock` on the lock file)
    /// vs a bare `flock` / unlock on an open file.
    static func exclusiveAccess() -> Comparison {
        let store = FileSessionStore(directory: folder("exclusive"))
        let lockPath = folder("bare-lock").appendingPathComponent("bare.lock").path
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        let rounds = 100_000
        try? store.withExclusiveAccess {}  // opens the lock file once, as any first use does
        return Comparison(
            name: "exclusive access, uncontended",
            subjectLabel: "FileSessionStore.withExclusiveAccess",
            baselineLabel: "flock(LOCK_EX) + flock(LOCK_UN)",
            unit: "ns/access",
            operations: rounds,
            goal: 1.5,
            subject: {
                var count = 0
                for _ in 0..<rounds {
                    try? store.withExclusiveAccess { count += 1 }
                }
                blackHole(count)
            },
            baseline: {
                var count = 0
                for _ in 0..<rounds {
                    flock(descriptor, LOCK_EX)
                    count += 1
                    flock(descriptor, LOCK_UN)
                }
                blackHole(count)
            }
        )
    }
}
