import AuthSession
import Foundation

/// What went wrong, as the person using the app would put it: the message and the suggestion
/// every error of the package shows (`errorDescription`, `recoverySuggestion`,
/// `localizedDescription`).
///
/// ```swift
/// } catch let error as ManagedSessionError {
///     alert(title: error.localizedDescription, message: error.recoverySuggestion)
///     if error.problem == .wrongCredentials { passwordField.clear() }
/// }
/// ```
///
/// The messages are English. To localize them, set ``AuthProblem/localizer`` once at launch:
/// it receives each problem, the part asked for and the English text, and returns the text to
/// show (`String(localized:)` is not available on Linux, so the package ships no string
/// catalogue). The developer's detail (the server's code, the HTTP status, the path) stays in
/// each error's `description`; no message ever carries a token.
///
/// All operations are thread-safe.
public enum AuthProblem: String, Sendable, Hashable, CaseIterable {

    /// "Wrong username or password.": the server refused a password sign-in (`invalid_grant`).
    case wrongCredentials

    /// "The sign-in was not accepted.": the server refused a sign-in's code (used or expired),
    /// or the redirect did not answer the request.
    case signInFailed

    /// "The sign-in was cancelled or declined.": the user declined (`access_denied`).
    case signInDeclined

    /// "The sign-in code has expired.": a device code ran out (`expired_token`).
    case signInExpired

    /// "Waiting for you to approve the sign-in.": a device flow's answer is pending.
    case approvalPending

    /// "The sign-in took too long.": no answer came back from the browser before the deadline.
    case signInTimedOut

    /// "You are offline.": no connection.
    case offline

    /// "The server is not responding, try again.": a timeout, a 5xx, a 429, an unreachable host.
    case serverNotResponding

    /// "The server sent an answer this app cannot read.": a garbled or oversized answer.
    case serverError

    /// "Your session has ended, please sign in again.": the server refused the refresh token, or
    /// there is none.
    case sessionEnded

    /// "Your access was revoked, please sign in again.": the credential was revoked.
    case accessRevoked

    /// "You were signed out by another app or window.": a process sharing the store signed out.
    case signedOutElsewhere

    /// "You are not signed in.".
    case notSignedIn

    /// "Your account was deleted.": the user deleted their account, and was signed out.
    case accountDeleted

    /// "Another sign-in or sign-out happened at the same time.": a result was superseded.
    case interrupted

    /// "Cancelled.".
    case cancelled

    /// "Your account data cannot be read while the device is locked.": the store is unavailable.
    case storageUnavailable

    /// "Your account data could not be read or saved.": any other store failure.
    case storageFailed

    /// "Your device's date and time seem to be wrong.": an ID token's time claims failed.
    case deviceClockWrong

    /// "This app cannot sign you in right now.": the app's setup is wrong (a misconfigured
    /// client, a missing endpoint, an entitlement).
    case appMisconfigured

    /// "Open the app to continue.": a widget or an extension that only reads the session needs
    /// a token the app renews.
    case openAppToContinue

    /// A part of a problem's text.
    ///
    /// All operations are thread-safe.
    public enum Part: String, Sendable, Hashable, CaseIterable {

        /// The message: `errorDescription`, `localizedDescription`.
        case message

        /// What to do: `recoverySuggestion`.
        case recoverySuggestion
    }

    /// Turns a problem's English text into the text to show: `(problem, part, english)` to the
    /// text. `nil` (the default) shows the English text.
    ///
    /// ```swift
    /// AuthProblem.localizer = { problem, part, english in
    ///     NSLocalizedString("auth.\(problem.rawValue).\(part.rawValue)", value: english, comment: "")
    /// }
    /// ```
    public static var localizer: (@Sendable (AuthProblem, Part, String) -> String)? {
        get { localizerStorage.withLock { $0 } }
        set { localizerStorage.withLock { $0 = newValue } }
    }

    private static let localizerStorage = ConcurrencySafeContainer<(@Sendable (AuthProblem, Part, String) -> String)?>(
        nil
    )

    /// The message to show, through ``localizer``.
    public var message: String { text(.message) }

    /// What the person can do, through ``localizer``.
    public var recoverySuggestion: String { text(.recoverySuggestion) }

    /// `part` of this problem's text, through ``localizer``.
    ///
    /// - Parameter part: Which part.
    /// - Returns: The text to show.
    public func text(_ part: Part) -> String {
        let english = englishText(part)
        guard let localizer = Self.localizer else { return english }
        return localizer(self, part, english)
    }

    /// The English text of `part`.
    ///
    /// - Parameter part: Which part.
    /// - Returns: The English text.
    public func englishText(_ part: Part) -> String {
        let (message, suggestion) = english
        return part == .message ? message : suggestion
    }

    private var english: (String, String) {
        switch self {
        case .wrongCredentials:
            ("Wrong username or password.", "Check your username and password and try again.")
        case .signInFailed:
            ("The sign-in was not accepted.", "Start signing in again.")
        case .signInDeclined:
            ("The sign-in was cancelled or declined.", "Sign in again if you want to continue.")
        case .signInExpired:
            ("The sign-in code has expired.", "Start signing in again to get a new code.")
        case .approvalPending:
            ("Waiting for you to approve the sign-in.", "Approve the sign-in on your other device.")
        case .signInTimedOut:
            ("The sign-in took too long.", "Start signing in again.")
        case .offline:
            ("You are offline.", "Check your internet connection and try again.")
        case .serverNotResponding:
            ("The server is not responding, try again.", "Wait a moment and try again.")
        case .serverError:
            ("The server sent an answer this app cannot read.", "Try again later.")
        case .sessionEnded:
            ("Your session has ended, please sign in again.", "Sign in again to continue.")
        case .accessRevoked:
            ("Your access was revoked, please sign in again.", "Sign in again to continue.")
        case .signedOutElsewhere:
            ("You were signed out by another app or window.", "Sign in again to continue.")
        case .notSignedIn:
            ("You are not signed in.", "Sign in to continue.")
        case .accountDeleted:
            ("Your account was deleted.", "Create a new account to use the app again.")
        case .interrupted:
            ("Another sign-in or sign-out happened at the same time.", "Try again.")
        case .cancelled:
            ("Cancelled.", "Try again if you want to continue.")
        case .storageUnavailable:
            ("Your account data cannot be read while the device is locked.", "Unlock your device and try again.")
        case .storageFailed:
            ("Your account data could not be read or saved.", "Try again. If it keeps happening, sign in again.")
        case .deviceClockWrong:
            ("Your device's date and time seem to be wrong.", "Set the date and time automatically and try again.")
        case .appMisconfigured:
            ("This app cannot sign you in right now.", "Update the app, or contact its support if it keeps happening.")
        case .openAppToContinue:
            ("Open the app to continue.", "Open the app once; it renews your session.")
        }
    }
}
