import AuthSessionInterface
import Foundation

/// The Keychain calls ``KeychainSessionStore`` makes, one per `SecItem` function, on
/// generic-password items.
///
/// The store's logic (when "not found" can be trusted, add-then-update, setting a corrupt item
/// aside) runs against this seam: `SecItem` calls on Apple platforms, a fake keychain in the
/// tests, on every platform. Each call returns the `OSStatus` it got, as a ``KeychainStatus``.
///
/// Conformers must be thread-safe.
protocol KeychainItems: Sendable {

    /// `SecItemCopyMatching` of the item at `address`: its data and its stamp, and what the
    /// keychain says of its protection.
    func read(_ address: KeychainItemAddress) -> Result<KeychainItemRead, KeychainStatus>

    /// `SecItemAdd` of a new item at `address` holding `contents`, protected by `protection`.
    func add(
        _ address: KeychainItemAddress,
        _ contents: KeychainItemContents,
        protection: KeychainItemProtection
    ) -> KeychainStatus

    /// `SecItemUpdate` of the item at `address`: its contents and protection replaced.
    func update(
        _ address: KeychainItemAddress,
        to contents: KeychainItemContents,
        protection: KeychainItemProtection
    ) -> KeychainStatus

    /// `SecItemUpdate` of the item at `address` whose stamp is `stamp`, moving it to `account`:
    /// its data is kept, under another name; a save since the stamp was read leaves no match.
    func move(_ address: KeychainItemAddress, stamp: Data, toAccount account: String) -> KeychainStatus

    /// `SecItemDelete` of the item at `address`.
    func delete(_ address: KeychainItemAddress) -> KeychainStatus

    /// Asks the user to authenticate for `protection`'s access control (one system prompt);
    /// afterwards the calls read an item protected so without asking, until
    /// ``forgetAuthentication()``. Without an access control, returns at once.
    func authenticate(reason: String, protection: KeychainItemProtection) async throws(BiometricAuthenticationError)

    /// Forgets the authentication: an access-controlled item is unreadable again.
    func forgetAuthentication()
}

/// Where a generic-password item is: its service, its account and its access group.
struct KeychainItemAddress: Hashable, Sendable {

    /// `kSecAttrService`.
    var service: String

    /// `kSecAttrAccount`.
    var account: String

    /// `kSecAttrAccessGroup`, or `nil` for the app's default group.
    var accessGroup: String?

    /// The same item's address under another account.
    func withAccount(_ account: String) -> Self {
        var address = self
        address.account = account
        return address
    }
}

/// What an item holds: its data (`kSecValueData`) and a stamp (`kSecAttrGeneric`) that each save
/// makes anew, so that a later call can act only on the very item that was read.
struct KeychainItemContents: Hashable, Sendable {

    /// The item's data.
    var data: Data

    /// The stamp of the save that wrote it; `nil` for an item written without one.
    var stamp: Data?
}

/// What a read found: the item's contents, and what the keychain said of its protection.
struct KeychainItemRead: Hashable, Sendable {

    /// The item's data and stamp.
    var contents: KeychainItemContents

    /// The item's protection as the keychain reported it; `nil` where it reports none (the
    /// file-based macOS keychain, which has no accessibility).
    var protection: KeychainProtectionReport?
}

/// What a read tells of an item's protection, as far as the keychain tells it: its accessibility
/// (`kSecAttrAccessible`), and whether it has an access control. Either may be unknown.
struct KeychainProtectionReport: Hashable, Sendable {

    /// An accessibility a keychain named.
    enum ReportedAccessibility: Hashable, Sendable {
        /// One the store knows.
        case known(KeychainSessionStore.Accessibility)
        /// One the store does not write (`kSecAttrAccessibleAlways`, say, from an old version).
        case other
    }

    /// The item's accessibility, or `nil` if the keychain named none.
    var accessibility: ReportedAccessibility?

    /// Whether the item has an access control with flags, or `nil` if that cannot be told: the
    /// `SecItem` functions read a `SecAccessControl` back, but no public API reads its flags, and
    /// Apple does not say whether an item written with `kSecAttrAccessible` alone reports one.
    var hasAccessControl: Bool?

    /// The report of an item protected with `protection`, all of it known.
    init(_ protection: KeychainItemProtection) {
        accessibility = .known(protection.accessibility)
        hasAccessControl = protection.accessControl != nil
    }

    /// A report of what a keychain said.
    init(accessibility: ReportedAccessibility?, hasAccessControl: Bool?) {
        self.accessibility = accessibility
        self.hasAccessControl = hasAccessControl
    }

    /// Whether the item is known to be protected otherwise than `protection`: another
    /// accessibility, or an access control where there should be none (or none where there should
    /// be one). What is unknown does not differ, and two access controls with other flags cannot
    /// be told apart.
    func differs(from protection: KeychainItemProtection) -> Bool {
        if let hasAccessControl, hasAccessControl != (protection.accessControl != nil) { return true }
        switch accessibility {
        case .known(let accessibility): return accessibility != protection.accessibility
        case .other: return true
        case nil: return false
        }
    }
}

/// How an item is protected: when its data can be read, and whether reading it needs the user.
struct KeychainItemProtection: Hashable, Sendable {

    /// `kSecAttrAccessible`, or the protection of the access control.
    var accessibility: KeychainSessionStore.Accessibility

    /// `kSecAttrAccessControl`'s flags, if any.
    var accessControl: KeychainSessionStore.AccessControl?
}
