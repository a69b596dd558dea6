import AuthSessionInterface
import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a ``SessionStore`` could not do what was asked. No case ever carries a token: reasons name
/// fields, paths and system errors, never stored values.
///
/// `localizedDescription` is a person's message (see ``problem``); ``description`` and
/// ``detail`` are the developer's.
public enum SessionStoreError: Error, Sendable, Hashable {

    /// The storage cannot be used now, for example a device that is locked (the Keychain's
    /// `errSecInteractionNotAllowed`). Try again later; it says nothing about whether a session
    /// is stored.
    case unavailable(reason: String)

    /// The stored bytes are not a session of any known format. They were moved aside to
    /// `setAsideAt`, for inspection, so the next save starts afresh (``FileSessionStore`` keeps
    /// them until its next removal, a sign-out: such bytes may hold tokens).
    case corrupt(reason: String, setAsideAt: String?)

    /// The stored session was written by a newer version of this package, in a format this one
    /// does not know. It is left as it is, until a sign-in with this version replaces it.
    case unsupportedFormatVersion(found: Int, newestSupported: Int)

    /// The file or folder at `path` can be read or written by other users (`mode` has group or
    /// world bits). Refused rather than used: a session file must be readable by its owner only.
    case insecurePermissions(path: String, mode: UInt32)

    /// The file or folder at `path` belongs to another user. Refused rather than used.
    case foreignOwner(path: String, owner: UInt32)

    /// `path` is a symbolic link. The store never follows one.
    case symbolicLink(path: String)

    /// `path` is neither a regular file nor a folder where one is expected.
    case notARegularFile(path: String)

    /// A system call failed: `operation` on `path`, with the C `errno` `code`.
    case io(operation: String, path: String, code: Int32)

    /// A Keychain call failed with `status` (an `OSStatus`); the description names the status
    /// and says what it means.
    case keychain(operation: String, status: Int32)

    /// The Keychain refused `operation` because this process lacks the entitlement the
    /// data-protection keychain requires (`errSecMissingEntitlement`, -34018). Retrying does not
    /// help: sign the app with a team (any app or extension built by Xcode is), add the
    /// access group to its `keychain-access-groups` entitlement if you pass one, or, for an
    /// unsigned macOS command-line tool, use `FileSessionStore`.
    case missingEntitlement(operation: String)

    /// The stored session was issued to another client or by another server than the manager's
    /// backend is configured for (``ManagedSession/origin``, ``RemoteAuthService/sessionOrigin``):
    /// the app's configuration changed, or an app and its extension disagree. The session is
    /// neither used (its refresh token is never sent with this configuration) nor deleted: fix
    /// the configuration, or sign in again to replace it (its tokens then stay valid at the
    /// server they came from until they expire).
    case issuedToAnotherClient(stored: SessionOrigin, configured: SessionOrigin)
}

extension SessionStoreError: LocalizedError {

    /// The person's message, from ``problem``: "Your account data cannot be read while the device
    /// is locked." or "Your account data could not be read or saved."; never a path. The
    /// developer's sentence is ``description``.
    public var errorDescription: String? { problem.message }

    /// What the person can do, from ``problem``.
    public var recoverySuggestion: String? { problem.recoverySuggestion }

    /// What failed, for a developer: the path, the mode, the system error. Registered secrets and
    /// credential-shaped words are redacted from it; a path is shown whole (a folder named like a
    /// token is still the folder to look at), with the home folder as `~`, and only registered
    /// secrets redacted from it.
    public var detail: String {
        let marker = "PATHMARKER"
        let text = SecretRedactor.redact(detail(showingPathAs: marker))
        guard let path, text.contains(marker) else { return text }
        return text.replacingOccurrences(of: marker, with: SecretRedactor.redactRegistered(Self.shown(path)))
    }

    /// The path the error names, if any.
    private var path: String? {
        switch self {
        case .insecurePermissions(let path, _), .foreignOwner(let path, _), .symbolicLink(let path),
            .notARegularFile(let path), .io(_, let path, _):
            path
        case .corrupt(_, let setAsideAt):
            setAsideAt
        case .unavailable, .unsupportedFormatVersion, .keychain, .missingEntitlement, .issuedToAnotherClient:
            nil
        }
    }

    /// `path` with the home folder as `~`: it names the user.
    private static func shown(_ path: String) -> String {
        let home = NSHomeDirectory()
        guard home.count > 1, path.hasPrefix(home + "/") || path == home else { return path }
        return "~" + path.dropFirst(home.count)
    }

    private func detail(showingPathAs shownPath: String) -> String {
        switch self {
        case .unavailable(let reason):
            "The session storage is not available now: \(reason)."
        case .corrupt(let reason, let setAsideAt):
            "The stored session is corrupt (\(reason))"
                + (setAsideAt.map { _ in "; its bytes were moved to \(shownPath)." } ?? ".")
        case .unsupportedFormatVersion(let found, let newestSupported):
            "The stored session uses format version \(found); this version reads up to \(newestSupported)."
        case .insecurePermissions(_, let mode):
            "Refusing \(shownPath): its permissions \(String(mode & 0o7777, radix: 8)) let other users read or write it."
        case .foreignOwner(_, let owner):
            "Refusing \(shownPath): it belongs to user \(owner), not to this process's user."
        case .symbolicLink:
            "Refusing \(shownPath): it is a symbolic link, which the session store never follows."
        case .notARegularFile:
            "Refusing \(shownPath): it is not a regular file or folder."
        case .io(let operation, _, let code):
            "\(operation) failed for \(shownPath): \(String(cString: strerror(code))) (errno \(code))."
        case .keychain(let operation, let status):
            "\(operation) failed: \(KeychainStatus(status))."
        case .missingEntitlement(let operation):
            "\(operation) failed: this process lacks the entitlement the data-protection keychain requires "
                + "(errSecMissingEntitlement, -34018). Sign it with a team, list the access group in its "
                + "keychain-access-groups entitlement, or use FileSessionStore for an unsigned command-line tool."
        case .issuedToAnotherClient(let stored, let configured):
            "The stored session was issued to \(stored); this manager is configured for \(configured). "
                + "It is neither used nor deleted: configure the client it was issued to, or sign in again to replace it."
        }
    }
}

extension SessionStoreError: CustomStringConvertible {

    /// The developer's sentence (``detail``): what failed, where, and the system's error.
    public var description: String {
        "SessionStoreError: \(detail)"
    }
}
