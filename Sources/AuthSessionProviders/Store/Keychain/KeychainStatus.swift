/// A result code of a Keychain call (the `OSStatus` of `SecItemAdd`, `SecItemCopyMatching`,
/// `SecItemUpdate` or `SecItemDelete`), and what it means for a session store.
///
/// The values are the constants of Apple's "Security Framework Result Codes"; they are spelled out
/// here so that the mapping to ``SessionStoreError`` is portable and tested on every platform. The
/// Apple-only Keychain code only passes the status it got to ``sessionStoreError(operation:)``.
struct KeychainStatus: Error, RawRepresentable, Hashable, Sendable, CustomStringConvertible {

    /// The `OSStatus`.
    let rawValue: Int32

    init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    init(_ rawValue: Int32) {
        self.rawValue = rawValue
    }

    // MARK: The statuses the store acts on

    /// `errSecSuccess`.
    static let success = Self(0)
    /// `errSecItemNotFound`: no item matched; before the first unlock, possibly one that exists.
    static let itemNotFound = Self(-25_300)
    /// `errSecDuplicateItem`: an add found the item already there.
    static let duplicateItem = Self(-25_299)
    /// `errSecInteractionNotAllowed`: the item's data is protected now (a locked device, a launch
    /// before the first unlock) or would need a prompt the call may not show.
    static let interactionNotAllowed = Self(-25_308)
    /// `errSecNotAvailable`: no keychain can be reached.
    static let notAvailable = Self(-25_291)
    /// `errSecMissingEntitlement`: the process lacks the entitlement the data-protection keychain
    /// needs (an unsigned macOS command-line tool), or the access group is not one of its own.
    static let missingEntitlement = Self(-34_018)
    /// `errSecInteractionRequired`: the call needs the user, and may not ask now.
    static let interactionRequired = Self(-25_315)
    /// `errSecInDarkWake`: a Mac in dark wake cannot show the user anything.
    static let inDarkWake = Self(-25_320)
    /// `errSecParam`: a parameter is not valid; what `SecItemUpdate` is reported to answer when
    /// asked to change an item's protection.
    static let param = Self(-50)

    /// The Security framework's result codes that a `SecItem` call on a generic-password item can
    /// return (the system, internal and keychain sections of Apple's "Security Framework Result
    /// Codes", and the entitlement, restriction, decoding and ownership codes), with each constant's
    /// name and its meaning in a few words. Certificate, trust and code-signing codes are left out.
    static let documented: [KeychainStatus: (name: String, meaning: String)] = [
        // System
        Self(0): ("errSecSuccess", "no error"),
        Self(-4): ("errSecUnimplemented", "the function or operation is not implemented"),
        Self(-34): ("errSecDiskFull", "the disk is full"),
        Self(-36): ("errSecIO", "an input/output error"),
        Self(-49): ("errSecOpWr", "the file is already open with write permission"),
        Self(-50): ("errSecParam", "a parameter passed to the function is not valid"),
        Self(-61): ("errSecWrPerm", "a write permission error"),
        Self(-108): ("errSecAllocate", "memory could not be allocated"),
        Self(-128): ("errSecUserCanceled", "the user cancelled the operation"),
        Self(-909): ("errSecBadReq", "a bad parameter, or a state not valid for the operation"),
        // Internal
        Self(-2070): ("errSecInternalComponent", "an internal component failed"),
        Self(-4960): ("errSecCoreFoundationUnknown", "an unknown Core Foundation error"),
        // Keychain
        Self(-25_291): ("errSecNotAvailable", "no keychain is available"),
        Self(-25_292): ("errSecReadOnly", "the keychain cannot be modified"),
        Self(-25_293): ("errSecAuthFailed", "authorization or authentication failed"),
        Self(-25_294): ("errSecNoSuchKeychain", "the keychain does not exist"),
        Self(-25_295): ("errSecInvalidKeychain", "the keychain is not valid"),
        Self(-25_296): ("errSecDuplicateKeychain", "a keychain with the same name already exists"),
        Self(-25_297): ("errSecDuplicateCallback", "more than one callback of the same name exists"),
        Self(-25_298): ("errSecInvalidCallback", "the callback is not valid"),
        Self(-25_299): ("errSecDuplicateItem", "the item already exists"),
        Self(-25_300): ("errSecItemNotFound", "the item cannot be found"),
        Self(-25_301): ("errSecBufferTooSmall", "the buffer is too small"),
        Self(-25_302): ("errSecDataTooLarge", "the data is too large"),
        Self(-25_303): ("errSecNoSuchAttr", "the attribute does not exist"),
        Self(-25_304): ("errSecInvalidItemRef", "the item reference is not valid"),
        Self(-25_305): ("errSecInvalidSearchRef", "the search reference is not valid"),
        Self(-25_306): ("errSecNoSuchClass", "the item class does not exist"),
        Self(-25_307): ("errSecNoDefaultKeychain", "there is no default keychain"),
        Self(-25_308): ("errSecInteractionNotAllowed", "user interaction is not allowed now"),
        Self(-25_309): ("errSecReadOnlyAttr", "the attribute is read-only"),
        Self(-25_310): ("errSecWrongSecVersion", "the version is not the right one"),
        Self(-25_311): ("errSecKeySizeNotAllowed", "the key size is not allowed"),
        Self(-25_312): ("errSecNoStorageModule", "no storage module is available"),
        Self(-25_313): ("errSecNoCertificateModule", "no certificate module is available"),
        Self(-25_314): ("errSecNoPolicyModule", "no policy module is available"),
        Self(-25_315): ("errSecInteractionRequired", "user interaction is required, but not allowed now"),
        Self(-25_316): ("errSecDataNotAvailable", "the item's contents cannot be retrieved"),
        Self(-25_317): ("errSecDataNotModifiable", "the item's contents cannot be modified"),
        Self(-25_318): ("errSecCreateChainFailed", "a certificate chain could not be created"),
        Self(-25_319): ("errSecInvalidPrefsDomain", "the preference domain is not valid"),
        Self(-25_320): ("errSecInDarkWake", "no user interface can be shown while the system is in dark wake"),
        // Other
        Self(-25_243): ("errSecNoAccessForItem", "the item has no access control"),
        Self(-25_244): ("errSecInvalidOwnerEdit", "the item's owner may not be changed so"),
        Self(-26_275): ("errSecDecode", "the data could not be decoded"),
        Self(-34_018): ("errSecMissingEntitlement", "a required entitlement is missing"),
        Self(-34_020): ("errSecRestrictedAPI", "this process is restricted from the operation"),
    ]

    /// The constant's name, such as `errSecItemNotFound`, for a documented status.
    var name: String? { Self.documented[self]?.name }

    /// The name, the value and the meaning: "errSecItemNotFound (-25300): the item could not be
    /// found".
    var description: String {
        guard let (name, meaning) = Self.documented[self] else { return "OSStatus \(rawValue)" }
        return "\(name) (\(rawValue)): \(meaning)"
    }

    /// What a failure with this status means for the store, from a call named `operation`:
    ///
    /// - `errSecInteractionNotAllowed`, `errSecNotAvailable`, `errSecInteractionRequired`,
    ///   `errSecInDarkWake`: ``SessionStoreError/unavailable(reason:)``: the item cannot be reached
    ///   now and may be later (a locked device, a launch before the first unlock); it says nothing
    ///   about whether a session is stored.
    /// - `errSecMissingEntitlement`: ``SessionStoreError/missingEntitlement(operation:)``, which
    ///   no retry cures.
    /// - Anything else: ``SessionStoreError/keychain(operation:status:)``.
    func sessionStoreError(operation: String) -> SessionStoreError {
        switch self {
        case .interactionNotAllowed:
            .unavailable(
                reason: "the Keychain item cannot be read now: the device is locked or not yet unlocked since it "
                    + "started, or the item's access control needs an authentication (\(self))"
            )
        case .notAvailable, .interactionRequired, .inDarkWake:
            .unavailable(reason: "the Keychain cannot be used now (\(self))")
        case .missingEntitlement:
            .missingEntitlement(operation: operation)
        default:
            .keychain(operation: operation, status: rawValue)
        }
    }
}
