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

    /// `SecItemCopyMatching` of the item at `address`: its data and its stamp.
    func read(_ address: KeychainItemAddress) -> Result<KeychainItemContents, KeychainStatus>

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

/// How an item is protected: when its data can be read, and whether reading it needs the user.
struct KeychainItemProtection: Hashable, Sendable {

    /// `kSecAttrAccessible`, or the protection of the access control.
    var accessibility: KeychainSessionStore.Accessibility

    /// `kSecAttrAccessControl`'s flags, if any.
    var accessControl: KeychainSessionStore.AccessControl?
}
