#if canImport(Security)
import AuthSession
import AuthSessionInterface
import Foundation
import Security

#if canImport(LocalAuthentication) && !os(tvOS)
import LocalAuthentication
#endif

extension KeychainSessionStore {

    /// Creates a store for the generic-password item (`service`, `account`), in `accessGroup` if
    /// given.
    ///
    /// - Parameters:
    ///   - service: The item's service, usually the app's bundle identifier.
    ///   - account: The item's account; `"session"` by default.
    ///   - accessGroup: A Keychain access group shared with the app's extensions, spelled in full
    ///     (`"ABCDE12345.com.example.shared"`: the team identifier, then the group), and listed in
    ///     the `keychain-access-groups` entitlement of every target that shares it.
    ///   - accessibility: When the item can be read; ``Accessibility/afterFirstUnlockThisDeviceOnly``
    ///     by default.
    ///   - accessControl: An authentication the Keychain itself requires before reading the item;
    ///     none by default. Read ``AccessControl`` first.
    ///   - usesDataProtectionKeychain: On macOS, whether the item lives in the data-protection
    ///     keychain (`true`, the default: the accessibility and the access group apply, as on iOS)
    ///     or in the file-based login keychain (`false`: for a command-line tool that lacks the
    ///     entitlement the former needs; the accessibility and the access group are then ignored,
    ///     and an access control is refused). Other platforms ignore it.
    public convenience init(
        service: String,
        account: String = "session",
        accessGroup: String? = nil,
        accessibility: Accessibility = .afterFirstUnlockThisDeviceOnly,
        accessControl: AccessControl? = nil,
        usesDataProtectionKeychain: Bool = true
    ) {
        self.init(
            service: service,
            account: account,
            accessGroup: accessGroup,
            accessibility: accessibility,
            accessControl: accessControl,
            items: SecurityKeychainItems(
                usesDataProtectionKeychain: usesDataProtectionKeychain,
                carriesAuthenticationContext: accessControl != nil
            )
        )
    }
}

/// ``KeychainItems`` through the `SecItem` functions. Every decision is the store's; this type
/// only builds the dictionaries and passes back the status.
///
/// All operations are thread-safe.
final class SecurityKeychainItems: KeychainItems {

    /// `kSecUseDataProtectionKeychain` on every call.
    let usesDataProtectionKeychain: Bool

    #if canImport(LocalAuthentication) && !os(tvOS)
    /// The context every call carries (`kSecUseAuthenticationContext`) when the store has an
    /// access control: it never shows a prompt, and once authenticated it opens the item.
    private let authentication: ConcurrencySafeContainer<KeychainAuthenticationContext>?
    #endif

    init(usesDataProtectionKeychain: Bool, carriesAuthenticationContext: Bool) {
        self.usesDataProtectionKeychain = usesDataProtectionKeychain
        #if canImport(LocalAuthentication) && !os(tvOS)
        authentication =
            carriesAuthenticationContext ? ConcurrencySafeContainer(KeychainAuthenticationContext(LAContext())) : nil
        #endif
    }

    func read(_ address: KeychainItemAddress) -> Result<KeychainItemContents, KeychainStatus> {
        var query = query(for: address)
        query[kSecReturnData as String] = true
        query[kSecReturnAttributes as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        guard status == errSecSuccess else { return .failure(KeychainStatus(status)) }
        let attributes = result as? [String: Any]
        // An item without data reads as empty bytes, which the store finds corrupt.
        let data = attributes?[kSecValueData as String] as? Data ?? Data()
        return .success(KeychainItemContents(data: data, stamp: attributes?[kSecAttrGeneric as String] as? Data))
    }

    func add(
        _ address: KeychainItemAddress,
        _ contents: KeychainItemContents,
        protection: KeychainItemProtection
    ) -> KeychainStatus {
        guard case .success(let protectionAttributes) = attributes(for: protection) else {
            return KeychainStatus(errSecParam)
        }
        var item = query(for: address).merging(protectionAttributes) { $1 }
        item[kSecValueData as String] = contents.data
        item[kSecAttrGeneric as String] = contents.stamp
        return KeychainStatus(SecItemAdd(item as CFDictionary, nil))
    }

    func update(
        _ address: KeychainItemAddress,
        to contents: KeychainItemContents,
        protection: KeychainItemProtection
    ) -> KeychainStatus {
        guard case .success(var changes) = attributes(for: protection) else { return KeychainStatus(errSecParam) }
        changes[kSecValueData as String] = contents.data
        changes[kSecAttrGeneric as String] = contents.stamp
        return KeychainStatus(SecItemUpdate(query(for: address) as CFDictionary, changes as CFDictionary))
    }

    func move(_ address: KeychainItemAddress, stamp: Data?, toAccount account: String) -> KeychainStatus {
        var query = query(for: address)
        if let stamp {
            // Only the very item that was read: a save since then wrote another stamp.
            query[kSecAttrGeneric as String] = stamp
        }
        let changes: [String: Any] = [kSecAttrAccount as String: account]
        return KeychainStatus(SecItemUpdate(query as CFDictionary, changes as CFDictionary))
    }

    func delete(_ address: KeychainItemAddress) -> KeychainStatus {
        KeychainStatus(SecItemDelete(query(for: address) as CFDictionary))
    }

    func authenticate(reason: String, protection: KeychainItemProtection) async throws(BiometricAuthenticationError) {
        #if canImport(LocalAuthentication) && !os(tvOS)
        guard let authentication, let accessControl = protection.accessControl else { return }
        guard let access = Self.accessControl(accessControl, accessibility: protection.accessibility) else {
            throw .other
        }
        let context = LAContext()
        let outcome: Result<Void, BiometricAuthenticationError> = await withCheckedContinuation { continuation in
            context.evaluateAccessControl(access, operation: .useItem, localizedReason: reason) { success, error in
                continuation.resume(
                    returning: success
                        ? .success(()) : .failure(BiometricAuthenticationError(localAuthenticationError: error))
                )
            }
        }
        try outcome.get()
        let authenticated = KeychainAuthenticationContext(context)
        authentication.withLock { $0 = authenticated }
        #else
        if protection.accessControl != nil { throw .biometryNotAvailable }
        #endif
    }

    func forgetAuthentication() {
        #if canImport(LocalAuthentication) && !os(tvOS)
        let fresh = KeychainAuthenticationContext(LAContext())
        authentication?.withLock { $0 = fresh }
        #endif
    }

    // MARK: - Dictionaries

    /// The attributes that name the item, and the keychain and context every call uses.
    private func query(for address: KeychainItemAddress) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: address.service,
            kSecAttrAccount as String: address.account,
            kSecUseDataProtectionKeychain as String: usesDataProtectionKeychain,
        ]
        if let accessGroup = address.accessGroup {
            query[kSecAttrAccessGroup as String] = accessGroup
        }
        #if canImport(LocalAuthentication) && !os(tvOS)
        if let authentication {
            query[kSecUseAuthenticationContext as String] = authentication.withLock { $0.context }
        }
        #endif
        return query
    }

    /// `kSecAttrAccessible`, or `kSecAttrAccessControl` with the same protection.
    private func attributes(for protection: KeychainItemProtection) -> Result<[String: Any], KeychainStatus> {
        guard let accessControl = protection.accessControl else {
            return .success([kSecAttrAccessible as String: Self.accessible(protection.accessibility)])
        }
        guard let access = Self.accessControl(accessControl, accessibility: protection.accessibility) else {
            return .failure(KeychainStatus(errSecParam))
        }
        return .success([kSecAttrAccessControl as String: access])
    }

    private static func accessControl(
        _ accessControl: KeychainSessionStore.AccessControl,
        accessibility: KeychainSessionStore.Accessibility
    ) -> SecAccessControl? {
        let flags: SecAccessControlCreateFlags =
            switch accessControl {
            case .userPresence: .userPresence
            case .biometryCurrentSet: .biometryCurrentSet
            }
        return SecAccessControlCreateWithFlags(nil, accessible(accessibility), flags, nil)
    }

    private static func accessible(_ accessibility: KeychainSessionStore.Accessibility) -> CFString {
        switch accessibility {
        case .afterFirstUnlockThisDeviceOnly: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        case .afterFirstUnlock: kSecAttrAccessibleAfterFirstUnlock
        case .whenUnlockedThisDeviceOnly: kSecAttrAccessibleWhenUnlockedThisDeviceOnly
        case .whenUnlocked: kSecAttrAccessibleWhenUnlocked
        case .whenPasscodeSetThisDeviceOnly: kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly
        }
    }
}

#if canImport(LocalAuthentication) && !os(tvOS)
/// The `LAContext` the Keychain calls carry: it may not prompt, and it opens the item once
/// authenticated.
// @unchecked: the context is configured in `init` (or fully evaluated) before it is published
// through a lock, and never changed afterwards; the Keychain calls only read it.
private final class KeychainAuthenticationContext: @unchecked Sendable {

    let context: LAContext

    init(_ context: LAContext) {
        context.interactionNotAllowed = true
        self.context = context
    }
}
#endif
#endif
