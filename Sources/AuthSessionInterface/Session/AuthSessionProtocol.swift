import Foundation

/// An active authentication session: the credential a client sends and the user it belongs to.
///
/// Conform your session model to this protocol. Only ``accessToken``, ``expiresAt`` and ``user``
/// are required; every expiry question (``expiresIn``, ``isSessionExpired``) is derived from
/// ``expiresAt``, so all parts of an app — and an engine running on an injected clock — agree
/// on when a session expires.
///
/// ```swift
/// struct MySession: AuthSessionProtocol {
///     let accessToken: String
///     let expiresAt: TimeInterval
///     let user: MyUser
/// }
/// ```
///
/// Conforming types must be `Sendable`: a session is read from whichever thread asks for it.
/// Keep the token out of `description`; the package never prints it.
public protocol AuthSessionProtocol: Sendable {

    /// The type of the user who owns the session.
    associatedtype SessionUser: AuthSessionUserProtocol

    /// The bearer token sent with authorised requests.
    ///
    /// Treat it as a secret: never log it or put it in an error message.
    var accessToken: String { get }

    /// The moment the session expires, in seconds since 00:00:00 UTC on 1 January 1970.
    var expiresAt: TimeInterval { get }

    /// The user who owns the session.
    var user: SessionUser { get }
}

extension AuthSessionProtocol {

    /// How long before an expiry a session is already treated as expired: 120 seconds.
    ///
    /// The buffer absorbs network latency and clock drift, so a token about to lapse is refreshed
    /// or dropped before a request made with it fails.
    public static var expiryBuffer: TimeInterval { 120 }

    /// The seconds left until ``expiresAt`` as of `now`; never negative.
    ///
    /// An expiry that is not a finite number (NaN, or infinite) leaves no time: a corrupt or
    /// hostile value never keeps a session alive.
    ///
    /// - Parameter now: The current date, as told by the caller's clock.
    /// - Returns: `max(expiresAt - now, 0)`, or `0` when `expiresAt` is not finite.
    public func expiresIn(at now: Date) -> TimeInterval {
        let remaining = expiresAt - now.timeIntervalSince1970
        return remaining.isFinite ? max(remaining, 0) : 0
    }

    /// The seconds left until ``expiresAt`` as of the system date; never negative.
    public var expiresIn: TimeInterval {
        expiresIn(at: Date())
    }

    /// Whether the session is expired, or expires within ``expiryBuffer``, as of `now`.
    ///
    /// A session exactly ``expiryBuffer`` seconds from its expiry is still valid; one a moment
    /// closer is expired. An expiry that is not a finite number (NaN, or infinite) is expired.
    ///
    /// - Parameter now: The current date, as told by the caller's clock.
    /// - Returns: `true` unless `expiresAt - now` is finite and at least 120.
    public func isSessionExpired(at now: Date) -> Bool {
        let remaining = expiresAt - now.timeIntervalSince1970
        return !(remaining.isFinite && remaining >= Self.expiryBuffer)
    }

    /// Whether the session is expired, or expires within ``expiryBuffer``, as of the system date.
    public var isSessionExpired: Bool {
        isSessionExpired(at: Date())
    }
}
