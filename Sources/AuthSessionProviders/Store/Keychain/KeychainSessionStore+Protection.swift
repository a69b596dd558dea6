extension KeychainSessionStore {

    /// When the item's data can be read (`kSecAttrAccessible`), and whether it may leave the device.
    ///
    /// The default, ``afterFirstUnlockThisDeviceOnly``, is what a session needs: the manager
    /// refreshes in the background and app extensions read the session while the device is locked,
    /// which the `whenUnlocked` classes would refuse, and a refresh token should not travel to
    /// another device inside a backup, which the classes without `ThisDeviceOnly` allow (a restored
    /// device then signs in again). Before the first unlock no class is readable; the store reports
    /// that as ``SessionStoreError/unavailable(reason:)``, never as "no session".
    ///
    /// All operations are thread-safe.
    public enum Accessibility: String, Hashable, Sendable, CaseIterable {

        /// Readable from the first unlock after a restart until the next restart; never migrated
        /// to another device. `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`. The default.
        case afterFirstUnlockThisDeviceOnly

        /// As ``afterFirstUnlockThisDeviceOnly``, but restored to a new device from an encrypted
        /// backup. `kSecAttrAccessibleAfterFirstUnlock`.
        case afterFirstUnlock

        /// Readable only while the device is unlocked; never migrated. Background refreshes and
        /// extensions running while the device is locked find the store unavailable.
        /// `kSecAttrAccessibleWhenUnlockedThisDeviceOnly`.
        case whenUnlockedThisDeviceOnly

        /// As ``whenUnlockedThisDeviceOnly``, but restored to a new device from an encrypted backup.
        /// `kSecAttrAccessibleWhenUnlocked`.
        case whenUnlocked

        /// Readable only while the device is unlocked, and only on a device with a passcode: the
        /// item is deleted if the passcode is removed, and cannot be added without one (a save
        /// then fails with the Keychain's error, and the user stays signed out).
        /// `kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly`.
        case whenPasscodeSetThisDeviceOnly
    }

    /// Which authentication the Keychain itself requires before it hands out the item's data
    /// (`kSecAttrAccessControl`).
    ///
    /// The handle's biometric gate (``ManagedSessionProvider/setBioMetricAuthentication(_:)``)
    /// decides what the app shows: the tokens stay readable by the process, and the gate prompts
    /// at launch and on activation. An access control makes the Keychain refuse the data until the
    /// user authenticates, so a process that has not authenticated (another app extension, code
    /// running before the prompt) cannot read the tokens at all. Its price:
    ///
    /// - A read never prompts (a prompt would block the thread that reads, and the manager reads
    ///   inside the handle's initializer). Until the app calls
    ///   ``KeychainSessionStore/authenticate(reason:)``, a load is
    ///   ``SessionStoreError/unavailable(reason:)`` and the manager stays loading; then call
    ///   ``ManagedSessionProvider/reloadStore()``.
    /// - Background refreshes and extensions cannot read the item until the app has authenticated
    ///   in that process.
    /// - Use it instead of the handle's biometric gate, not with it: both would prompt.
    /// - ``biometryCurrentSet`` makes the item unreadable for good once the enrolled faces or
    ///   fingers change. The manager cannot tell that from "not yet authenticated", and its
    ///   sign-out removes only what it could read: when ``KeychainSessionStore/authenticate(reason:)``
    ///   succeeds and the item still cannot be read, call ``KeychainSessionStore/remove()`` (a delete
    ///   needs no authentication), then ``ManagedSessionProvider/reloadStore()``, which finds no
    ///   session and shows sign-in.
    /// - It needs the data-protection keychain: with `usesDataProtectionKeychain: false` every save
    ///   fails with `errSecParam`.
    ///
    /// All operations are thread-safe.
    public enum AccessControl: String, Hashable, Sendable, CaseIterable {

        /// Biometrics or the device passcode (`SecAccessControlCreateFlags.userPresence`).
        case userPresence

        /// Biometrics, with the faces or fingers enrolled when the item was written
        /// (`SecAccessControlCreateFlags.biometryCurrentSet`).
        case biometryCurrentSet
    }
}
