import AuthSession
import AuthSessionInterface
import Foundation

@testable import AuthSessionProviders

/// A keychain in memory that answers the `SecItem` calls as Apple documents them (and as apps
/// report them on devices), written from those rules rather than from the store's code:
///
/// - An item is unique by service, account and access group; its stamp (`kSecAttrGeneric`) is an
///   attribute a query may match on, not part of that key.
/// - Data protection: an `afterFirstUnlock` item is readable from the first unlock on, a
///   `whenUnlocked` or `whenPasscodeSet` one only while unlocked. While an item is not readable, a
///   read, an update and a delete of it answer ``unreadableAnswer``: `errSecItemNotFound` by
///   default, what prewarmed launches before the first unlock report, or
///   `errSecInteractionNotAllowed`; an add (or an update to a protection) that would need the
///   class key answers `errSecInteractionNotAllowed`, after a duplicate if
///   ``checksUniquenessFirst``.
/// - An access-controlled item needs an authentication; without one a read answers
///   `errSecInteractionNotAllowed` (the store's context may not prompt).
/// - Without the entitlement, reads answer `errSecItemNotFound` and every write
///   `errSecMissingEntitlement`, as an unsigned macOS tool sees it.
///
/// All operations are thread-safe: every call is atomic, as in `securityd`.
final class FakeKeychain: KeychainItems {

    /// What the device is doing.
    enum DeviceState: Sendable {
        /// Started, and not unlocked since: nothing is readable (a prewarmed launch).
        case beforeFirstUnlock
        /// Unlocked once since it started, locked now.
        case locked
        /// Unlocked.
        case unlocked
    }

    /// What an update that changes an item's protection does. Apple documents which attributes
    /// `SecItemUpdate` may change, not that it re-protects an item with another class or access
    /// control; apps report both of the refusals below.
    enum ProtectionUpdate: Sendable {
        /// The item gets the new protection.
        case applies
        /// The update answers `errSecParam` and changes nothing.
        case refusedWithParam
        /// The update writes the data and keeps the old protection.
        case ignored
    }

    /// One call, as the keychain saw it.
    enum Operation: String, Sendable {
        case read, add, update, move, delete
    }

    struct Item: Hashable, Sendable {
        var contents: KeychainItemContents
        var protection: KeychainItemProtection
    }

    private struct State {
        var items: [KeychainItemAddress: Item] = [:]
        var deviceState: DeviceState = .unlocked
        var unreadableAnswer: KeychainStatus = .itemNotFound
        var hasEntitlement = true
        var checksUniquenessFirst = false
        var protectionUpdate: ProtectionUpdate = .applies
        var isAuthenticated = false
        var authenticationOutcome: Result<Void, BiometricAuthenticationError> = .success(())
        var authenticationCount = 0
        var faults: [Operation: [KeychainStatus]] = [:]
        var calls: [(Operation, String)] = []
    }

    private let state = ConcurrencySafeContainer(State())

    /// Called before each call is answered, outside the keychain's lock: a test runs another
    /// caller's work there, or waits at a rendezvous.
    let beforeCall = ConcurrencySafeContainer<(@Sendable (Operation, KeychainItemAddress) -> Void)?>(nil)

    /// Called after each call is answered, outside the keychain's lock.
    let afterCall = ConcurrencySafeContainer<(@Sendable (Operation, KeychainItemAddress) -> Void)?>(nil)

    init(deviceState: DeviceState = .unlocked) {
        state.withLock { $0.deviceState = deviceState }
    }

    // MARK: - Test controls

    var deviceState: DeviceState {
        get { state.withLock { $0.deviceState } }
        set { state.withLock { $0.deviceState = newValue } }
    }

    /// What a read or a delete of an item that cannot be read now answers.
    var unreadableAnswer: KeychainStatus {
        get { state.withLock { $0.unreadableAnswer } }
        set { state.withLock { $0.unreadableAnswer = newValue } }
    }

    /// Whether the process has the data-protection keychain's entitlement.
    var hasEntitlement: Bool {
        get { state.withLock { $0.hasEntitlement } }
        set { state.withLock { $0.hasEntitlement = newValue } }
    }

    /// Whether an add finds a duplicate before it needs the class key (Apple does not say which
    /// comes first; the store must not depend on it).
    var checksUniquenessFirst: Bool {
        get { state.withLock { $0.checksUniquenessFirst } }
        set { state.withLock { $0.checksUniquenessFirst = newValue } }
    }

    /// What an update that changes an item's protection does.
    var protectionUpdate: ProtectionUpdate {
        get { state.withLock { $0.protectionUpdate } }
        set { state.withLock { $0.protectionUpdate = newValue } }
    }

    /// How the next authentication ends.
    var authenticationOutcome: Result<Void, BiometricAuthenticationError> {
        get { state.withLock { $0.authenticationOutcome } }
        set { state.withLock { $0.authenticationOutcome = newValue } }
    }

    /// How many prompts the keychain showed.
    var authenticationCount: Int { state.withLock { $0.authenticationCount } }

    /// The next calls of `operation` answer `statuses`, in order, and change nothing.
    func fail(_ operation: Operation, with statuses: KeychainStatus...) {
        state.withLock { $0.faults[operation, default: []] += statuses }
    }

    /// Every item, by address.
    var items: [KeychainItemAddress: Item] { state.withLock { $0.items } }

    /// The item at `address`, whatever the device's state.
    func item(at address: KeychainItemAddress) -> Item? { state.withLock { $0.items[address] } }

    /// Puts an item in place, as another writer (or an older version of the app) would have.
    func plant(_ data: Data, at address: KeychainItemAddress, stamp: Data? = nil, protection: KeychainItemProtection) {
        state.withLock { $0.items[address] = Item(contents: .init(data: data, stamp: stamp), protection: protection) }
    }

    /// Every call so far, with the account it named.
    var calls: [(operation: Operation, account: String)] { state.withLock { $0.calls.map { ($0.0, $0.1) } } }

    // MARK: - KeychainItems

    func read(_ address: KeychainItemAddress) -> Result<KeychainItemRead, KeychainStatus> {
        call(.read, address) { state in
            if !state.hasEntitlement { return .failure(.itemNotFound) }
            guard let item = state.items[address] else { return .failure(.itemNotFound) }
            guard Self.isReadable(item.protection, in: state.deviceState) else {
                return .failure(state.unreadableAnswer)
            }
            if item.protection.accessControl != nil, !state.isAuthenticated {
                return .failure(.interactionNotAllowed)
            }
            return .success(
                KeychainItemRead(contents: item.contents, protection: KeychainProtectionReport(item.protection))
            )
        }
    }

    func add(
        _ address: KeychainItemAddress,
        _ contents: KeychainItemContents,
        protection: KeychainItemProtection
    ) -> KeychainStatus {
        call(.add, address) { state in
            if !state.hasEntitlement { return .missingEntitlement }
            if state.checksUniquenessFirst, state.items[address] != nil { return .duplicateItem }
            guard Self.isReadable(protection, in: state.deviceState) else { return .interactionNotAllowed }
            guard state.items[address] == nil else { return .duplicateItem }
            state.items[address] = Item(contents: contents, protection: protection)
            return .success
        }
    }

    func update(
        _ address: KeychainItemAddress,
        to contents: KeychainItemContents,
        protection: KeychainItemProtection
    ) -> KeychainStatus {
        call(.update, address) { state in
            if !state.hasEntitlement { return .missingEntitlement }
            guard let item = state.items[address] else { return .itemNotFound }
            // Like a read, an update cannot match an item it cannot see.
            guard Self.isReadable(item.protection, in: state.deviceState) else { return state.unreadableAnswer }
            guard Self.isReadable(protection, in: state.deviceState) else { return .interactionNotAllowed }
            if protection != item.protection {
                switch state.protectionUpdate {
                case .applies:
                    break
                case .refusedWithParam:
                    return .param
                case .ignored:
                    state.items[address] = Item(contents: contents, protection: item.protection)
                    return .success
                }
            }
            state.items[address] = Item(contents: contents, protection: protection)
            return .success
        }
    }

    func move(_ address: KeychainItemAddress, stamp: Data, toAccount account: String) -> KeychainStatus {
        call(.move, address) { state in
            if !state.hasEntitlement { return .missingEntitlement }
            guard let item = state.items[address], item.contents.stamp == stamp else {
                return .itemNotFound
            }
            let destination = address.withAccount(account)
            guard state.items[destination] == nil else { return .duplicateItem }
            state.items[address] = nil
            state.items[destination] = item
            return .success
        }
    }

    func delete(_ address: KeychainItemAddress) -> KeychainStatus {
        call(.delete, address) { state in
            if !state.hasEntitlement { return .missingEntitlement }
            guard let item = state.items[address] else { return .itemNotFound }
            guard Self.isReadable(item.protection, in: state.deviceState) else { return state.unreadableAnswer }
            state.items[address] = nil
            return .success
        }
    }

    func authenticate(reason: String, protection: KeychainItemProtection) async throws(BiometricAuthenticationError) {
        guard protection.accessControl != nil else { return }
        let outcome = state.withLock { state in
            state.authenticationCount += 1
            if case .success = state.authenticationOutcome { state.isAuthenticated = true }
            return state.authenticationOutcome
        }
        try outcome.get()
    }

    func forgetAuthentication() {
        state.withLock { $0.isAuthenticated = false }
    }

    // MARK: - Helpers

    private func call<Answer>(
        _ operation: Operation,
        _ address: KeychainItemAddress,
        _ body: (inout State) -> Answer
    ) -> Answer where Answer: Sendable {
        beforeCall.withLock { $0 }?(operation, address)
        defer { afterCall.withLock { $0 }?(operation, address) }
        return state.withLock { state in
            state.calls.append((operation, address.account))
            if var faults = state.faults[operation], !faults.isEmpty {
                let status = faults.removeFirst()
                state.faults[operation] = faults
                if let fault = status as? Answer { return fault }
                if let fault = Result<KeychainItemRead, KeychainStatus>.failure(status) as? Answer { return fault }
            }
            return body(&state)
        }
    }

    private static func isReadable(_ protection: KeychainItemProtection, in deviceState: DeviceState) -> Bool {
        switch protection.accessibility {
        case .afterFirstUnlock, .afterFirstUnlockThisDeviceOnly:
            deviceState != .beforeFirstUnlock
        case .whenUnlocked, .whenUnlockedThisDeviceOnly, .whenPasscodeSetThisDeviceOnly:
            deviceState == .unlocked
        }
    }
}
