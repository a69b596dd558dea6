import Foundation

/// A key of a Keychain call's dictionary; the Apple-only code spells each as its `kSec…` constant.
enum KeychainKey: Hashable, Sendable, CaseIterable {
    /// `kSecClass`.
    case itemClass
    /// `kSecAttrService`.
    case service
    /// `kSecAttrAccount`.
    case account
    /// `kSecAttrAccessGroup`.
    case accessGroup
    /// `kSecAttrGeneric`: the item's stamp.
    case generic
    /// `kSecValueData`.
    case valueData
    /// `kSecAttrAccessible`.
    case accessible
    /// `kSecAttrAccessControl`.
    case accessControl
    /// `kSecUseDataProtectionKeychain`.
    case useDataProtectionKeychain
    /// `kSecUseAuthenticationContext`.
    case useAuthenticationContext
    /// `kSecReturnData`.
    case returnData
    /// `kSecReturnAttributes`.
    case returnAttributes
    /// `kSecMatchLimit`.
    case matchLimit
}

/// A value of a Keychain call's dictionary; the Apple-only code turns each into its object.
enum KeychainValue: Hashable, Sendable {
    /// `kSecClassGenericPassword`.
    case genericPassword
    /// A string.
    case string(String)
    /// Bytes (`CFData`).
    case data(Data)
    /// A Boolean (`CFBoolean`).
    case bool(Bool)
    /// The `kSecAttrAccessible…` constant of an accessibility.
    case accessibility(KeychainSessionStore.Accessibility)
    /// A `SecAccessControl` made from an access control and the accessibility it protects with.
    case accessControl(KeychainSessionStore.AccessControl, KeychainSessionStore.Accessibility)
    /// The store's `LAContext`, which may not prompt.
    case authenticationContext
    /// `kSecMatchLimitOne`.
    case matchLimitOne
}

/// One Keychain call's dictionary.
typealias KeychainDictionary = [KeychainKey: KeychainValue]

/// What goes into each Keychain call's dictionaries: decided here, portably, and tested; the
/// Apple-only ``SecurityKeychainItems`` only translates each key and value and makes the call.
///
/// - Every call names the item (class, service, account, access group) and the keychain
///   (`kSecUseDataProtectionKeychain`), and, for a store with an access control, carries the
///   store's context, which may not prompt: an item that needs an authentication then answers
///   `errSecInteractionNotAllowed` instead of blocking the calling thread on a prompt.
/// - A read asks for the data and the attributes (the stamp), one item.
/// - An add and an update write the data, the stamp if there is one, and the protection; a move
///   matches the stamp that was read and writes only the new account.
/// - The protection: `kSecAttrAccessControl` when there is an access control, else
///   `kSecAttrAccessible`. The file-based macOS keychain has neither (the accessibility does not
///   apply there), and refuses an access control: those writes fail with `errSecParam`.
struct KeychainCalls: Hashable, Sendable {

    /// `kSecUseDataProtectionKeychain` on every call.
    var usesDataProtectionKeychain: Bool

    /// Whether the calls use the data-protection keychain, as a store asked on a platform: only
    /// macOS has another one; elsewhere (iOS, Mac Catalyst, visionOS) every item is in the
    /// data-protection keychain, whatever was asked, so the accessibility and an access control
    /// are always written.
    static func usesDataProtectionKeychain(requested: Bool, isMacOS: Bool) -> Bool {
        requested || !isMacOS
    }

    /// Whether every call carries the store's authentication context.
    var carriesAuthenticationContext: Bool

    /// The dictionary that names the item at `address`, and `stamp` if given.
    func query(for address: KeychainItemAddress, stamp: Data? = nil) -> KeychainDictionary {
        var query: KeychainDictionary = [
            .itemClass: .genericPassword,
            .service: .string(address.service),
            .account: .string(address.account),
            .useDataProtectionKeychain: .bool(usesDataProtectionKeychain),
        ]
        if let accessGroup = address.accessGroup {
            query[.accessGroup] = .string(accessGroup)
        }
        if let stamp {
            query[.generic] = .data(stamp)
        }
        if carriesAuthenticationContext {
            query[.useAuthenticationContext] = .authenticationContext
        }
        return query
    }

    /// `SecItemCopyMatching`'s query: the item's data and attributes.
    func read(_ address: KeychainItemAddress) -> KeychainDictionary {
        query(for: address).merging([
            .returnData: .bool(true),
            .returnAttributes: .bool(true),
            .matchLimit: .matchLimitOne,
        ]) { $1 }
    }

    /// `SecItemAdd`'s attributes, or `errSecParam` for a protection this keychain refuses.
    func add(
        _ address: KeychainItemAddress,
        _ contents: KeychainItemContents,
        protection: KeychainItemProtection
    ) -> Result<KeychainDictionary, KeychainStatus> {
        changes(contents, protection: protection).map { query(for: address).merging($0) { $1 } }
    }

    /// `SecItemUpdate`'s attributes to update, or `errSecParam` for a protection this keychain
    /// refuses.
    func update(
        to contents: KeychainItemContents,
        protection: KeychainItemProtection
    ) -> Result<KeychainDictionary, KeychainStatus> {
        changes(contents, protection: protection)
    }

    /// `SecItemUpdate`'s query and attributes that move the item with `stamp` to `account`.
    func move(
        _ address: KeychainItemAddress,
        stamp: Data,
        toAccount account: String
    ) -> (query: KeychainDictionary, changes: KeychainDictionary) {
        (query(for: address, stamp: stamp), [.account: .string(account)])
    }

    private func changes(
        _ contents: KeychainItemContents,
        protection: KeychainItemProtection
    ) -> Result<KeychainDictionary, KeychainStatus> {
        var changes: KeychainDictionary = [.valueData: .data(contents.data)]
        if let stamp = contents.stamp {
            changes[.generic] = .data(stamp)
        }
        switch (usesDataProtectionKeychain, protection.accessControl) {
        case (true, let accessControl?):
            changes[.accessControl] = .accessControl(accessControl, protection.accessibility)
        case (true, nil):
            changes[.accessible] = .accessibility(protection.accessibility)
        case (false, .some):
            return .failure(KeychainStatus(-50))
        case (false, nil):
            break
        }
        return .success(changes)
    }
}
