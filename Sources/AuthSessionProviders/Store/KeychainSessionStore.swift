#if canImport(Security)
import AuthSession
import Foundation
import Security

/// A ``SessionStore`` in the Keychain: one generic-password item, readable after the device's
/// first unlock, never synchronised or migrated to another device.
///
/// `errSecInteractionNotAllowed` (the device is locked, for example during a launch in the
/// background) is reported as ``SessionStoreError/unavailable(reason:)``: try again later; it
/// never means "no session". Pass an access group to share the session with an app extension.
///
/// The portable counterpart the tests exercise is ``FileSessionStore``; this type cannot be
/// compiled on Linux, so it is kept small enough to be checked by reading.
///
/// All operations are thread-safe.
public final class KeychainSessionStore: SessionStore {

    /// The item's service name.
    public let service: String

    /// The item's account name.
    public let account: String

    /// The access group shared with extensions, if any.
    public let accessGroup: String?

    // A one-byte value, not `()`: a zero-size value shares its address with the lock, and
    // ThreadSanitizer then reports the lock's own read as a race on it.
    private let exclusive = ConcurrencySafeContainer<UInt8>(0)

    /// Creates a store for the item (`service`, `account`), in `accessGroup` if given.
    ///
    /// - Parameters:
    ///   - service: The item's service, usually the app's bundle identifier.
    ///   - account: The item's account; `"session"` by default.
    ///   - accessGroup: A Keychain access group shared with app extensions.
    public init(service: String, account: String = "session", accessGroup: String? = nil) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
    }

    /// Reads the item.
    ///
    /// - Returns: The session, or `nil` if there is no item.
    /// - Throws: `.unavailable` while the device is locked; `.corrupt` for bytes that are not a
    ///   session (the item is deleted, as there is no "aside" in the Keychain); `.keychain`
    ///   otherwise.
    public func load() throws(SessionStoreError) -> ManagedSession? {
        var query = baseQuery()
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        switch status {
        case errSecSuccess:
            guard let data = result as? Data else { throw .corrupt(reason: "the item holds no data", setAsideAt: nil) }
            switch SessionFormat.decode(data) {
            case .session(let session):
                return session
            case .unsupportedVersion(let version):
                throw .unsupportedFormatVersion(found: version, newestSupported: SessionFormat.currentVersion)
            case .corrupt(let reason):
                SecItemDelete(baseQuery() as CFDictionary)
                throw .corrupt(reason: reason, setAsideAt: nil)
            }
        case errSecItemNotFound:
            return nil
        default:
            throw Self.error(status, operation: "SecItemCopyMatching")
        }
    }

    /// Writes the item: updates it if present, adds it otherwise.
    ///
    /// - Parameter session: The session to keep.
    /// - Throws: `.unavailable` while the device is locked; `.keychain` otherwise.
    public func save(_ session: ManagedSession) throws(SessionStoreError) {
        let data = SessionFormat.encode(session)
        let attributes: [String: Any] = [
            kSecValueData as String: data,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        let status = SecItemUpdate(baseQuery() as CFDictionary, attributes as CFDictionary)
        switch status {
        case errSecSuccess:
            return
        case errSecItemNotFound:
            let added = SecItemAdd(baseQuery().merging(attributes) { $1 } as CFDictionary, nil)
            guard added == errSecSuccess else { throw Self.error(added, operation: "SecItemAdd") }
        default:
            throw Self.error(status, operation: "SecItemUpdate")
        }
    }

    /// Deletes the item; no item is not an error.
    ///
    /// - Throws: `.unavailable` while the device is locked; `.keychain` otherwise.
    public func remove() throws(SessionStoreError) {
        let status = SecItemDelete(baseQuery() as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else {
            throw Self.error(status, operation: "SecItemDelete")
        }
    }

    /// Runs `body` while no other caller of this method in this process runs its own. The
    /// Keychain belongs to one app (and its extensions, which coordinate through the app).
    ///
    /// - Parameter body: The read-modify-write.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func withExclusiveAccess<Result>(_ body: () throws -> Result) throws -> Result {
        try exclusive.withLock { _ in try body() }
    }

    private func baseQuery() -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        if let accessGroup {
            query[kSecAttrAccessGroup as String] = accessGroup
        }
        return query
    }

    private static func error(_ status: OSStatus, operation: String) -> SessionStoreError {
        if status == errSecInteractionNotAllowed {
            return .unavailable(reason: "the device is locked (errSecInteractionNotAllowed)")
        }
        return .keychain(operation: operation, status: status)
    }
}
#endif
