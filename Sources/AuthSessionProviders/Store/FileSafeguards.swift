import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a file store does to each file it writes beyond its mode, so that a refresh token neither
/// travels to another device inside a backup nor becomes unreadable to a background refresh.
/// Decided here from the platform's facts (portable, tested); performed by
/// ``FileSystem/applySafeguards(_:to:)`` on Apple platforms.
struct FileSafeguards: Hashable, Sendable {

    /// A data-protection class, as `FileProtectionType` names it.
    enum Protection: Hashable, Sendable {
        /// Readable from the first unlock after a restart until the next restart, locked or not:
        /// what a background refresh needs (`completeUntilFirstUserAuthentication`).
        case completeUntilFirstUserAuthentication
    }

    /// Whether the file is excluded from backups (`URLResourceValues.isExcludedFromBackup`).
    var excludedFromBackup: Bool

    /// The data-protection class the file gets, or `nil` to leave the platform's default.
    var protection: Protection?

    /// Nothing beyond the mode: Linux.
    static let none = Self(excludedFromBackup: false, protection: nil)

    /// The decision.
    ///
    /// - Out of backups wherever the platform has the attribute (Apple platforms): an iCloud or
    ///   Finder backup of an iPhone, and a Time Machine backup of a Mac, restored onto another
    ///   device would present the same rotating refresh token from two devices, and the server's
    ///   reuse detection then ends the session on both. (The Keychain store's default,
    ///   `ThisDeviceOnly`, is the same choice.)
    /// - Complete until first user authentication where data protection keeps files closed while
    ///   the device is locked (iOS and its kin): readable by a background refresh and by an
    ///   extension on a locked device once it was unlocked after the restart, whatever default
    ///   class the app chose (an app whose Data Protection entitlement says Complete would
    ///   otherwise find its session unreadable in the background).
    ///
    /// - Parameters:
    ///   - hasBackupExclusion: Whether `isExcludedFromBackup` exists (Apple platforms).
    ///   - protectsFilesWhileLocked: Whether data protection keeps files closed while the device
    ///     is locked (iOS, not macOS).
    static func decide(hasBackupExclusion: Bool, protectsFilesWhileLocked: Bool) -> Self {
        Self(
            excludedFromBackup: hasBackupExclusion,
            protection: protectsFilesWhileLocked ? .completeUntilFirstUserAuthentication : nil
        )
    }

    /// This platform's safeguards.
    static let platform: Self = {
        #if canImport(Darwin)
        let hasBackupExclusion = true
        #else
        let hasBackupExclusion = false
        #endif
        return decide(
            hasBackupExclusion: hasBackupExclusion,
            protectsFilesWhileLocked: FileSystem.refusesProtectedFilesWithEPERM
        )
    }()
}

/// The safeguards a store applies, and how: ``FileSystem/applySafeguards(_:to:)`` in the stores,
/// a recorder in the tests.
struct FileSafeguarding: Sendable {

    /// What is applied to each file.
    let safeguards: FileSafeguards

    /// Applies `safeguards` to the file at a path.
    let perform: @Sendable (FileSafeguards, String) throws(SessionStoreError) -> Void

    /// The platform's safeguards, applied by the platform.
    static let platform = Self(safeguards: .platform, perform: FileSystem.applySafeguards)

    /// Applies the safeguards to the file at `path`, if there are any.
    func apply(to path: String) throws(SessionStoreError) {
        guard safeguards != .none else { return }
        try perform(safeguards, path)
    }
}

extension FileSystem {

    /// Applies `safeguards` to the file at `path`: the thin Apple-only part. The file is new and
    /// still empty (its tokens are written after), and it keeps both when it is renamed over the
    /// session file: the protection class and the backup attribute belong to the file, not to its
    /// name. Nothing on other platforms.
    ///
    /// - The protection: `FileManager.setAttributes` with `FileAttributeKey.protectionKey`, what
    ///   Apple documents for a file that exists ("Encrypting Your App's Files" changes an existing
    ///   file's class; the file is written through `open`, which takes none). Its failure is the
    ///   save's error.
    /// - The backup: `URLResourceValues.isExcludedFromBackup`. Apple says to set it "each time you
    ///   save a file because some common file operations cause this property to reset to false",
    ///   and does not say which; a file replaced by a rename is a new file without it, so it is set
    ///   on each new file, before the rename. A volume that keeps no such attribute (`ENOTSUP`, a
    ///   network volume) is no failure: nothing backs it up with the device's backups; any other
    ///   failure is the save's error.
    static func applySafeguards(_ safeguards: FileSafeguards, to path: String) throws(SessionStoreError) {
        #if canImport(Darwin)
        if safeguards.protection == .completeUntilFirstUserAuthentication {
            do {
                try FileManager.default.setAttributes(
                    [.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication],
                    ofItemAtPath: path
                )
            } catch {
                throw .io(operation: "setAttributes(protectionKey)", path: path, code: errnoCode(of: error))
            }
        }
        if safeguards.excludedFromBackup {
            var url = URL(fileURLWithPath: path, isDirectory: false)
            var values = URLResourceValues()
            values.isExcludedFromBackup = true
            do {
                try url.setResourceValues(values)
            } catch {
                if let failure = backupExclusionError(error, path: path) { throw failure }
            }
        }
        #endif
    }

    /// The `errno` a Foundation error carries, in itself or as its underlying error; `EIO` if it
    /// carries none.
    static func errnoCode(of error: any Error) -> Int32 {
        let error = error as NSError
        if error.domain == NSPOSIXErrorDomain { return Int32(truncatingIfNeeded: error.code) }
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return Int32(truncatingIfNeeded: underlying.code)
        }
        return EIO
    }

    /// The error a failed backup exclusion of `path` is; `nil` when the volume keeps no such
    /// attribute (`ENOTSUP`, `EOPNOTSUPP`), which no device backup reads either.
    static func backupExclusionError(_ error: any Error, path: String) -> SessionStoreError? {
        let code = errnoCode(of: error)
        if code == ENOTSUP || code == EOPNOTSUPP { return nil }
        return .io(operation: "setResourceValues(isExcludedFromBackup)", path: path, code: code)
    }
}
