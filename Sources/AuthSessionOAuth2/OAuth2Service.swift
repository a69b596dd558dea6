import AuthSession
import AuthSessionInterface
import AuthSessionProviders
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `RemoteAuthService` over a real OAuth 2.0 / OpenID Connect server.
///
/// Configure it from the server's issuer (``discover(issuer:client:scope:transport:clock:signatureVerifier:)``) or
/// from explicit endpoints (``init(configuration:transport:clock:signatureVerifier:)``). It speaks:
///
/// - the token endpoint (RFC 6749): authorization code with PKCE S256 (RFC 7636; see
///   ``authorizationRequest(redirectURI:scope:additionalParameters:)``), refresh token, password,
///   client credentials, and the device flow (RFC 8628: ``startDeviceAuthorization(scope:)``,
///   ``pollDeviceAuthorization(_:)``), with `client_secret_basic`, `client_secret_post` or no
///   client authentication;
/// - revocation (RFC 7009), introspection (RFC 7662), userinfo, and credential state from them;
/// - ID tokens: the claims checked (`iss`, `aud`, `azp`, `exp`, `iat`, `nbf`, `nonce`, with a
///   leeway), and the signature too (`RS256`, `ES256`) whenever the configuration has a key set or
///   a `jwks_uri` (discovery gives one), or a ``signatureVerifier`` is given.
///
/// Every answer is checked before it is used: the status, the content type, the size, each
/// field's type and range. Errors are `RemoteAuthError` values classified as transient,
/// terminal or misconfiguration; no token appears in any of them. The service keeps no state
/// between calls: retries, single flight and storage belong to the session manager.
///
/// All operations are thread-safe.
public struct OAuth2Service: RemoteAuthService {

    /// The server, the client and the limits.
    public let configuration: OAuth2Configuration

    /// What checks every ID token's signature before its claims are used, or `nil` when nothing
    /// does (no key set and no `jwks_uri` configured, and none given).
    ///
    /// By default it comes from the configuration: a `JSONWebKeySetVerifier` with
    /// ``OAuth2Configuration/keySet``, or one that fetches ``OAuth2Configuration/jwksURI`` through
    /// this service's transport. Copies of the service share it, and so its cached keys.
    public let signatureVerifier: (any IDTokenSignatureVerifier)?

    let transport: any OAuth2HTTPTransport
    let clock: any AuthSessionClock

    /// Creates a service for explicit endpoints.
    ///
    /// - Parameters:
    ///   - configuration: The server, the client and the limits.
    ///   - transport: The HTTP transport; a ``URLSessionTransport`` by default.
    ///   - clock: The clock for expiry and ID-token time checks, and device-flow polling.
    ///   - signatureVerifier: What checks ID-token signatures; `nil` (the default) takes the
    ///     configuration's key set or `jwks_uri`, if it has one.
    public init(
        configuration: OAuth2Configuration,
        transport: any OAuth2HTTPTransport = URLSessionTransport(),
        clock: any AuthSessionClock = SystemClock(),
        signatureVerifier: (any IDTokenSignatureVerifier)? = nil
    ) {
        self.configuration = configuration
        self.transport = transport
        self.clock = clock
        self.signatureVerifier =
            signatureVerifier ?? Self.verifier(for: configuration, transport: transport, clock: clock)
    }

    /// The verifier a configuration names: its fixed key set, else its `jwks_uri`, else none.
    private static func verifier(
        for configuration: OAuth2Configuration,
        transport: any OAuth2HTTPTransport,
        clock: any AuthSessionClock
    ) -> (any IDTokenSignatureVerifier)? {
        if let keySet = configuration.keySet {
            return JSONWebKeySetVerifier(keySet: keySet)
        }
        guard let jwksURI = configuration.jwksURI else { return nil }
        return JSONWebKeySetVerifier(
            jwksURI: jwksURI,
            transport: transport,
            clock: clock,
            requestTimeout: configuration.requestTimeout,
            maximumResponseSize: configuration.maximumResponseSize,
            allowsInsecureHTTP: configuration.allowsInsecureHTTP
        )
    }

    /// Creates a service for the server at `issuer`, from its metadata (RFC 8414 and OpenID
    /// Connect Discovery).
    ///
    /// - Parameters:
    ///   - issuer: The issuer URL, such as `https://auth.example.com/o`.
    ///   - client: The client.
    ///   - scope: The default scopes.
    ///   - transport: The HTTP transport.
    ///   - clock: The clock.
    ///   - signatureVerifier: What checks ID-token signatures; `nil` (the default) fetches the
    ///     keys at the metadata's `jwks_uri`, if it names one.
    /// - Returns: The service.
    /// - Throws: `RemoteAuthError` from ``OAuth2ServerMetadata/discover(issuer:transport:timeout:allowsInsecureHTTP:)``.
    public static func discover(
        issuer: URL,
        client: OAuth2Client,
        scope: [String] = [],
        transport: any OAuth2HTTPTransport = URLSessionTransport(),
        clock: any AuthSessionClock = SystemClock(),
        signatureVerifier: (any IDTokenSignatureVerifier)? = nil
    ) async throws(RemoteAuthError) -> OAuth2Service {
        let metadata = try await OAuth2ServerMetadata.discover(issuer: issuer, transport: transport)
        return OAuth2Service(
            configuration: OAuth2Configuration(metadata: metadata, client: client, scope: scope),
            transport: transport,
            clock: clock,
            signatureVerifier: signatureVerifier
        )
    }

    /// Creates a service for the server at `issuer`, from its metadata kept in `cache`: a launch
    /// with a copy there sends no request, so a stored session is served with the server down.
    ///
    /// The metadata comes from
    /// ``OAuth2ServerMetadata/discover(issuer:cache:maximumAge:transport:timeout:allowsInsecureHTTP:clock:)``:
    /// from the copy at once (refreshed in the background for the next launch when it is older
    /// than `maximumAge`), else from the server, then kept.
    ///
    /// ```swift
    /// let store = try FileSessionStore(applicationName: "com.example.cli")
    /// let oauth = try await OAuth2Service.discover(
    ///     issuer: URL(string: "https://auth.example.com/o")!,
    ///     client: OAuth2Client(id: "cli"),
    ///     cache: FileDiscoveryCache(beside: store)
    /// )
    /// ```
    ///
    /// - Parameters:
    ///   - issuer: The issuer URL, such as `https://auth.example.com/o`.
    ///   - client: The client.
    ///   - scope: The default scopes.
    ///   - cache: Where the metadata is kept between launches.
    ///   - maximumAge: Seconds after which the copy is refreshed in the background; a day by default.
    ///   - transport: The HTTP transport.
    ///   - clock: The clock.
    ///   - signatureVerifier: What checks ID-token signatures; `nil` (the default) fetches the
    ///     keys at the metadata's `jwks_uri`, if it names one.
    /// - Returns: The service.
    /// - Throws: `RemoteAuthError`, only without a copy: as
    ///   ``discover(issuer:client:scope:transport:clock:signatureVerifier:)``.
    public static func discover(
        issuer: URL,
        client: OAuth2Client,
        scope: [String] = [],
        cache: any DiscoveryCache,
        maximumAge: TimeInterval = 86_400,
        transport: any OAuth2HTTPTransport = URLSessionTransport(),
        clock: any AuthSessionClock = SystemClock(),
        signatureVerifier: (any IDTokenSignatureVerifier)? = nil
    ) async throws(RemoteAuthError) -> OAuth2Service {
        let metadata = try await OAuth2ServerMetadata.discover(
            issuer: issuer,
            cache: cache,
            maximumAge: maximumAge,
            transport: transport,
            clock: clock
        )
        return OAuth2Service(
            configuration: OAuth2Configuration(metadata: metadata, client: client, scope: scope),
            transport: transport,
            clock: clock,
            signatureVerifier: signatureVerifier
        )
    }

    // MARK: RemoteAuthService

    /// The configured client identifier, issuer (``OAuth2Configuration/issuer``, `nil` when none
    /// is configured) and the token endpoint's origin: recorded in each session signed in here,
    /// and checked against a stored session's before a manager uses it or revokes its tokens
    /// (`SessionStoreError.issuedToAnotherClient`).
    public var sessionOrigin: SessionOrigin? {
        SessionOrigin(
            issuer: configuration.issuer,
            clientID: configuration.client.id,
            server: SessionOrigin.serverOrigin(of: configuration.endpoints.token)
        )
    }

    /// Exchanges `grant` at the token endpoint.
    ///
    /// An ID token in the answer must pass the claim checks, including `nonce` when the grant
    /// expects one, and the ``signatureVerifier``'s check when there is one (a transient failure
    /// to fetch the keys fails the sign-in transiently). Without an ID token, and with ``OAuth2Configuration/fetchesUserInfo`` and an
    /// `openid` scope, the user comes from the userinfo endpoint (best effort); failing that, from
    /// the `sub` of the introspection endpoint, if configured (best effort). Without either, the
    /// user's identifier is empty and the session manager tells people apart by
    /// `ManagedSession.lineage`.
    ///
    /// - Parameter grant: The grant.
    /// - Returns: The tokens and, when known, the user.
    /// - Throws: `RemoteAuthError`.
    public func obtainTokens(with grant: AuthGrant) async throws(RemoteAuthError) -> IssuedTokens {
        var fields = [("grant_type", grant.grantType)]
        fields += grant.parameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let scope = grant.scope ?? configuration.scope
        if !scope.isEmpty {
            fields.append(("scope", scope.joined(separator: " ")))
        }
        var tokens = try await requestTokens(fields: fields, expectedNonce: grant.expectedNonce)
        if tokens.user == nil, configuration.fetchesUserInfo, configuration.endpoints.userInfo != nil,
            (tokens.scope ?? scope).contains("openid")
        {
            tokens.user = try? await userInfo(accessToken: tokens.accessToken)
        }
        if tokens.user == nil, configuration.endpoints.introspection != nil,
            let introspection = try? await introspect(tokens.accessToken, kind: .accessToken), introspection.isActive,
            let subject = introspection.subject, !subject.isEmpty
        {
            // No ID token and no userinfo: the introspection's `sub`, when the server gives one,
            // names the user (best effort; without it the session's lineage tells people apart).
            tokens.user = ManagedUser(identifier: subject)
        }
        return tokens
    }

    /// Presents `refreshToken` at the token endpoint (RFC 6749 §6).
    ///
    /// An ID token in the answer must pass the identity checks (`iss`, `aud`, `azp`) and the
    /// ``signatureVerifier``'s check; its time claims are not checked, because the server has
    /// already rotated the tokens and a device clock minutes off must not throw them away. For the
    /// same reason, when the signature cannot be checked right now (the key set cannot be fetched,
    /// whatever its URL answers, or the key is not published yet), the new tokens are kept without
    /// that ID token: `IssuedTokens.idToken` and `IssuedTokens.user` are `nil`, and
    /// `IssuedTokens.unverifiedSubject` carries the token's subject, which the manager compares
    /// with the session's to refuse another user's tokens, and never stores; the session keeps its
    /// previous ID token and profile. Only a verdict on the token itself (a signature the keys
    /// fetched for it do not verify, a malformed token) fails the refresh. OpenID Connect also asks that its `sub`
    /// equal the session's: compare `IssuedTokens.user` with the session's user. The userinfo
    /// endpoint is not asked: the new tokens are never put at risk by a second request.
    ///
    /// A refresh refused with a bare `400`, an empty body or only whitespace (Glewlwyd answers a spent, reused or
    /// revoked refresh token so), reads as `invalid_grant`, terminal: RFC 6749 §5.2 gives the token
    /// endpoint `400` for a request or grant it refuses, the same client's earlier refreshes show
    /// the request is well formed, and presenting the same token again cannot succeed (at Glewlwyd
    /// any refused refresh spends it). The error's status stays `400`. A `400` with a body that is
    /// no error object (a proxy's HTML page: a request header too large, say) stays what it was,
    /// `httpStatus(400)`: nothing says the token was refused.
    ///
    /// - Parameters:
    ///   - refreshToken: The refresh token.
    ///   - scope: The scopes to ask for, or `nil` for those granted before.
    /// - Returns: The new tokens.
    /// - Throws: `RemoteAuthError`; `invalid_grant` (terminal) for a spent or revoked token.
    public func refresh(_ refreshToken: String, scope: [String]?) async throws(RemoteAuthError) -> IssuedTokens {
        var fields = [("grant_type", "refresh_token"), ("refresh_token", refreshToken)]
        if let scope, !scope.isEmpty {
            fields.append(("scope", scope.joined(separator: " ")))
        }
        return try await requestTokens(fields: fields, expectedNonce: nil, isRefresh: true)
    }

    /// Revokes `token` at the revocation endpoint (RFC 7009).
    ///
    /// - Parameters:
    ///   - token: The token.
    ///   - kind: Which token it is (`token_type_hint`).
    /// - Throws: `RemoteAuthError`; `RemoteAuthError.Reason.unsupported(_:)` without a
    ///   revocation endpoint. An unknown, expired or already revoked token is not an error,
    ///   also from servers that answer it with `invalid_token` or `invalid_grant`.
    public func revoke(_ token: String, kind: TokenKind) async throws(RemoteAuthError) {
        guard let url = configuration.endpoints.revocation else {
            throw RemoteAuthError(.unsupported("no revocation endpoint"))
        }
        let fields = [("token", token), ("token_type_hint", kind.rawValue)]
        try await withSecrets(of: fields) { () throws(RemoteAuthError) in
            let request = HTTPExchange.formPost(
                to: url,
                fields: fields,
                client: configuration.client,
                timeout: configuration.requestTimeout
            )
            let response = try await send(request)
            guard !(200..<300).contains(response.statusCode) else { return }
            let error = HTTPExchange.error(from: response)
            // Some servers (Google) answer a token that is already dead with an error: it is revoked.
            guard error.serverCode == "invalid_token" || error.serverCode == "invalid_grant" else { throw error }
        }
    }

    /// Whether the credential behind `session` stands, from introspection or, without an
    /// introspection endpoint, userinfo.
    ///
    /// An OAuth 2.0 server can only say whether an access token is active. An inactive token
    /// whose expiry has passed, or is within ``OAuth2Configuration/clockLeeway`` of it, says
    /// nothing about the session (the clocks may differ; the refresh will tell), so it counts
    /// as `CredentialState.authorized`; an inactive token that should be valid for longer than
    /// that is `CredentialState.revoked`. With neither endpoint the answer is
    /// `CredentialState.authorized`: nothing is known against the session.
    ///
    /// Pass the session as it is now: an access token replaced by a refresh is inactive at
    /// servers that revoke the previous one.
    ///
    /// - Parameter session: The session.
    /// - Returns: The state.
    /// - Throws: `RemoteAuthError`: a network failure says nothing about the credential.
    public func credentialState(for session: ManagedSession) async throws(RemoteAuthError) -> CredentialState {
        let isLocallyValid = session.expiresAt > clock.now.timeIntervalSince1970 + configuration.clockLeeway
        if configuration.endpoints.introspection != nil {
            let introspection = try await introspect(session.accessToken, kind: .accessToken)
            return introspection.isActive || !isLocallyValid ? .authorized : .revoked
        }
        if configuration.endpoints.userInfo != nil {
            do {
                _ = try await userInfo(accessToken: session.accessToken)
                return .authorized
            } catch  where error.reason == .accessTokenRejected {
                return isLocallyValid ? .revoked : .authorized
            }
        }
        return .authorized
    }

    // MARK: Other endpoints

    /// Asks the introspection endpoint about `token` (RFC 7662), authenticated as
    /// ``OAuth2Configuration/introspectionClient`` (or the client).
    ///
    /// - Parameters:
    ///   - token: The token.
    ///   - kind: A hint of which token it is.
    /// - Returns: What the server said.
    /// - Throws: `RemoteAuthError`; `RemoteAuthError.Reason.unsupported(_:)` without an
    ///   introspection endpoint.
    public func introspect(_ token: String, kind: TokenKind? = nil) async throws(RemoteAuthError) -> TokenIntrospection
    {
        guard let url = configuration.endpoints.introspection else {
            throw RemoteAuthError(.unsupported("no introspection endpoint"))
        }
        var fields = [("token", token)]
        if let kind {
            fields.append(("token_type_hint", kind.rawValue))
        }
        let client = configuration.introspectionClient ?? configuration.client
        return try await withSecrets(of: fields, client: client) { () throws(RemoteAuthError) in
            let request = HTTPExchange.formPost(
                to: url,
                fields: fields,
                client: client,
                timeout: configuration.requestTimeout
            )
            let object = try HTTPExchange.jsonObject(from: try await send(request))
            return try TokenIntrospection(object)
        }
    }

    /// Asks the userinfo endpoint who the user of `accessToken` is.
    ///
    /// - Parameter accessToken: The access token.
    /// - Returns: The user: `sub`, `name`, `email`, and the other string claims.
    /// - Throws: `RemoteAuthError`; `RemoteAuthError.Reason.accessTokenRejected` (transient:
    ///   refresh, then try again) for an access token the server refuses, expired or revoked.
    public func userInfo(accessToken: String) async throws(RemoteAuthError) -> ManagedUser {
        guard let url = configuration.endpoints.userInfo else {
            throw RemoteAuthError(.unsupported("no userinfo endpoint"))
        }
        var request = URLRequest(
            url: url,
            cachePolicy: .reloadIgnoringLocalCacheData,
            timeoutInterval: configuration.requestTimeout
        )
        request.setValue("Bearer \(accessToken)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let object = try await withSecrets(of: [("access_token", accessToken)]) {
            () throws(RemoteAuthError) -> [String: JSONValue] in
            let response = try await send(request)
            if response.statusCode == 401,
                AuthorizedHTTPClient.userInfoRefusesToken(challengeHeader: response.header("WWW-Authenticate"))
            {
                throw RemoteAuthError(.accessTokenRejected, statusCode: 401)
            }
            do throws(RemoteAuthError) {
                return try HTTPExchange.jsonObject(from: response)
            } catch  where error.serverCode == "invalid_token" {
                throw RemoteAuthError(.accessTokenRejected, statusCode: error.statusCode)
            }
        }
        guard let subject = object["sub"]?.stringValue, !subject.isEmpty else {
            throw RemoteAuthError(.invalidResponse("userinfo has no sub"))
        }
        let profile = object.stringMembers(excluding: ["sub", "name", "email"])
        return ManagedUser(
            subject: subject,
            name: object["name"]?.stringValue,
            email: object["email"]?.stringValue,
            profile: profile
        )
    }

    // MARK: Plumbing

    /// Sends a request through the transport after checking its scheme.
    func send(_ request: URLRequest) async throws(RemoteAuthError) -> OAuth2HTTPResponse {
        guard let url = request.url else { throw RemoteAuthError(.unsupported("a request without a URL")) }
        try HTTPExchange.checkScheme(of: url, allowsInsecureHTTP: configuration.allowsInsecureHTTP)
        return try await transport.send(request, maximumResponseSize: configuration.maximumResponseSize)
    }

    /// Runs `body` with the secrets a request carries (token, code, password, client secret)
    /// registered for exact redaction, and scrubs them from any error it throws, however short:
    /// a server that echoes one in its error description cannot put it into an error.
    func withSecrets<Value>(
        of fields: [(String, String)],
        client: OAuth2Client? = nil,
        _ body: () async throws(RemoteAuthError) -> Value
    ) async throws(RemoteAuthError) -> Value {
        let notSecret: Set<String> = ["grant_type", "scope", "token_type_hint", "redirect_uri", "client_id"]
        var secrets = fields.filter { !notSecret.contains($0.0) }.map(\.1)
        switch (client ?? configuration.client).authentication {
        case .none: break
        case .clientSecretBasic(let secret), .clientSecretPost(let secret): secrets.append(secret)
        }
        return try await withSecretsRegistered(secrets, body)
    }

    /// POSTs `fields` to the token endpoint and reads the token answer.
    func requestTokens(
        fields: [(String, String)],
        expectedNonce: String?,
        isRefresh: Bool = false
    ) async throws(RemoteAuthError)
        -> IssuedTokens
    {
        try await withSecrets(of: fields) { () throws(RemoteAuthError) in
            let request = HTTPExchange.formPost(
                to: configuration.endpoints.token,
                fields: fields,
                client: configuration.client,
                timeout: configuration.requestTimeout
            )
            let sentAt = clock.now
            let response = try await send(request)
            if isRefresh, response.statusCode == 400,
                response.body.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) })
            {
                // A bare 400 to a refresh: the grant refused (see `refresh(_:scope:)`).
                throw RemoteAuthError(.server(code: "invalid_grant"), statusCode: 400)
            }
            let serverClockOffset = ServerClock.offset(
                dateHeader: response.header("Date"),
                sentAt: sentAt,
                receivedAt: clock.now,
                limit: Self.maximumServerClockOffset
            )
            let object = try HTTPExchange.jsonObject(from: response)
            var tokens = try tokens(
                from: object,
                status: response.statusCode,
                expectedNonce: expectedNonce,
                isRefresh: isRefresh,
                serverClockOffset: serverClockOffset
            )
            if let idToken = tokens.idToken, let signatureVerifier {
                do throws(RemoteAuthError) {
                    try await verifySignature(of: idToken, with: signatureVerifier)
                } catch  where isRefresh && !Self.isSignatureVerdict(error) {
                    // The old refresh token is spent: keep what the server issued, without the
                    // claims that could not be checked. The subject stays, unverified, for one use
                    // only: refusing another user's tokens (a claim used to say no).
                    tokens.unverifiedSubject = tokens.user?.identifier
                    tokens.idToken = nil
                    tokens.user = nil
                } catch {
                    var failure = error
                    failure.statusCode = failure.statusCode ?? response.statusCode
                    throw failure
                }
            }
            return tokens
        }
    }

    /// Whether `error` says the ID token is not the issuer's (its signature, checked against the
    /// keys fetched for it, or its form), rather than that it cannot be checked now (the keys
    /// unreachable or unknown yet, the key set's URL failing in any way, an algorithm this client
    /// does not verify).
    static func isSignatureVerdict(_ error: RemoteAuthError) -> Bool {
        guard case .invalidIDToken(let reason) = error.reason else { return false }
        switch reason {
        case .invalidSignature, .malformed: return true
        default: return false
        }
    }

    /// Checks `idToken`'s signature with `verifier`.
    private func verifySignature(
        of idToken: String,
        with verifier: any IDTokenSignatureVerifier
    ) async throws(RemoteAuthError) {
        let signed: JSONWebSignature
        do throws(IDTokenValidationError) {
            signed = try JSONWebSignature(compact: idToken)
        } catch {
            throw RemoteAuthError(.invalidIDToken(error))
        }
        try await verifier.verifySignature(of: signed)
    }

    /// The largest difference between the server's clock and this device's that a token answer's
    /// `Date` header is believed to show: a day. Within it, an ID token's time claims (`exp`,
    /// `iat`, `nbf`) are checked on the server's clock, so a device clock minutes or hours
    /// off does not fail a sign-in; beyond it, the header is taken for a mistake and the device's
    /// clock is used, as without a header.
    public static let maximumServerClockOffset: TimeInterval = 86_400

    /// Reads a token answer (RFC 6749 §5.1), field by field; the ID token's time claims are checked
    /// on the server's clock when `serverClockOffset` says how far it is from this device's.
    func tokens(
        from object: [String: JSONValue],
        status: Int,
        expectedNonce: String?,
        isRefresh: Bool = false,
        serverClockOffset: TimeInterval? = nil
    ) throws(RemoteAuthError)
        -> IssuedTokens
    {
        func invalid(_ what: String) -> RemoteAuthError {
            RemoteAuthError(.invalidResponse(what), statusCode: status)
        }
        guard let accessToken = object["access_token"]?.stringValue, !accessToken.isEmpty else {
            throw invalid("access_token is missing or not a string")
        }
        guard let tokenType = object["token_type"]?.stringValue else {
            throw invalid("token_type is missing or not a string")
        }
        guard tokenType.lowercased() == "bearer" else {
            throw RemoteAuthError(
                .unsupportedTokenType(RemoteAuthError.sanitized(String(tokenType.prefix(32)))),
                statusCode: status
            )
        }
        var expiresIn: TimeInterval?
        if let value = object["expires_in"], value != .null {
            guard let seconds = value.numberValue, seconds.isFinite else {
                throw invalid("expires_in is not a number")
            }
            guard seconds >= 0, seconds <= configuration.maximumTokenLifetime else {
                throw invalid("expires_in is out of range")
            }
            expiresIn = seconds
        }
        var refreshToken: String?
        if let value = object["refresh_token"], value != .null {
            guard let token = value.stringValue, !token.isEmpty else {
                throw invalid("refresh_token is not a string")
            }
            refreshToken = token
        }
        var scope: [String]?
        if let value = object["scope"], value != .null {
            guard let text = value.stringValue else { throw invalid("scope is not a string") }
            scope = text.split(separator: " ").map(String.init)
        }
        var idToken: String?
        var user: ManagedUser?
        if let value = object["id_token"], value != .null {
            guard let token = value.stringValue else { throw invalid("id_token is not a string") }
            do {
                let claims = try IDTokenClaims(parsing: token)
                try claims.validate(
                    issuer: configuration.issuer ?? claims.issuer,
                    clientID: configuration.client.id,
                    expectedNonce: expectedNonce,
                    now: clock.now.addingTimeInterval(serverClockOffset ?? 0),
                    leeway: configuration.clockLeeway,
                    checksTimeClaims: !isRefresh
                )
                idToken = token
                user = claims.user
            } catch {
                throw RemoteAuthError(.invalidIDToken(error), statusCode: status)
            }
        }
        return IssuedTokens(
            accessToken: accessToken,
            refreshToken: refreshToken,
            idToken: idToken,
            tokenType: tokenType,
            expiresIn: expiresIn,
            scope: scope,
            user: user,
            serverClockOffset: serverClockOffset
        )
    }
}

/// Runs `body` with `secrets` registered for exact redaction, and scrubs them from any error it
/// throws, however short: a server that echoes one in its error description cannot put it into
/// an error.
func withSecretsRegistered<Value>(
    _ secrets: [String],
    _ body: () async throws(RemoteAuthError) -> Value
) async throws(RemoteAuthError) -> Value {
    let registrations = secrets.map(SecretRedactor.register)
    defer {
        for registration in registrations {
            registration.cancel()
        }
    }
    do {
        return try await SecretRedactor.$requestSecrets.withValue(secrets) { try await body() }
    } catch let error as RemoteAuthError {
        throw error
    } catch {
        // `withValue` rethrows untyped; the body throws only `RemoteAuthError`.
        throw RemoteAuthError(.invalidResponse("unexpected error"))
    }
}
