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
///   while the device is unlocked, which it checks by adding a small probe item readable only
///   then (and deleting it): every class is readable then, whichever class the item was written
///   with. Otherwise the load is ``SessionStoreError/unavailable(reason:)``, the manager stays
///   loading, and nothing is deleted. The device may be unlocked (and another process may write)
///   between the read and the probe, so after a probe that says "unlocked" the store reads again
///   (a removal deletes again), and only that answer counts.
/// - **Two first saves at once both succeed** (an app and its extension, two threads): a save adds
///   the item, and updates it when the add finds it already there.
/// - **Corrupt bytes are kept.** An item that holds no session is moved to another account of the
///   same service (`<account>.corrupt-<date>-<random>`), never deleted. The move is made inside
///   exclusive access, and only of the stamp that was read (each save stamps the item), so a good
///   item saved meanwhile stays. An item without a stamp (an earlier version wrote it) is copied
///   instead (`<account>.corrupt-copy-<hash>`, once) and stays until a save replaces it. A
///   load made outside exclusive access while another caller holds it does not wait: the item
///   stays in place, and the next exclusive access of this store sets it aside (a save or a
///   removal before that copies it aside first).
/// - **macOS uses the data-protection keychain** (`kSecUseDataProtectionKeychain`), where the
///   accessibility and the access group apply as on iOS. A process without the entitlement it
///   needs, such as an unsigned command-line tool, gets ``SessionStoreError/missingEntitlement(operation:)``.
///
/// The item is readable after the device's first unlock and never leaves the device
/// (``Accessibility/afterFirstUnlockThisDeviceOnly``) unless you choose otherwise; see
/// ``Accessibility`` and ``AccessControl`` for the trade-offs. Pass an `accessGroup` to share the
/// session with your app extensions (the article <doc:ApplePlatforms> has the recipe).
/// Choose the group before the first release, and pass it: an item is in exactly one group, a
/// store without a group reads from every group the app has but adds to the first, so turning on
/// Keychain Sharing later can leave two items (this store does not migrate one into a group).
///
/// "Not found" is trusted only while the device is unlocked: a signed-out user's launch in the
/// background on a locked device (a push, a widget) stays loading until the device is unlocked.
///
/// Each call is a request to the system's keychain daemon (a few milliseconds); the manager's
/// first load runs in the handle's initializer, on the thread that creates it. ``remove()`` needs
/// no authentication: it deletes an item that can no longer be read (see ``AccessControl``).
///
/// On Linux the type exists, without a public initializer, so that its logic is tested there
/// against a fake keychain; the Keychain calls themselves are Apple's.
///
/// **Processes sharing the item** (an app and its extensions): give the store a
/// `coordinationDirectory` in the app group's container. Its exclusive access is then a file lock
/// there too (held for microseconds, never across the network), a refresh records its
/// ``RefreshLease`` there, and every write is a change notice to the other processes (the Darwin
/// notification center on Apple platforms), so that no two processes present the same rotating
/// refresh token, and a sign-out in one reaches the others at once. Without a coordination folder,
/// the store coordinates within one process only: an app and an extension that both refresh may
/// present the same refresh token, and a server that detects reuse then ends the session for both.
///
/// All operations are thread-safe. ``withExclusiveAccess(_:)`` excludes the callers of this
/// instance, and, with a coordination folder, every process using that folder.
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

    /// The folder where processes sharing the item coordinate (lock, lease, notices), if any.
    public let coordinationDirectory: URL?

    private let items: any KeychainItems
    private let address: KeychainItemAddress
    private let coordination: FileCoordination?
    // A one-byte value, not `()`: a zero-size value shares its address with the lock, and
    // ThreadSanitizer then reports the lock's own read as a race on it.
    private let exclusive = ConcurrencySafeContainer<UInt8>(0)
    /// The thread inside ``withExclusiveAccess(_:)``, so that a load made inside it sets a corrupt
    /// item aside without taking the (non-recursive) access again.
    private let exclusiveHolder = ConcurrencySafeContainer<ObjectIdentifier?>(nil)
    /// A corrupt item a load found while another caller held exclusive access: set aside by the
    /// next exclusive access, save or removal, before it can overwrite the bytes.
    private let pendingSetAside = ConcurrencySafeContainer<KeychainItemContents?>(nil)
    /// Whether the last read found the item protected otherwise than this store protects it (an
    /// earlier version of the app, or an extension, chose another accessibility or access
    /// control): the next save replaces the item instead of updating it.
    private let storedProtectionDiffers = ConcurrencySafeContainer(false)

    /// How many times a save adds again after finding the item gone between its add and its update.
    static let maximumSaveAttempts = 4

    /// Creates a store over `items`: the Keychain on Apple platforms, a fake in tests.
    init(
        service: String,
        account: String,
        accessGroup: String?,
        accessibility: Accessibility,
        accessControl: AccessControl?,
        coordinationDirectory: URL? = nil,
        changeNotificationName: String? = nil,
        items: any KeychainItems
    ) {
        self.coordinationDirectory = coordinationDirectory
        coordination = coordinationDirectory.map { folder in
            FileCoordination(
                directoryPath: folder.standardizedFileURL.path,
                baseName: "\(service).\(account).keychain",
                sessionFileName: nil,
                notificationName: changeNotificationName
            )
        }
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
        let first = items.read(address)
        guard case .failure(.itemNotFound) = first else { return try session(in: first) }
        try confirmProtectedDataAvailable(after: "SecItemCopyMatching")
        // The device may have been unlocked, and another process may have written the item,
        // between that read and the probe: only a read made after a probe that says "unlocked"
        // can be trusted when it finds nothing.
        return try session(in: items.read(address))
    }

    /// The session a read found, `nil` for "not found", or the read's error.
    private func session(
        in read: Result<KeychainItemRead, KeychainStatus>
    ) throws(SessionStoreError) -> ManagedSession? {
        switch read {
        case .success(let found):
            let contents = found.contents
            let differs = found.protection?.differs(from: protection) ?? false
            storedProtectionDiffers.withLock { $0 = differs }
            return try SessionFormat.storedSession(in: contents.data) { setAside(contents) }
        case .failure(.itemNotFound):
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
    /// An item protected otherwise than this store protects it (an earlier version of the app
    /// chose another ``Accessibility`` or ``AccessControl``) is replaced instead: deleted, then
    /// added with this store's protection, inside exclusive access, once a copy with the new
    /// protection was added beside it (so a locked device that refuses the new protection leaves
    /// the item as it was). Apple documents which attributes `SecItemUpdate` may change, not that
    /// it re-protects an existing item, and apps report it answering `errSecParam`, or keeping the
    /// old protection. The store replaces the item when an update answers `errSecParam`, and on the
    /// save after a load that found the item with another accessibility (a read tells the
    /// accessibility, not whether an item has an access control: adding or removing one relies on
    /// the update, or its `errSecParam`). Between the delete and the add
    /// (two Keychain calls, once per change of protection) a process reading outside exclusive
    /// access finds no item, and a process killed there loses the stored session.
    ///
    /// - Parameter session: The session to keep.
    /// - Throws: ``SessionStoreError``: `.unavailable` while the device is locked (the stored item
    ///   is unchanged), `.missingEntitlement` or `.keychain` when the Keychain refuses.
    public func save(_ session: ManagedSession) throws(SessionStoreError) {
        setAsidePending()
        let contents = KeychainItemContents(data: SessionFormat.encode(session), stamp: Self.newStamp())
        for _ in 0..<Self.maximumSaveAttempts {
            let added = items.add(address, contents, protection: protection)
            if added == .success {
                storedProtectionDiffers.withLock { $0 = false }
                coordination?.announceChange()
                return
            }
            guard added == .duplicateItem else { throw added.sessionStoreError(operation: "SecItemAdd") }
            if storedProtectionDiffers.withLock({ $0 }) {
                return try replace(with: contents)
            }
            let updated = items.update(address, to: contents, protection: protection)
            if updated == .success {
                coordination?.announceChange()
                return
            }
            if updated == .param {
                return try replace(with: contents)
            }
            guard updated == .itemNotFound else { throw updated.sessionStoreError(operation: "SecItemUpdate") }
            // Removed between the two calls, or there but hidden: an add can find an item a locked
            // device's update cannot see. Then it is unavailable, not a race to run again.
            try confirmProtectedDataAvailable(after: "SecItemUpdate")
        }
        throw KeychainStatus.duplicateItem.sessionStoreError(operation: "SecItemAdd")
    }

    /// Replaces the item with `contents` under this store's protection, inside exclusive access:
    /// a copy is added beside it and deleted (the proof that the Keychain accepts the new
    /// protection now), then the item is deleted and added again.
    private func replace(with contents: KeychainItemContents) throws(SessionStoreError) {
        try insideOrTakingExclusiveAccess { () throws(SessionStoreError) in
            let staged = address.withAccount("\(account).replacing")
            _ = items.delete(staged)
            let proof = items.add(staged, contents, protection: protection)
            _ = items.delete(staged)
            guard proof == .success else { throw proof.sessionStoreError(operation: "SecItemAdd") }
            let deleted = items.delete(address)
            guard deleted == .success || deleted == .itemNotFound else {
                throw deleted.sessionStoreError(operation: "SecItemDelete")
            }
            let added = items.add(address, contents, protection: protection)
            guard added == .success else { throw added.sessionStoreError(operation: "SecItemAdd") }
            storedProtectionDiffers.withLock { $0 = false }
            coordination?.announceChange()
        }
    }

    /// Runs `body` inside exclusive access: at once if this thread holds it (the manager saves
    /// inside it), else taking it.
    private func insideOrTakingExclusiveAccess(
        _ body: () throws(SessionStoreError) -> Void
    ) throws(SessionStoreError) {
        let thread = ObjectIdentifier(Thread.current)
        if exclusiveHolder.withLock({ $0 == thread }) {
            return try body()
        }
        do {
            try withExclusiveAccess { try body() }
        } catch let error as SessionStoreError {
            throw error
        } catch {
            // `withExclusiveAccess` throws what `body` or the coordination lock throws: both are
            // SessionStoreError.
            throw .unavailable(reason: "exclusive access failed: \(error)")
        }
    }

    /// Deletes the item; no item is not an error. A delete needs no authentication, so it also
    /// removes an item that can no longer be read.
    ///
    /// - Throws: ``SessionStoreError``: `.unavailable` when the device is locked and "no item"
    ///   cannot be trusted (the item may still be there: try again once unlocked),
    ///   `.missingEntitlement` or `.keychain` when the Keychain refuses.
    public func remove() throws(SessionStoreError) {
        setAsidePending()
        let status = items.delete(address)
        switch status {
        case .success:
            coordination?.announceChange()
            return
        case .itemNotFound:
            try confirmProtectedDataAvailable(after: "SecItemDelete")
            // As for a load: the device may have been unlocked between the delete and the probe,
            // and the item it could not see then is still there. Deleted again, now that it can be.
            let again = items.delete(address)
            guard again == .success || again == .itemNotFound else {
                throw again.sessionStoreError(operation: "SecItemDelete")
            }
            if again == .success { coordination?.announceChange() }
        default:
            throw status.sessionStoreError(operation: "SecItemDelete")
        }
    }

    /// Runs `body` while no other caller of this method on this store instance runs its own, and,
    /// with a ``coordinationDirectory``, while no other process using that folder runs its own (an
    /// exclusive `flock` on a lock file there, held for the length of `body` only).
    ///
    /// Without a coordination folder it excludes neither another instance for the same item nor
    /// another process (an app extension sharing the item): see <doc:HonestLimits>.
    ///
    /// - Parameter body: The read-modify-write; it may call ``load()``, ``save(_:)``,
    ///   ``remove()``, ``loadLease()`` and ``saveLease(_:)``, not this method.
    /// - Returns: What `body` returns.
    /// - Throws: ``SessionStoreError`` if the coordination folder's lock cannot be taken, or what
    ///   `body` throws.
    public func withExclusiveAccess<Result>(_ body: () throws -> Result) throws -> Result {
        try exclusive.withLock { _ in
            guard let coordination else { return try insideExclusiveAccess(body) }
            return try coordination.withExclusiveAccess { try insideExclusiveAccess(body) }
        }
    }

    /// ``withExclusiveAccess(_:)`` if no other caller (or, with a coordination folder, no other
    /// process) holds it now; `nil` without waiting if one does.
    ///
    /// - Parameter body: The read-modify-write.
    /// - Returns: What `body` returns, or `nil`.
    /// - Throws: ``SessionStoreError`` if the coordination folder's lock fails, or what `body`
    ///   throws.
    public func withExclusiveAccessIfAvailable<Result>(_ body: () throws -> Result) throws -> Result? {
        let outcome = try exclusive.withLockIfAvailable { _ -> Result? in
            guard let coordination else { return try insideExclusiveAccess(body) }
            return try coordination.withExclusiveAccessIfAvailable { try insideExclusiveAccess(body) }
        }
        return outcome ?? nil
    }

    /// `body`, inside exclusive access: a corrupt item found meanwhile is set aside first.
    private func insideExclusiveAccess<Result>(_ body: () throws -> Result) throws -> Result {
        try holdingExclusiveAccess {
            if let pending = pendingSetAside.withLock({ $0.take() }) {
                _ = moveAside(pending)
            }
            return try body()
        }
    }

    /// The refresh lease recorded in the coordination folder; `nil` without one.
    ///
    /// - Returns: The lease, or `nil`.
    /// - Throws: ``SessionStoreError`` if the lease file is a link, not private, or unreadable.
    public func loadLease() throws(SessionStoreError) -> RefreshLease? {
        try coordination?.loadLease()
    }

    /// Records `lease` in the coordination folder, or removes it; does nothing without one.
    ///
    /// - Parameter lease: The lease, or `nil`.
    /// - Throws: ``SessionStoreError``.
    public func saveLease(_ lease: RefreshLease?) throws(SessionStoreError) {
        try coordination?.saveLease(lease)
    }

    /// The notices of this item's changes by the processes sharing the coordination folder; `nil`
    /// without one.
    public var changeNotifier: (any SessionChangeNotifier)? { coordination?.notifier }

    /// Runs `body`, known to this store as the thread inside exclusive access.
    private func holdingExclusiveAccess<Result>(_ body: () throws -> Result) rethrows -> Result {
        let thread = ObjectIdentifier(Thread.current)
        exclusiveHolder.withLock { $0 = thread }
        defer { exclusiveHolder.withLock { $0 = nil } }
        return try body()
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

    /// The probe's protection: readable only while the device is unlocked. When it can be added,
    /// every class is readable, whatever the class of the item that was looked for (an earlier
    /// version of the app, or an extension, may have written it with another than this store's).
    static let probeProtection = KeychainItemProtection(accessibility: .whenUnlockedThisDeviceOnly, accessControl: nil)

    /// Returns if "not found" from `operation` can be trusted; throws otherwise.
    ///
    /// Before the first unlock, or while locked, a read can answer "not found" for an item that
    /// exists, but an add of an item that needs the device unlocked answers
    /// `errSecInteractionNotAllowed`: the add is the probe (deleted at once). FirebaseAuth found
    /// the same answer to the same reports. A probe already there (left by a process killed
    /// between its add and its delete) proves nothing, since a keychain may find the duplicate
    /// before it needs the class key: it is deleted and the probe made once more.
    private func confirmProtectedDataAvailable(after operation: String) throws(SessionStoreError) {
        let probe = address.withAccount(probeAccount)
        let addProbe = {
            self.items.add(probe, KeychainItemContents(data: Data([0]), stamp: nil), protection: Self.probeProtection)
        }
        var status = addProbe()
        if status == .duplicateItem {
            _ = items.delete(probe)
            status = addProbe()
        }
        switch status {
        case .success:
            _ = items.delete(probe)
        case .interactionNotAllowed, .duplicateItem:
            throw .unavailable(
                reason: "\(operation) found no item, but the device is locked or not yet unlocked since it started, "
                    + "so an item may exist that cannot be seen yet (\(status))"
            )
        default:
            throw status.sessionStoreError(operation: "SecItemAdd (confirming that \(operation) can see the item)")
        }
    }

    /// Sets the corrupt item that was read aside, if it is still the one there; returns where its
    /// bytes went.
    ///
    /// Inside exclusive access. A load made outside it takes the access only if it is free now:
    /// waiting could deadlock a caller that holds a lock the access's holder needs (the manager
    /// signing out, under its write lock, while its refresh's commit holds the access and waits for
    /// that lock). A busy access leaves the item in place and
    /// remembers it: the next exclusive access moves it aside, and a save or a removal before that
    /// copies it aside first.
    private func setAside(_ corrupt: KeychainItemContents) -> String? {
        let thread = ObjectIdentifier(Thread.current)
        if exclusiveHolder.withLock({ $0 == thread }) {
            return moveAside(corrupt)
        }
        guard let moved = exclusive.withLockIfAvailable({ _ in holdingExclusiveAccess { moveAside(corrupt) } }) else {
            pendingSetAside.withLock { $0 = corrupt }
            return nil
        }
        return moved
    }

    /// Before a save or a removal replaces it: copies aside the corrupt item a load could not set
    /// aside, if it is still there. A copy needs no exclusive access, since the item itself is
    /// left to the save or the removal.
    private func setAsidePending() {
        guard let pending = pendingSetAside.withLock({ $0.take() }),
            case .success(let current) = items.read(address), current.contents == pending
        else { return }
        _ = copyAside(pending)
    }

    /// Copies `corrupt` to an account its bytes decide (`<account>.corrupt-copy-<hash>`), so that
    /// the same bytes are copied once; returns the account, or `nil` if the copy failed.
    private func copyAside(_ corrupt: KeychainItemContents) -> String? {
        let aside = "\(account).corrupt-copy-\(Self.fingerprint(corrupt.data))"
        let copied = items.add(address.withAccount(aside), corrupt, protection: protection)
        return copied == .success || copied == .duplicateItem ? aside : nil
    }

    /// Moves the corrupt item to another account by its stamp, so that a good item saved
    /// meanwhile stays; an item without a stamp (an earlier version wrote it) is copied instead,
    /// under a name its bytes decide (so it is copied once), and stays until a save replaces it.
    private func moveAside(_ corrupt: KeychainItemContents) -> String? {
        // A good item saved meanwhile by another caller stays where it is.
        guard case .success(let current) = items.read(address), current.contents == corrupt else { return nil }
        let aside: String
        if let stamp = corrupt.stamp {
            let date = Int(Date().timeIntervalSince1970)
            aside = "\(account).corrupt-\(date)-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
            guard items.move(address, stamp: stamp, toAccount: aside) == .success else { return nil }
        } else {
            guard let copied = copyAside(corrupt) else { return nil }
            aside = copied
        }
        return "the Keychain item of service \"\(service)\", account \"\(aside)\""
    }

    /// A name for `data` that stays the same across processes and launches: its 64-bit FNV-1a
    /// hash, in hexadecimal.
    static func fingerprint(_ data: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    /// A new random stamp for a save.
    private static func newStamp() -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<16).map { _ in UInt8.random(in: 0...UInt8.max, using: &generator) })
    }
}
