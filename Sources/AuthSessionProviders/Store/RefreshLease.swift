import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A record, kept in a store shared between processes, that one process is presenting the stored
/// refresh token to the server.
///
/// A refresh records its lease inside the store's exclusive access, which it holds for
/// microseconds, then talks to the server with no lock held, and takes exclusive access again to
/// save the rotated session and clear the lease. Another process that needs a refresh meanwhile
/// finds the live lease and waits for the commit (a change notice, or the deadline) instead of
/// presenting the same refresh token a second time. A lease whose owner is no longer running, or
/// whose deadline passed, is taken over: a process killed mid-refresh never blocks the others
/// for long.
///
/// The lease names the token it is about by a fingerprint, never by the token: a lease about a
/// token the store no longer holds (the session was rotated, signed out, or replaced by a new
/// sign-in) blocks nobody.
public struct RefreshLease: Hashable, Sendable, Codable, CustomStringConvertible {

    /// The longest a lease stands, whatever its owner recorded: 15 minutes. Every process reads a
    /// lease by the same rule, from what its owner recorded and this bound, whatever its own
    /// ``ManagedSessionProvider/Configuration/refreshLeaseDuration``.
    public static let maximumDuration: TimeInterval = 900

    /// The process that holds a lease.
    public struct Owner: Hashable, Sendable, Codable, CustomStringConvertible {

        /// The owner's process identifier.
        public var processIdentifier: Int32

        /// A random identifier of the owner within its process (each session manager has its
        /// own), so that a later process given the same process identifier, or another manager of
        /// the same process, is not mistaken for the owner.
        public var instance: String

        /// Creates an owner.
        ///
        /// - Parameters:
        ///   - processIdentifier: The process identifier.
        ///   - instance: The identifier of the process's run.
        public init(processIdentifier: Int32, instance: String) {
            self.processIdentifier = processIdentifier
            self.instance = instance
        }

        /// A new owner in this process, with a random instance.
        ///
        /// - Returns: The owner.
        public static func inThisProcess() -> Owner {
            Owner(processIdentifier: getpid(), instance: randomInstance())
        }

        /// A random (version 4) UUID's text, from the system's generator: one `getrandom` call,
        /// where Foundation's `UUID()` on Linux opens, reads and closes `/dev/urandom` (a launch
        /// makes one owner, and those three calls were a tenth of its cost).
        private static func randomInstance() -> String {
            var generator = SystemRandomNumberGenerator()
            var bytes = (generator.next() as UInt64, generator.next() as UInt64)
            return withUnsafeMutableBytes(of: &bytes) { raw in
                raw[6] = (raw[6] & 0x0F) | 0x40  // version 4
                raw[8] = (raw[8] & 0x3F) | 0x80  // the RFC 4122 variant
                let uuid = raw.load(as: uuid_t.self)
                return UUID(uuid: uuid).uuidString
            }
        }

        /// Whether the owner may still be running: `false` only when the operating system says no
        /// process has its identifier. A process that cannot be signalled (another app's, on a
        /// sandboxed platform) counts as running; its lease then lasts until its deadline.
        public var mayBeRunning: Bool {
            if processIdentifier == getpid() { return true }
            if kill(processIdentifier, 0) == 0 { return true }
            return errno != ESRCH
        }

        /// `pid <number>`.
        public var description: String { "pid \(processIdentifier)" }

        private enum CodingKeys: String, CodingKey {
            case processIdentifier = "pid"
            case instance
        }
    }

    /// Who holds the lease.
    public var owner: Owner

    /// When the owner took it, in seconds since 1970.
    public var startedAt: TimeInterval

    /// When it lapses, in seconds since 1970: later than the whole exchange with the server can
    /// take, so a running owner never loses its lease mid-call.
    public var deadline: TimeInterval

    /// The fingerprint of the refresh token being presented (``fingerprint(of:)``).
    public var refreshTokenFingerprint: String

    /// Creates a lease.
    ///
    /// - Parameters:
    ///   - owner: The process presenting the token.
    ///   - startedAt: When it started, in seconds since 1970.
    ///   - deadline: When the lease lapses, in seconds since 1970.
    ///   - refreshTokenFingerprint: ``fingerprint(of:)`` of the token presented.
    public init(owner: Owner, startedAt: TimeInterval, deadline: TimeInterval, refreshTokenFingerprint: String) {
        self.owner = owner
        self.startedAt = startedAt
        self.deadline = deadline
        self.refreshTokenFingerprint = refreshTokenFingerprint
    }

    /// Whether the lease is about `refreshToken`.
    ///
    /// - Parameter refreshToken: A refresh token.
    /// - Returns: `true` if the lease's fingerprint is the token's.
    public func covers(_ refreshToken: String?) -> Bool {
        refreshToken.map { Self.fingerprint(of: $0) == refreshTokenFingerprint } ?? false
    }

    /// A name for `token` that is the same in every process: 32 bits of its FNV-1a hash, in
    /// hexadecimal. Short on purpose: the lease file may be less protected than the token (a
    /// Keychain store's coordination folder is an ordinary folder), and 32 bits say next to
    /// nothing about a token, while two tokens that share them cost at most a wait for a lease
    /// that was not about this one (bounded by its deadline).
    ///
    /// - Parameter token: A refresh token.
    /// - Returns: The fingerprint.
    public static func fingerprint(of token: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in token.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return String(UInt32(truncatingIfNeeded: hash ^ (hash >> 32)), radix: 16)
    }

    /// The owner and the times; never the fingerprint.
    public var description: String {
        "RefreshLease(\(owner), startedAt: \(startedAt), deadline: \(deadline))"
    }

    private enum CodingKeys: String, CodingKey {
        case owner
        case startedAt = "started_at"
        case deadline
        case refreshTokenFingerprint = "refresh_token_fingerprint"
    }
}
