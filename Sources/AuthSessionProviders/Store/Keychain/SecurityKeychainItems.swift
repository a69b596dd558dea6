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
    ///     entitlement the former needs). The login keychain ignores the accessibility and the
    ///     access group, refuses an access control (saves fail with `errSecParam`), and may show a
    ///     dialog of its own, blocking the reading thread, when it is locked or does not trust the
    ///     tool (an unsigned tool is a new one after each build). Other platforms, Mac Catalyst
    ///     included, have only the data-protection keychain and ignore it.
    ///   - coordinationDirectory: A folder every process sharing the item can write, such as a
    ///     folder in the app group's container: the processes coordinate there (a lock held for
    ///     microseconds, the refresh lease, change notices). `nil` coordinates within this process
    ///     only; see the type's overview.
    ///   - changeNotificationName: The Darwin notification name the processes post and hear; `nil`
    ///     derives one from the folder, which starts with the app group's identifier for a folder
    ///     in a macOS app group container, as a sandboxed app's must. Elsewhere in a sandboxed
    ///     macOS app, start it with the app group's identifier.
    public convenience init(
        service: String,
        account: String = "session",
        accessGroup: String? = nil,
        accessibility: Accessibility = .afterFirstUnlockThisDeviceOnly,
        accessControl: AccessControl? = nil,
        usesDataProtectionKeychain: Bool = true,
        coordinationDirectory: URL? = nil,
        changeNotificationName: String? = nil
    ) {
        self.init(
            service: service,
            account: account,
            accessGroup: accessGroup,
            accessibility: accessibility,
            accessControl: accessControl,
            coordinationDirectory: coordinationDirectory,
            changeNotificationName: changeNotificationName,
            items: SecurityKeychainItems(usesDataProtectionKeychain: usesDataProtectionKeychain)
        )
    }
}

/// ``KeychainItems`` through the `SecItem` functions. What goes into each dictionary is decided by
/// the portable, tested ``KeychainCalls``; this type translates each key and value to Apple's,
/// makes the call, and passes back the status.
///
/// All operations are thread-safe.
final class SecurityKeychainItems: KeychainItems {

    /// What goes into each call's dictionaries.
    let calls: KeychainCalls

    #if canImport(LocalAuthentication) && !os(tvOS)
    /// The context the calls carry: it never shows a prompt, and once authenticated it opens an
    /// access-controlled item.
    private let authentication: ConcurrencySafeContainer<KeychainAuthenticationContext>
    #endif

    init(usesDataProtectionKeychain requested: Bool) {
        // macOS, not Mac Catalyst: AppKit exists on macOS alone (Catalyst excluded whatever it sees).
        #if canImport(AppKit) && !targetEnvironment(macCatalyst)
        let isMacOS = true
        #else
        let isMacOS = false
        #endif
        #if canImport(LocalAuthentication) && !os(tvOS)
        // Every call carries a context that may not prompt, with an access control or without:
        // an item another configuration protected so answers "interaction not allowed" instead
        // of blocking the reading thread on a prompt.
        authentication = ConcurrencySafeContainer(KeychainAuthenticationContext(LAContext()))
        let carriesContext = true
        #else
        let carriesContext = false
        #endif
        calls = KeychainCalls(
            usesDataProtectionKeychain: KeychainCalls.usesDataProtectionKeychain(
                requested: requested,
                isMacOS: isMacOS
            ),
            carriesAuthenticationContext: carriesContext
        )
    }

    func read(_ address: KeychainItemAddress) -> Result<KeychainItemRead, KeychainStatus> {
        guard let query = translate(calls.read(address)) else { return .failure(KeychainStatus(errSecParam)) }
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        guard status == errSecSuccess else { return .failure(KeychainStatus(status)) }
        let attributes = result as? [String: Any]
        // An item without data reads as no bytes, which the store finds corrupt.
        let data = attributes?[kSecValueData as String] as? Data ?? Data()
        let contents = KeychainItemContents(data: data, stamp: attributes?[kSecAttrGeneric as String] as? Data)
        // The login keychain has no accessibility to report.
        let protection = calls.usesDataProtectionKeychain ? Self.protectionReport(attributes) : nil
        return .success(KeychainItemRead(contents: contents, protection: protection))
    }

    /// The accessibility a read's attributes name (`kSecAttrAccessible`); whether the item has an
    /// access control stays unknown (see ``KeychainProtectionReport/hasAccessControl``).
    private static func protectionReport(_ attributes: [String: Any]?) -> KeychainProtectionReport? {
        guard let named = attributes?[kSecAttrAccessible as String] as? String else { return nil }
        let known = KeychainSessionStore.Accessibility.allCases.first { named == accessible($0) as String }
        return KeychainProtectionReport(accessibility: known.map { .known($0) } ?? .other, hasAccessControl: nil)
    }

    func add(
        _ address: KeychainItemAddress,
        _ contents: KeychainItemContents,
        protection: KeychainItemProtection
    ) -> KeychainStatus {
        guard case .success(let dictionary) = calls.add(address, contents, protection: protection),
            let attributes = translate(dictionary)
        else { return KeychainStatus(errSecParam) }
        return KeychainStatus(SecItemAdd(attributes as CFDictionary, nil))
    }

    func update(
        _ address: KeychainItemAddress,
        to contents: KeychainItemContents,
        protection: KeychainItemProtection
    ) -> KeychainStatus {
        guard case .success(let dictionary) = calls.update(to: contents, protection: protection),
            let changes = translate(dictionary), let query = translate(calls.query(for: address))
        else { return KeychainStatus(errSecParam) }
        return KeychainStatus(SecItemUpdate(query as CFDictionary, changes as CFDictionary))
    }

    func move(_ address: KeychainItemAddress, stamp: Data, toAccount account: String) -> KeychainStatus {
        let move = calls.move(address, stamp: stamp, toAccount: account)
        guard let query = translate(move.query), let changes = translate(move.changes) else {
            return KeychainStatus(errSecParam)
        }
        return KeychainStatus(SecItemUpdate(query as CFDictionary, changes as CFDictionary))
    }

    func delete(_ address: KeychainItemAddress) -> KeychainStatus {
        guard let query = translate(calls.query(for: address)) else { return KeychainStatus(errSecParam) }
        return KeychainStatus(SecItemDelete(query as CFDictionary))
    }

    func authenticate(reason: String, protection: KeychainItemProtection) async throws(BiometricAuthenticationError) {
        #if canImport(LocalAuthentication) && !os(tvOS)
        guard let accessControl = protection.accessControl else { return }
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
        authentication.withLock { $0 = fresh }
        #endif
    }

    // MARK: - Translation

    /// `dictionary` with Apple's keys and objects, or `nil` if an object cannot be made (an access
    /// control the system refuses, a context where LocalAuthentication is missing).
    private func translate(_ dictionary: KeychainDictionary) -> [String: Any]? {
        var translated: [String: Any] = [:]
        for (key, value) in dictionary {
            guard let object = object(for: value) else { return nil }
            translated[Self.name(of: key) as String] = object
        }
        return translated
    }

    private static func name(of key: KeychainKey) -> CFString {
        switch key {
        case .itemClass: kSecClass
        case .service: kSecAttrService
        case .account: kSecAttrAccount
        case .accessGroup: kSecAttrAccessGroup
        case .generic: kSecAttrGeneric
        case .valueData: kSecValueData
        case .accessible: kSecAttrAccessible
        case .accessControl: kSecAttrAccessControl
        case .useDataProtectionKeychain: kSecUseDataProtectionKeychain
        case .useAuthenticationContext: kSecUseAuthenticationContext
        case .returnData: kSecReturnData
        case .returnAttributes: kSecReturnAttributes
        case .matchLimit: kSecMatchLimit
        }
    }

    private func object(for value: KeychainValue) -> Any? {
        switch value {
        case .genericPassword: kSecClassGenericPassword
        case .string(let string): string
        case .data(let data): data
        case .bool(let bool): bool
        case .accessibility(let accessibility): Self.accessible(accessibility)
        case .accessControl(let accessControl, let accessibility):
            Self.accessControl(accessControl, accessibility: accessibility)
        case .authenticationContext: authenticationContext
        case .matchLimitOne: kSecMatchLimitOne
        }
    }

    /// The context the calls carry, if this store has one.
    private var authenticationContext: Any? {
        #if canImport(LocalAuthentication) && !os(tvOS)
        authentication.withLock { $0.context }
        #else
        nil
        #endif
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
