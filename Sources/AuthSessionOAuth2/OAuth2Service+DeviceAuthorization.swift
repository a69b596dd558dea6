import AuthSession
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

    /// When the codes expire. Polling ends with `expired_token` when this passes, whatever the
    /// server still answers.
    public var expiresAt: Date

    /// Seconds between polls (RFC 8628 §3.2, §3.5), by one rule that every part of the device
    /// flow applies: the server's `interval`, but at least 1 second (a server's 0 or 0.5 polls
    /// once a second, never in a tight loop); 5 when the server sends none, or when the value is
    /// not a finite number. A value set here is kept by the same rule, and this is the wait
    /// polling starts with. Each `slow_down` adds 5 seconds for the rest of that polling.
    public var interval: TimeInterval {
        didSet { interval = Self.pollingInterval(interval) }
    }

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
    ///   - interval: Seconds between polls, by the rule of ``interval``.
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
        self.interval = Self.pollingInterval(interval)
        self.scope = scope
    }

    /// The rule of ``interval``: at least 1 second; 5 when `seconds` is not a finite number.
    static func pollingInterval(_ seconds: TimeInterval) -> TimeInterval {
        seconds.isFinite ? max(1, seconds) : 5
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
        // RFC 8628 §3.2: 5 seconds when the server does not say; ``DeviceAuthorization/interval``
        // applies its rule to what it says.
        var interval: TimeInterval = 5
        if let value = object["interval"] {
            guard let seconds = value.numberValue else {
                throw invalid("interval is not a number of seconds")
            }
            interval = seconds
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
    /// The device flow's one polling loop, which the session manager's device-flow sign-in
    /// (`ManagedSessionProvider.signIn(with:)` with a ``DeviceAuthorization``) runs too; use that
    /// one to keep the session:
    ///
    /// - It waits ``DeviceAuthorization/interval`` on the service's clock before each poll, so
    ///   the first poll comes one interval after the call, and each next one an interval after
    ///   the previous answer.
    /// - `authorization_pending` polls again; `slow_down` adds 5 seconds to the interval for the
    ///   rest of this polling. Neither is a failure: no retry policy sees them.
    /// - A transient failure (the network, a timeout, a 5xx, a 429) polls again after a backoff:
    ///   twice the interval per failure in a row, at most 60 seconds but never less than the
    ///   interval, and at least the server's `Retry-After`. The next answer from the server
    ///   (pending or `slow_down`) returns to the interval. The device code stays valid, so
    ///   polling goes on until ``DeviceAuthorization/expiresAt``.
    /// - It ends with the tokens; with `expired_token` (terminal) from the server or when
    ///   ``DeviceAuthorization/expiresAt`` passes on the clock (no poll is sent after it: a wait
    ///   that would end later ends there); with `access_denied` (terminal) when the user
    ///   declines; with any other error that is not transient, as it is; with
    ///   `RemoteAuthError.Reason.cancelled` when the calling task is cancelled.
    ///
    /// - Parameter authorization: What ``startDeviceAuthorization(scope:)`` returned.
    /// - Returns: The tokens.
    /// - Throws: `RemoteAuthError`: `expired_token` (terminal) when the codes expire,
    ///   `access_denied` (terminal) when the user declines, `RemoteAuthError.Reason.cancelled`
    ///   on cancellation, or any other error that is not transient.
    public func pollDeviceAuthorization(
        _ authorization: DeviceAuthorization
    ) async throws(RemoteAuthError)
        -> IssuedTokens
    {
        try await authorization.poll(on: clock) { grant throws(RemoteAuthError) in
            try await obtainTokens(with: grant)
        }
    }
}

extension DeviceAuthorization {

    /// The longest wait after transient failures, in seconds (unless the server's interval is
    /// longer).
    static let maximumBackoff: TimeInterval = 60

    /// Polls with ``deviceCode`` until the user approves, as
    /// ``OAuth2Service/pollDeviceAuthorization(_:)`` says: the device flow's one polling loop.
    ///
    /// - Parameters:
    ///   - clock: The clock the waits run on, and that ``expiresAt`` is compared with.
    ///   - obtain: Sends one poll: exchanges the grant for tokens at the token endpoint.
    /// - Returns: The tokens.
    /// - Throws: `RemoteAuthError`, as ``OAuth2Service/pollDeviceAuthorization(_:)`` says.
    func poll(
        on clock: any AuthSessionClock,
        obtainingTokens obtain: (AuthGrant) async throws(RemoteAuthError) -> IssuedTokens
    ) async throws(RemoteAuthError) -> IssuedTokens {
        var interval = Self.pollingInterval(self.interval)
        var failuresInARow = 0
        var askedWait: TimeInterval = 0
        let grant = AuthGrant.deviceCode(deviceCode)
        let expired = RemoteAuthError(
            .server(code: "expired_token"),
            serverDescription: "the device code expired before the user approved it"
        )
        while true {
            var wait = interval
            if failuresInARow > 0 {
                let backoff = interval * pow(2, Double(min(failuresInARow, 16)))
                wait = max(interval, min(Self.maximumBackoff, backoff), askedWait)
            }
            let remaining = expiresAt.timeIntervalSince(clock.now)
            guard remaining > 0 else { throw expired }
            do {
                try await clock.sleep(for: min(wait, remaining))
            } catch {
                throw RemoteAuthError(.cancelled)
            }
            guard clock.now < expiresAt else { throw expired }
            do {
                return try await obtain(grant)
            } catch {
                switch error.serverCode {
                case "authorization_pending":
                    failuresInARow = 0
                case "slow_down":
                    interval += 5
                    failuresInARow = 0
                default:
                    guard error.isRetryable else { throw error }
                    failuresInARow += 1
                    askedWait = error.retryAfter?.delay(from: clock.now) ?? 0
                }
            }
        }
    }
}
