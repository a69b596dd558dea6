import AuthSession
import AuthSessionInterface
import Foundation

/// A ``SessionStore`` in the Keychain: one generic-password item, for apps on Apple platforms and
/// the extensions that share their session.
///
/// ```swift
/// let store = KeychainSessionStore(service: "com.example.app")
/// let provider = ManagedSessionProvider(store: store, remote: oauth)
/// ```
///
/// What it guarantees, where apps that write this by hand get hurt:
///
/// - **A launch before the first unlock is never "signed out".** iOS may launch an app before the
///   user first unlocks the device (prewarming, a background task); the item cannot be read then,
///   and a read can answer "not found" for an item that exists. The store trusts "not found" only
///   once it has seen that protected data is available (it adds a small probe item with the same
///   accessibility, and deletes it); otherwise the load is ``SessionStoreError/unavailable(reason:)``,
///   the manager stays loading, and nothing is deleted.
/// - **Two first saves at once both succeed** (an app and its extension, two threads): a save adds
///   the item, and updates it when the add finds it already there.
/// - **Corrupt bytes are kept.** An item that holds no session is moved, inside exclusive access, to
///   another account of the same service (`<account>.corrupt-<date>-<random>`), never deleted; a
///   good item written by another caller meanwhile is left alone (each save stamps the item, and
///   only the stamp that was read is moved).
/// - **macOS uses the data-protection keychain** (`kSecUseDataProtectionKeychain`), where the
///   accessibility and the access group apply as on iOS. A process without the entitlement it
///   needs, such as an unsigned command-line tool, gets ``SessionStoreError/missingEntitlement(operation:)``.
///
/// The item is readable after the device's first unlock and never leaves the device
/// (``Accessibility/afterFirstUnlockThisDeviceOnly``) unless you choose otherwise; see
/// ``Accessibility`` and ``AccessControl`` for the trade-offs. Pass an `accessGroup` to share the
/// session with your app extensions (the README's "Apple platforms" section has the recipe).
///
/// On Linux the type exists, without a public initializer, so that its logic is tested there
/// against a fake keychain; the Keychain calls themselves are Apple's.
///
/// All operations are thread-safe. ``withExclusiveAccess(_:)`` excludes callers in this process.
public final class KeychainSessionStore: SessionStore {

    /// The item's service (`kSecAttrService`), usually the app's bundle identifier.
    public let service: String

    /// The item's account (`kSecAttrAccount`).
    public let account: String

    /// The Keychain access group the item is in (`kSecAttrAccessGroup`), shared with the app's
    /// extensions; `nil` for the app's default group.
    public let accessGroup: String?

    /// When the item's data can be read.
    public let accessibility: Accessibility

    /// Whether reading the item needs the user's authentication, enforced by the Keychain itself.
    public let accessControl: AccessControl?

    private let items: any KeychainItems
    private let address: KeychainItemAddress
    // A one-byte value, not `()`: a zero-size value shares its address with the lock, and
    // ThreadSanitizer then reports the lock's own read as a race on it.
    private let exclusive = ConcurrencySafeContainer<UInt8>(0)
    /// The thread inside ``withExclusiveAccess(_:)``, so that a load made inside it sets a corrupt
    /// item aside without taking the (non-recursive) access again.
    private let exclusiveHolder = ConcurrencySafeContainer<ObjectIdentifier?>(nil)

    /// How many times a save adds again after finding the item gone between its add and its update.
    static let maximumSaveAttempts = 4

    /// Creates a store over `items`: the Keychain on Apple platforms, a fake in tests.
    init(
        service: String,
        account: String,
        accessGroup: String?,
        accessibility: Accessibility,
        accessControl: AccessControl?,
        items: any KeychainItems
    ) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.accessibility = accessibility
        self.accessControl = accessControl
        self.items = items
        address = KeychainItemAddress(service: service, account: account, accessGroup: accessGroup)
    }

    private var protection: KeychainItemProtection {
        KeychainItemProtection(accessibility: accessibility, accessControl: accessControl)
    }

    // MARK: - SessionStore

    /// Reads the item.
    ///
    /// - Returns: The session, or `nil` if there is no item and protected data is available, so
    ///   that "no item" can be trusted.
    /// - Throws: ``SessionStoreError``:
    ///   - `.unavailable` while the item cannot be read (a locked device, a launch before the first
    ///     unlock, an access-controlled item not yet authenticated); nothing was changed;
    ///   - `.corrupt` for bytes that are not a session (the item was moved aside, kept);
    ///   - `.unsupportedFormatVersion` for a session a newer version wrote (left in place);
    ///   - `.missingEntitlement` or `.keychain` when the Keychain refuses.
    public func load() throws(SessionStoreError) -> ManagedSession? {
        switch items.read(address) {
        case .success(let contents):
            return try SessionFormat.storedSession(in: contents.data) { setAside(contents) }
        case .failure(.itemNotFound):
            try confirmProtectedDataAvailable(after: "SecItemCopyMatching")
            return nil
        case .failure(let status):
            throw status.sessionStoreError(operation: "SecItemCopyMatching")
        }
    }

    /// Writes the item: adds it, or updates it if it is already there.
    ///
    /// Adding first is what lets two first saves at once (an app and its extension, two threads)
    /// both succeed: one adds, the other finds the item and updates it. An item removed between a
    /// save's add and its update is added again.
    ///
    /// - Parameter session: The session to keep.
    /// - Throws: ``SessionStoreError``: `.unavailable` while the device is locked (the stored item
    ///   is unchanged), `.missingEntitlement` or `.keychain` when the Keychain refuses.
    public func save(_ session: ManagedSession) throws(SessionStoreError) {
        let contents = KeychainItemContents(data: SessionFormat.encode(session), stamp: Self.newStamp())
        for _ in 0..<Self.maximumSaveAttempts {
            let added = items.add(address, contents, protection: protection)
            if added == .success { return }
            guard added == .duplicateItem else { throw added.sessionStoreError(operation: "SecItemAdd") }
            let updated = items.update(address, to: contents, protection: protection)
            if updated == .success { return }
            guard updated == .itemNotFound else { throw updated.sessionStoreError(operation: "SecItemUpdate") }
        }
        throw KeychainStatus.duplicateItem.sessionStoreError(operation: "SecItemAdd")
    }

    /// Deletes the item; no item is not an error.
    ///
    /// - Throws: ``SessionStoreError``: `.unavailable` when the device is locked and "no item"
    ///   cannot be trusted (the item may still be there: try again once unlocked),
    ///   `.missingEntitlement` or `.keychain` when the Keychain refuses.
    public func remove() throws(SessionStoreError) {
        let status = items.delete(address)
        switch status {
        case .success:
            return
        case .itemNotFound:
            try confirmProtectedDataAvailable(after: "SecItemDelete")
        default:
            throw status.sessionStoreError(operation: "SecItemDelete")
        }
    }

    /// Runs `body` while no other caller of this method in this process runs its own.
    ///
    /// It does not exclude other processes (an app extension sharing the item): see the README's
    /// "Honest limits".
    ///
    /// - Parameter body: The read-modify-write; it may call ``load()``, ``save(_:)`` and
    ///   ``remove()``, not this method.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func withExclusiveAccess<Result>(_ body: () throws -> Result) throws -> Result {
        try exclusive.withLock { _ in
            let thread = ObjectIdentifier(Thread.current)
            exclusiveHolder.withLock { $0 = thread }
            defer { exclusiveHolder.withLock { $0 = nil } }
            return try body()
        }
    }

    // MARK: - Access control

    /// Asks the user to authenticate for the item's ``accessControl`` (one system prompt, Face ID
    /// or the passcode); afterwards this store reads the item without asking until
    /// ``forgetAuthentication()``. Without an access control it returns at once.
    ///
    /// Call it from a task, not on the main thread's critical path: it waits for the user. A
    /// launch that found the item unavailable meanwhile keeps waiting for the store; call
    /// ``ManagedSessionProvider/reloadStore()`` after this returns so that it loads at once. Not
    /// cancellable: the prompt stays until the user answers it.
    ///
    /// - Parameter reason: Why the app asks, shown in the prompt.
    /// - Throws: `BiometricAuthenticationError` when the user was not authenticated.
    public func authenticate(reason: String) async throws(BiometricAuthenticationError) {
        try await items.authenticate(reason: reason, protection: protection)
    }

    /// Forgets the authentication ``authenticate(reason:)`` gave: reading an access-controlled item
    /// is ``SessionStoreError/unavailable(reason:)`` again until the next one. Call it when the app
    /// goes to the background, for example.
    public func forgetAuthentication() {
        items.forgetAuthentication()
    }

    // MARK: - Helpers

    /// The account of the item whose addition tells whether protected data is available.
    var probeAccount: String { account + ".protected-data-probe" }

    /// Returns if protected data is available, so that the "not found" `operation` got can be
    /// trusted; throws otherwise.
    ///
    /// Before the first unlock a read can answer "not found" for an item that exists, but an
    /// add with the same accessibility answers `errSecInteractionNotAllowed`: the add is the
    /// probe (deleted at once). FirebaseAuth found the same answer to the same reports.
    private func confirmProtectedDataAvailable(after operation: String) throws(SessionStoreError) {
        let probe = address.withAccount(probeAccount)
        let status = items.add(
            probe,
            KeychainItemContents(data: Data([0]), stamp: nil),
            protection: KeychainItemProtection(accessibility: accessibility, accessControl: nil)
        )
        switch status {
        case .success, .duplicateItem:
            _ = items.delete(probe)
        case .interactionNotAllowed:
            throw .unavailable(
                reason: "\(operation) found no item, but the device has not been unlocked since it started (or is "
                    + "locked), so an item may exist that cannot be seen yet (\(status))"
            )
        default:
            throw status.sessionStoreError(operation: "SecItemAdd (confirming that \(operation) can see the item)")
        }
    }

    /// Moves the corrupt item that was read to another account, if it is still the one there;
    /// returns where it went.
    private func setAside(_ corrupt: KeychainItemContents) -> String? {
        let move = { () -> String? in
            // A good item saved meanwhile by another caller stays where it is.
            guard case .success(let current) = self.items.read(self.address), current == corrupt else { return nil }
            let stamp = Int(Date().timeIntervalSince1970)
            let aside = "\(self.account).corrupt-\(stamp)-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
            guard self.items.move(self.address, stamp: corrupt.stamp, toAccount: aside) == .success else { return nil }
            return "the Keychain item of service \"\(self.service)\", account \"\(aside)\""
        }
        let thread = ObjectIdentifier(Thread.current)
        if exclusiveHolder.withLock({ $0 == thread }) {
            return move()
        }
        return (try? withExclusiveAccess(move)) ?? nil
    }

    /// A new random stamp for a save.
    private static func newStamp() -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<16).map { _ in UInt8.random(in: 0...UInt8.max, using: &generator) })
    }
}
