import AuthSessionInterface
import AuthSessionProviders
import Foundation

/// A device authorization in progress (RFC 8628 §3.2): what to show the user, and what the
/// client polls with.
///
/// ``description`` never shows the device code, which is a secret.
///
/// All operations are thread-safe.
public struct DeviceAuthorization: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{

    /// The code the client polls with (a secret).
    public var deviceCode: String

    /// The code the user types at ``verificationURI``.
    public var userCode: String

    /// Where the user goes to approve.
    public var verificationURI: URL

    /// The same, with the user code filled in, if the server offers it (for a QR code).
    public var verificationURIComplete: URL?

    /// When the codes expire.
    public var expiresAt: Date

    /// Seconds between polls the server asks for; 5 when it does not say.
    public var interval: TimeInterval

    /// The scopes asked for.
    public var scope: [String]

    /// Creates a device authorization.
    ///
    /// - Parameters:
    ///   - deviceCode: The device code.
    ///   - userCode: The user code.
    ///   - verificationURI: The verification URI.
    ///   - verificationURIComplete: The verification URI with the user code.
    ///   - expiresAt: When the codes expire.
    ///   - interval: Seconds between polls.
    ///   - scope: The scopes asked for.
    public init(
        deviceCode: String,
        userCode: String,
        verificationURI: URL,
        verificationURIComplete: URL? = nil,
        expiresAt: Date,
        interval: TimeInterval = 5,
        scope: [String] = []
    ) {
        self.deviceCode = deviceCode
        self.userCode = userCode
        self.verificationURI = verificationURI
        self.verificationURIComplete = verificationURIComplete
        self.expiresAt = expiresAt
        self.interval = interval
        self.scope = scope
    }

    /// The user code, where to enter it, and the expiry; never the device code.
    public var description: String {
        "DeviceAuthorization(userCode: \(userCode), verificationURI: \(verificationURI.absoluteString), expiresAt: \(expiresAt))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the device code.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "userCode": userCode, "verificationURI": verificationURI, "expiresAt": expiresAt, "interval": interval,
            ],
            displayStyle: .struct
        )
    }
}

extension OAuth2Service {

    /// Starts the device flow (RFC 8628 §3.1): asks the server for a device code and a user code.
    ///
    /// - Parameter scope: The scopes; ``OAuth2Configuration/scope`` when `nil`.
    /// - Returns: What to show the user, and what to poll with.
    /// - Throws: `RemoteAuthError`; `RemoteAuthError.Reason.unsupported(_:)` without a device
    ///   authorization endpoint.
    public func startDeviceAuthorization(scope: [String]? = nil) async throws(RemoteAuthError) -> DeviceAuthorization {
        guard let url = configuration.endpoints.deviceAuthorization else {
            throw RemoteAuthError(.unsupported("no device authorization endpoint"))
        }
        let scope = scope ?? configuration.scope
        let fields = scope.isEmpty ? [] : [("scope", scope.joined(separator: " "))]
        let request = HTTPExchange.formPost(
            to: url,
            fields: fields,
            client: configuration.client,
            timeout: configuration.requestTimeout
        )
        let (response, object) = try await withSecrets(of: fields) {
            () throws(RemoteAuthError) -> (OAuth2HTTPResponse, [String: JSONValue]) in
            let response = try await send(request)
            return (response, try HTTPExchange.jsonObject(from: response))
        }
        func invalid(_ what: String) -> RemoteAuthError {
            RemoteAuthError(.invalidResponse(what), statusCode: response.statusCode)
        }
        guard let deviceCode = object["device_code"]?.stringValue, !deviceCode.isEmpty else {
            throw invalid("device_code is missing or not a string")
        }
        guard let userCode = object["user_code"]?.stringValue, !userCode.isEmpty else {
            throw invalid("user_code is missing or not a string")
        }
        // RFC 8628 names it verification_uri; some servers still send the draft's verification_url.
        guard let verification = (object["verification_uri"] ?? object["verification_url"])?.stringValue,
            let verificationURI = URL(string: verification)
        else {
            throw invalid("verification_uri is missing or not a URL")
        }
        guard let expiresIn = object["expires_in"]?.numberValue, expiresIn.isFinite, expiresIn > 0,
            expiresIn <= 86_400
        else {
            throw invalid("expires_in is missing or out of range")
        }
        var interval: TimeInterval = 5
        if let value = object["interval"] {
            guard let seconds = value.numberValue, seconds.isFinite, seconds >= 0, seconds <= 3_600 else {
                throw invalid("interval is not a number of seconds")
            }
            interval = max(1, seconds)
        }
        return DeviceAuthorization(
            deviceCode: deviceCode,
            userCode: userCode,
            verificationURI: verificationURI,
            verificationURIComplete: object["verification_uri_complete"]?.stringValue.flatMap(URL.init(string:)),
            expiresAt: clock.now.addingTimeInterval(expiresIn),
            interval: interval,
            scope: scope
        )
    }

    /// Polls the token endpoint until the user approves (RFC 8628 §3.4, §3.5).
    ///
    /// Waits ``DeviceAuthorization/interval`` before each poll, on the service's clock.
    /// `authorization_pending` polls again; `slow_down` adds 5 seconds to the interval for the
    /// rest of the flow; a transient failure doubles the interval (up to a minute, never below
    /// what the server asked) and polls again. An interval under a second, or not a number,
    /// counts as 5 seconds. It ends with the tokens, or when the codes expire, the user declines, or the
    /// calling task is cancelled.
    ///
    /// - Parameter authorization: What ``startDeviceAuthorization(scope:)`` returned.
    /// - Returns: The tokens.
    /// - Throws: `RemoteAuthError`: `expired_token` (terminal) when the codes expire,
    ///   `access_denied` (terminal) when the user declines, `RemoteAuthError.Reason.cancelled`
    ///   on cancellation, or any other non-transient error.
    public func pollDeviceAuthorization(
        _ authorization: DeviceAuthorization
    ) async throws(RemoteAuthError)
        -> IssuedTokens
    {
        // A made-up authorization may carry any interval: never poll faster than once a second.
        var interval = authorization.interval.isFinite && authorization.interval >= 1 ? authorization.interval : 5
        let grant = AuthGrant.deviceCode(authorization.deviceCode)
        while true {
            do {
                try await clock.sleep(for: interval)
            } catch {
                throw RemoteAuthError(.cancelled)
            }
            guard clock.now < authorization.expiresAt else {
                throw RemoteAuthError(.server(code: "expired_token"))
            }
            do {
                return try await obtainTokens(with: grant)
            } catch {
                switch error.serverCode {
                case "authorization_pending":
                    continue
                case "slow_down":
                    interval += 5
                    continue
                default:
                    guard error.isRetryable else { throw error }
                    // Back off, but never below what the server asked for (`slow_down` included).
                    interval = max(interval, min(60, interval * 2))
                }
            }
        }
    }
}
