import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

@testable import AuthSessionOAuth2

/// Each hole the adversarial review of the client found, as a test that failed before its fix.
@Suite struct ReviewFindingTests {

    /// A refresh's new tokens survive a device clock minutes off: the old refresh token is spent.
    @Test func refreshKeepsTokensDespiteClockSkew() async throws {
        let clock = ManualClock()
        let serverNow = clock.now.addingTimeInterval(300)  // the device is 5 minutes behind
        let idToken = Fixture.idToken(Fixture.claims(now: serverNow))
        let transport = StubTransport(Fixture.json(200, Fixture.tokenJSON(extra: #", "id_token": "\#(idToken)""#)))
        let refreshed = try await Fixture.service(transport, clock: clock).refresh(Fixture.refreshToken, scope: nil)
        #expect(refreshed.idToken == idToken)

        let grant = AuthGrant.password(username: "u", password: "p")
        let signIn = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport, clock: clock).obtainTokens(with: grant)
        }
        #expect(signIn?.kind == .misconfiguration, "a sign-in still checks time: nothing is spent by refusing it")

        let wrongAudience = Fixture.idToken(Fixture.claims(now: serverNow, overrides: ["aud": "someone-else"]))
        transport.answer { _ in
            .success(Fixture.json(200, Fixture.tokenJSON(extra: #", "id_token": "\#(wrongAudience)""#)))
        }
        await #expect(throws: RemoteAuthError.self, "identity claims are still checked on refresh") {
            try await Fixture.service(transport, clock: clock).refresh(Fixture.refreshToken, scope: nil)
        }
    }

    @Test func inactiveTokenNearItsExpiryIsNotRevoked() async throws {
        let clock = ManualClock()
        let transport = StubTransport(Fixture.json(200, #"{"active": false}"#))
        let service = Fixture.service(transport, clock: clock)
        func session(expiringIn seconds: TimeInterval) -> ManagedSession {
            ManagedSession(
                accessToken: Fixture.accessToken,
                expiresAt: clock.now.timeIntervalSince1970 + seconds,
                issuedAt: clock.now.timeIntervalSince1970,
                user: ManagedUser(identifier: "u")
            )
        }
        #expect(try await service.credentialState(for: session(expiringIn: 20)) == .authorized)
        #expect(try await service.credentialState(for: session(expiringIn: 59)) == .authorized)
        #expect(try await service.credentialState(for: session(expiringIn: 600)) == .revoked)
    }

    @Test func shortSecretsAreScrubbedFromErrors() async throws {
        let transport = StubTransport(
            Fixture.json(400, #"{"error": "invalid_grant", "error_description": "wrong password hunter2 for alice"}"#)
        )
        let grant = AuthGrant.password(username: "alice", password: "hunter2")
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).obtainTokens(with: grant)
        }
        #expect(
            error?.serverDescription == "wrong password <redacted> for <redacted>",
            "the user name is personal data"
        )

        var configuration = Fixture.configuration
        configuration.client = OAuth2Client(id: "c", authentication: .clientSecretPost(secret: "s3cr3t!"))
        transport.answer { _ in
            .success(
                Fixture.json(
                    401,
                    #"{"error": "invalid_client", "error_description": "client secret 's3cr3t!' rejected"}"#
                )
            )
        }
        let clientError = await #expect(throws: RemoteAuthError.self) {
            try await OAuth2Service(configuration: configuration, transport: transport).obtainTokens(
                with: .clientCredentials
            )
        }
        #expect(clientError.map { "\($0)" }?.contains("s3cr3t!") == false)
    }

    @Test func revokingADeadTokenIsNotAnError() async throws {
        for body in [
            #"{"error": "invalid_token", "error_description": "Token expired or revoked"}"#,
            #"{"error": "invalid_grant"}"#,
        ] {
            let transport = StubTransport(Fixture.json(400, body))
            try await Fixture.service(transport).revoke(Fixture.refreshToken, kind: .refreshToken)
        }
        let transport = StubTransport(Fixture.json(503, #"{"error": "temporarily_unavailable"}"#))
        await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).revoke(Fixture.refreshToken, kind: .refreshToken)
        }
    }

    @Test func noPublicTypeRendersASecret() {
        let secret = "sup3r-s3cret-value"
        let values: [Any] = [
            OAuth2Client.Authentication.clientSecretPost(secret: secret),
            OAuth2Client.Authentication.clientSecretBasic(secret: secret),
            OAuth2HTTPResponse(statusCode: 200, headers: ["Set-Cookie": "sid=\(secret)"], body: Data(secret.utf8)),
        ]
        // Texts a third-party service puts in an error go through the redactor's shapes.
        let shaped = "tok_live_9f8e7d6c5b4a39281706f5e4d3c2b1a0"
        for error in [
            RemoteAuthError(.server(code: shaped), statusCode: 400),
            RemoteAuthError(.invalidResponse("refresh_token=\(shaped)")),
        ] {
            var dumped = ""
            dump(error, to: &dumped)
            for text in ["\(error)", String(reflecting: error), dumped] {
                #expect(!text.contains(shaped), "\(text)")
            }
        }
        for value in values {
            var dumped = ""
            dump(value, to: &dumped)
            for text in ["\(value)", String(reflecting: value), dumped] {
                #expect(!text.contains(secret), "\(text)")
            }
        }
        var error = RemoteAuthError(.httpStatus(500), statusCode: 500)
        error.serverDescription = "access_token=\(secret)"
        #expect(error.serverDescription?.contains(secret) == false, "a description set later is cleaned too")
        let bidi = RemoteAuthError(.httpStatus(500), serverDescription: "evil\u{202E}txt\u{2028}next")
        #expect(bidi.serverDescription == "evil txt next")
    }

    @Test func hostileTimeoutsAreClamped() {
        let endpoints = OAuth2Endpoints(token: URL(string: "https://a.example/token")!)
        for (timeout, expected) in [
            (TimeInterval.infinity, 30.0), (.nan, 30), (-1, 30), (0, 30), (1e20, 86_400), (12, 12),
        ] {
            let configuration = OAuth2Configuration(
                issuer: nil,
                endpoints: endpoints,
                client: OAuth2Client(id: "c"),
                requestTimeout: timeout
            )
            #expect(configuration.requestTimeout == expected, "\(timeout)")
        }
        #expect(URLSessionTransport.clampedTimeout(.infinity) == 60)
    }

    /// A device authorization an app made up itself, as the public initializer allows.
    private func madeUpAuthorization(
        expiringIn seconds: TimeInterval,
        interval: TimeInterval,
        on clock: ManualClock
    )
        -> DeviceAuthorization
    {
        DeviceAuthorization(
            deviceCode: "dc-000000000",
            userCode: "ABCD",
            verificationURI: URL(string: "https://a.example/device")!,
            expiresAt: clock.now.addingTimeInterval(seconds),
            interval: interval
        )
    }

    /// A made-up authorization with a zero interval must not poll in a loop: once a second, the
    /// rule of `DeviceAuthorization.interval`.
    @Test func zeroIntervalPollsOnceASecond() async throws {
        let clock = ManualClock()
        let polls = ConcurrencySafeContainer(0)
        let transport = StubTransport { _ in
            polls.withLock { $0 += 1 }
            return .success(Fixture.json(400, #"{"error": "authorization_pending"}"#))
        }
        let service = Fixture.service(transport, clock: clock)
        let authorization = madeUpAuthorization(expiringIn: 600, interval: 0, on: clock)
        let poll = Task { try await service.pollDeviceAuthorization(authorization) }
        try await clock.waitForSleepers(1)
        #expect(clock.advanceToNextDeadline() == 1)
        try await clock.waitForSleepers(1)
        #expect(polls.withLock { $0 } == 1)
        poll.cancel()
        _ = await poll.result
    }

    /// After `slow_down`, an outage backs off from the slowed interval, never below it.
    @Test func outageNeverLowersTheSlowedInterval() async throws {
        let clock = ManualClock()
        let answers = ConcurrencySafeContainer([
            Fixture.json(400, #"{"error": "slow_down"}"#), OAuth2HTTPResponse(statusCode: 503),
        ])
        let transport = StubTransport { _ in
            .success(
                answers.withLock {
                    $0.isEmpty ? Fixture.json(400, #"{"error": "authorization_pending"}"#) : $0.removeFirst()
                }
            )
        }
        let service = Fixture.service(transport, clock: clock)
        let authorization = madeUpAuthorization(expiringIn: 3_600, interval: 55, on: clock)
        let poll = Task { try await service.pollDeviceAuthorization(authorization) }
        var waits: [TimeInterval] = []
        for _ in 0..<3 {
            try await clock.waitForSleepers(1)
            waits.append(clock.advanceToNextDeadline() ?? -1)
        }
        #expect(waits == [55, 60, 60], "slow_down: 60; then a 503 may not lower it")
        poll.cancel()
        _ = await poll.result
    }

    @Test func discoverySkipsBrokenDocumentsAndIsNeverTerminal() async throws {
        let good = #"{"issuer": "https://a.example/o", "token_endpoint": "https://a.example/o/token/"}"#
        let transport = StubTransport { request in
            request.url.absoluteString.hasSuffix("openid-configuration")
                ? .success(Fixture.json(200, good))
                : .success(
                    OAuth2HTTPResponse(
                        statusCode: 403,
                        headers: ["Content-Type": "text/html"],
                        body: Data("<html>".utf8)
                    )
                )
        }
        let metadata = try await OAuth2ServerMetadata.discover(
            issuer: URL(string: "https://a.example/o")!,
            transport: transport
        )
        #expect(metadata.tokenEndpoint.absoluteString == "https://a.example/o/token/")

        transport.answer { _ in .success(Fixture.json(401, #"{"error": "invalid_token"}"#)) }
        let error = await #expect(throws: RemoteAuthError.self) {
            try await OAuth2ServerMetadata.discover(issuer: URL(string: "https://a.example/o")!, transport: transport)
        }
        #expect(error?.kind == .misconfiguration)
    }

    // MARK: The second review, of the fixes

    /// Scrubbing a short user name or secret never rewrites the error code that decides what the
    /// caller does.
    @Test func scrubbingLeavesTheErrorCodeAlone() async throws {
        let transport = StubTransport(
            Fixture.json(400, #"{"error": "invalid_grant", "error_description": "no user ali"}"#)
        )
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).obtainTokens(with: .password(username: "ali", password: "pw1"))
        }
        #expect(error?.serverCode == "invalid_grant")
        #expect(error?.kind == .terminal)
        #expect(error?.serverDescription == "no user <redacted>")

        var configuration = Fixture.configuration
        configuration.client = OAuth2Client(id: "c", authentication: .clientSecretBasic(secret: "grant"))
        let refresh = await #expect(throws: RemoteAuthError.self) {
            try await OAuth2Service(configuration: configuration, transport: transport).refresh(
                "rt-123456789",
                scope: nil
            )
        }
        #expect(refresh?.serverCode == "invalid_grant", "a spent token stays terminal whatever the secret")
        #expect(refresh?.kind == .terminal)
    }

    /// An error code is an identifier, but a refresh token fits in its 64 characters: a server
    /// that echoes the presented token (or a registered one) as its code gets it replaced, and
    /// the status still decides the kind. Standard codes are never touched.
    @Test(arguments: [
        "rt-9xahAK6j464fSZ9NTuVO1QdSQcnQScnv0XDy_d82Bi4",
        "bad_token:rt-9xahAK6j464fSZ9NTuVO1QdSQcnQScnv0XDy_d82Bi4",
    ])
    func anErrorCodeCarryingTheTokenIsReplaced(code: String) async throws {
        let transport = StubTransport(Fixture.json(400, #"{"error": "\#(code)"}"#))
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).refresh("rt-9xahAK6j464fSZ9NTuVO1QdSQcnQScnv0XDy_d82Bi4", scope: nil)
        }
        #expect(error?.serverCode == "invalid_error_code")
        #expect(error?.kind == .misconfiguration, "an unknown code on a 400 is never retried")
        let rendered = "\(String(describing: error)) \(error?.reason as Any) \(error?.serverCode ?? "")"
        #expect(!rendered.contains("9xahAK6j464fSZ9NTuVO1QdSQcnQScnv0XDy_d82Bi4"))
    }

    @Test func anUnknownHarmlessErrorCodeIsKept() async throws {
        let transport = StubTransport(Fixture.json(400, #"{"error": "mfa_required"}"#))
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).refresh("rt-9xahAK6j464fSZ9NTuVO1QdSQcnQScnv0XDy_d82Bi4", scope: nil)
        }
        #expect(error?.serverCode == "mfa_required")
    }

    /// Secrets are scrubbed from the raw text, before cleaning and shortening could split them.
    @Test(arguments: [
        "hunter2", "ab\u{1F469}\u{200D}\u{1F4BB}cd", "correct\u{1F469}\u{200D}\u{1F4BB}horse", "tab\tpass",
        "pass\u{2028}word99",
    ])
    func secretsAreScrubbedBeforeCleaning(password: String) async throws {
        let padding = String(repeating: "x", count: 196)
        let description = "\(padding) \(password) was wrong; also \(password)"
        let body = try JSONSerialization.data(withJSONObject: [
            "error": "invalid_grant", "error_description": description,
        ])
        let transport = StubTransport(
            OAuth2HTTPResponse(statusCode: 400, headers: ["Content-Type": "application/json"], body: body)
        )
        let error = await #expect(throws: RemoteAuthError.self) {
            try await Fixture.service(transport).obtainTokens(with: .password(username: "someone", password: password))
        }
        let rendered = error.map { "\($0)" } ?? ""
        #expect(!rendered.isEmpty)
        // No run of 4 or more of the password's characters survives, even cut or cleaned.
        let scalars = Array(password.unicodeScalars)
        for start in 0..<max(0, scalars.count - 3) {
            let piece = String(String.UnicodeScalarView(scalars[start..<start + 4]))
            #expect(!rendered.contains(piece), "\(rendered)")
        }
    }

    @Test(arguments: [
        (520, true), (524, true), (599, true), (501, false), (503, false), (505, false), (521, false), (522, false),
    ])
    func gatewayStatuses(status: Int, isUncertain: Bool) {
        #expect(RemoteAuthError(.httpStatus(status), statusCode: status).isOutcomeUncertain == isUncertain)
    }

    @Test func aRejectedAccessTokenIsNotRetriedAsItIs() {
        let error = RemoteAuthError(.accessTokenRejected, statusCode: 401)
        #expect(error.kind == .transient)
        #expect(!error.isRetryable, "the same token would be refused again: refresh first")
    }

    @Test func discoveryDoesNotDropADocumentThatTimedOut() async throws {
        let good = #"{"issuer": "https://a.example/o", "token_endpoint": "https://a.example/o/token/"}"#
        let transport = StubTransport { request in
            request.url.absoluteString.hasSuffix("openid-configuration")
                ? .success(Fixture.json(200, good)) : .failure(RemoteAuthError(.timedOut))
        }
        let error = await #expect(throws: RemoteAuthError.self) {
            try await OAuth2ServerMetadata.discover(issuer: URL(string: "https://a.example/o")!, transport: transport)
        }
        #expect(error?.reason == .timedOut)
    }
}
