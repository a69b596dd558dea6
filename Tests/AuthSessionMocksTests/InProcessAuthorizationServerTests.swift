import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

/// The in-process authorization server rotates, detects reuse, fails on command, waits on its
/// clock, and holds refreshes, as the session manager's tests need.
@Suite("InProcessAuthorizationServer")
struct InProcessAuthorizationServerTests {

    private static let ada = ManagedUser(identifier: "ada", name: "Ada Lovelace", email: "ada@example.com")
    private static let password = "correct horse"

    /// A server with Ada registered.
    private static func makeServer(
        clock: ManualClock = ManualClock(),
        rotatesRefreshTokens: Bool = true,
        detectsReuse: Bool = true,
        latency: TimeInterval = 0
    ) -> InProcessAuthorizationServer {
        let server = InProcessAuthorizationServer(
            clock: clock,
            accessTokenLifetime: 600,
            rotatesRefreshTokens: rotatesRefreshTokens,
            detectsReuse: detectsReuse,
            latency: latency
        )
        server.register(ada, password: password)
        return server
    }

    private static func signIn(_ server: InProcessAuthorizationServer) async throws -> IssuedTokens {
        try await server.obtainTokens(with: .password(username: ada.identifier, password: password))
    }

    private static func session(_ tokens: IssuedTokens, refreshToken: String? = nil) -> ManagedSession {
        ManagedSession(
            accessToken: tokens.accessToken,
            refreshToken: refreshToken ?? tokens.refreshToken,
            expiresAt: 0,
            issuedAt: 0,
            user: ManagedUser(identifier: ada.identifier)
        )
    }

    /// The error `body` throws; fails the test if it throws none.
    private static func error<T>(
        _ body: () async throws -> T,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async -> RemoteAuthError? {
        do {
            _ = try await body()
        } catch let error as RemoteAuthError {
            return error
        } catch {
            Issue.record("expected a RemoteAuthError, got \(error)", sourceLocation: sourceLocation)
            return nil
        }
        Issue.record("expected a RemoteAuthError", sourceLocation: sourceLocation)
        return nil
    }

    // MARK: - Sign-in

    @Test("a password sign-in issues opaque Bearer tokens of a new family, with the user")
    func passwordSignIn() async throws {
        let server = Self.makeServer()
        let tokens = try await Self.signIn(server)
        #expect(tokens.accessToken.hasPrefix("at-") && tokens.accessToken.count >= 32)
        let refreshToken = try #require(tokens.refreshToken)
        #expect(refreshToken.hasPrefix("rt-") && refreshToken.count >= 32)
        #expect(tokens.idToken == nil)
        #expect(tokens.tokenType == "Bearer")
        #expect(tokens.expiresIn == 600)
        #expect(tokens.user == Self.ada)
        #expect(server.isAccessTokenValid(tokens.accessToken))
        #expect(server.liveFamilyCount == 1)
        #expect(server.obtainCount == 1)
    }

    @Test("wrong passwords, unknown users and used codes are terminal invalid_grant; other grants misconfiguration")
    func rejectedGrants() async throws {
        let server = Self.makeServer()
        for grant in [
            AuthGrant.password(username: "ada", password: "wrong"),
            .password(username: "nobody", password: Self.password),
            .authorizationCode("code-unknown", codeVerifier: nil, redirectURI: URL(string: "app:/cb")!),
        ] {
            let error = await Self.error { try await server.obtainTokens(with: grant) }
            #expect(error?.serverCode == "invalid_grant")
            #expect(error?.statusCode == 400)
            #expect(error?.kind == .terminal)
        }
        let unsupported = await Self.error {
            try await server.obtainTokens(with: .clientCredentials)
        }
        #expect(unsupported?.serverCode == "unsupported_grant_type")
        #expect(unsupported?.kind == .misconfiguration)
        #expect(server.obtainCount == 4)
        #expect(server.liveFamilyCount == 0)
    }

    @Test("name and email come with the first issue for a user only, and an authorization code works once")
    func profileOnFirstIssueOnly() async throws {
        let server = Self.makeServer()
        let grace = ManagedUser(identifier: "grace", name: "Grace Hopper", email: "grace@example.com")
        let code = server.issueAuthorizationCode(for: grace)
        let grant = AuthGrant.authorizationCode(code, codeVerifier: "v", redirectURI: URL(string: "app:/cb")!)
        let first = try await server.obtainTokens(with: grant)
        #expect(first.user == grace)

        let reused = await Self.error { try await server.obtainTokens(with: grant) }
        #expect(reused?.serverCode == "invalid_grant")
        #expect(reused?.kind == .terminal)

        let second = try await server.obtainTokens(
            with: .authorizationCode(
                server.issueAuthorizationCode(for: grace),
                codeVerifier: "v",
                redirectURI: URL(string: "app:/cb")!
            )
        )
        #expect(second.user == ManagedUser(identifier: "grace"))

        #expect(try await Self.signIn(server).user == Self.ada)
        #expect(try await Self.signIn(server).user == ManagedUser(identifier: "ada"))
        #expect(server.liveFamilyCount == 4)
    }

    // MARK: - Refresh

    @Test("a rotating refresh issues new distinct tokens, kills the old access token, and carries no user")
    func rotation() async throws {
        let server = Self.makeServer()
        let first = try await Self.signIn(server)
        let firstRefreshToken = try #require(first.refreshToken)
        let second = try await server.refresh(firstRefreshToken, scope: nil)
        let secondRefreshToken = try #require(second.refreshToken)
        #expect(second.accessToken != first.accessToken)
        #expect(secondRefreshToken != firstRefreshToken)
        #expect(second.accessToken.hasPrefix("at-") && secondRefreshToken.hasPrefix("rt-"))
        #expect(second.user == nil)
        #expect(second.expiresIn == 600)
        #expect(!server.isAccessTokenValid(first.accessToken))
        #expect(server.isAccessTokenValid(second.accessToken))

        let third = try await server.refresh(secondRefreshToken, scope: ["read"])
        #expect(third.scope == ["read"])
        #expect(server.presentedRefreshTokens == [firstRefreshToken, secondRefreshToken])
        #expect(server.refreshCount == 2)
        #expect(server.duplicatePresentations.isEmpty)
        #expect(server.liveFamilyCount == 1)
    }

    @Test("a spent refresh token presented again revokes the whole family and is terminal invalid_grant")
    func reuseRevokesTheFamily() async throws {
        let server = Self.makeServer()
        let other = try await Self.signIn(server)
        let first = try await Self.signIn(server)
        let spent = try #require(first.refreshToken)
        let second = try await server.refresh(spent, scope: nil)

        let error = await Self.error { try await server.refresh(spent, scope: nil) }
        #expect(error?.serverCode == "invalid_grant")
        #expect(error?.statusCode == 400)
        #expect(error?.kind == .terminal)
        #expect(error?.isOutcomeUncertain == false)

        #expect(!server.isAccessTokenValid(second.accessToken))
        let descendant = await Self.error {
            try await server.refresh(second.refreshToken!, scope: nil)
        }
        #expect(descendant?.kind == .terminal)
        #expect(server.duplicatePresentations == [spent])
        // The other sign-in's family is untouched.
        #expect(server.liveFamilyCount == 1)
        #expect(server.isAccessTokenValid(other.accessToken))
    }

    @Test("without reuse detection a spent token is refused but its family lives on")
    func reuseWithoutDetection() async throws {
        let server = Self.makeServer(detectsReuse: false)
        let first = try await Self.signIn(server)
        let second = try await server.refresh(first.refreshToken!, scope: nil)
        let error = await Self.error {
            try await server.refresh(first.refreshToken!, scope: nil)
        }
        #expect(error?.serverCode == "invalid_grant")
        #expect(error?.kind == .terminal)
        #expect(server.isAccessTokenValid(second.accessToken))
        _ = try await server.refresh(second.refreshToken!, scope: nil)
        #expect(server.liveFamilyCount == 1)
    }

    @Test("an unknown refresh token is terminal invalid_grant")
    func unknownRefreshToken() async throws {
        let server = Self.makeServer()
        let error = await Self.error {
            try await server.refresh("rt-made-up-made-up-made-up-made-up-made-up", scope: nil)
        }
        #expect(error?.serverCode == "invalid_grant")
        #expect(error?.kind == .terminal)
    }

    @Test("a server that does not rotate keeps the refresh token and answers without one")
    func nonRotating() async throws {
        let server = Self.makeServer(rotatesRefreshTokens: false)
        let first = try await Self.signIn(server)
        let refreshToken = try #require(first.refreshToken)
        let second = try await server.refresh(refreshToken, scope: nil)
        #expect(second.refreshToken == nil)
        #expect(second.accessToken != first.accessToken)
        #expect(!server.isAccessTokenValid(first.accessToken))
        let third = try await server.refresh(refreshToken, scope: nil)
        #expect(server.isAccessTokenValid(third.accessToken))
        #expect(!server.isAccessTokenValid(second.accessToken))
        #expect(server.liveFamilyCount == 1)
        #expect(server.duplicatePresentations == [refreshToken])
    }

    @Test("access tokens expire by the injected clock")
    func accessTokenExpiry() async throws {
        let clock = ManualClock()
        let server = Self.makeServer(clock: clock)
        let tokens = try await Self.signIn(server)
        clock.advance(by: 599)
        #expect(server.isAccessTokenValid(tokens.accessToken))
        clock.advance(by: 1)
        #expect(!server.isAccessTokenValid(tokens.accessToken))

        server.accessTokenLifetime = 30
        let refreshed = try await server.refresh(tokens.refreshToken!, scope: nil)
        #expect(refreshed.expiresIn == 30)
        clock.advance(by: 30)
        #expect(!server.isAccessTokenValid(refreshed.accessToken))
    }

    // MARK: - Faults

    @Test("unavailable: HTTP 503, transient, outcome certain, and the token still works")
    func unavailableFault() async throws {
        let server = Self.makeServer()
        let tokens = try await Self.signIn(server)
        server.enqueueRefreshFaults([.unavailable])
        let error = await Self.error {
            try await server.refresh(tokens.refreshToken!, scope: nil)
        }
        #expect(error?.statusCode == 503)
        #expect(error?.kind == .transient)
        #expect(error?.isRetryable == true)
        #expect(error?.isOutcomeUncertain == false)
        #expect(server.isAccessTokenValid(tokens.accessToken))
        _ = try await server.refresh(tokens.refreshToken!, scope: nil)
        #expect(server.refreshCount == 2)
        #expect(server.liveFamilyCount == 1)
    }

    @Test("answerLost: timed out, uncertain, and the server rotated anyway")
    func answerLostFault() async throws {
        let server = Self.makeServer()
        let tokens = try await Self.signIn(server)
        server.enqueueRefreshFaults([.answerLost])
        let error = await Self.error {
            try await server.refresh(tokens.refreshToken!, scope: nil)
        }
        #expect(error?.reason == .timedOut)
        #expect(error?.kind == .transient)
        #expect(error?.isOutcomeUncertain == true)
        // Rotated: the old access token died, and the refresh token is spent.
        #expect(!server.isAccessTokenValid(tokens.accessToken))
        let retry = await Self.error {
            try await server.refresh(tokens.refreshToken!, scope: nil)
        }
        #expect(retry?.serverCode == "invalid_grant")
        #expect(server.liveFamilyCount == 0)
    }

    @Test(
        "scripted refresh faults are classified as a real server's answers, then the queue drains",
        arguments: [
            (InProcessAuthorizationServer.Fault.invalidGrant, RemoteAuthError.Kind.terminal, 400, "invalid_grant"),
            (.invalidClient, .misconfiguration, 401, "invalid_client"),
            (.tooManyRequests(retryAfter: 30), .transient, 429, nil),
        ] as [(InProcessAuthorizationServer.Fault, RemoteAuthError.Kind, Int, String?)]
    )
    func refreshFaults(
        fault: InProcessAuthorizationServer.Fault,
        kind: RemoteAuthError.Kind,
        status: Int,
        code: String?
    ) async throws {
        let server = Self.makeServer()
        let tokens = try await Self.signIn(server)
        server.enqueueRefreshFaults([fault])
        let error = await Self.error {
            try await server.refresh(tokens.refreshToken!, scope: nil)
        }
        #expect(error?.kind == kind)
        #expect(error?.statusCode == status)
        #expect(error?.serverCode == code)
        #expect(error?.isOutcomeUncertain == false)
        if case .tooManyRequests = fault {
            #expect(error?.retryAfter == .seconds(30))
        }
        // The server did not act: the same token refreshes now.
        #expect(server.isAccessTokenValid(tokens.accessToken))
        _ = try await server.refresh(tokens.refreshToken!, scope: nil)
    }

    @Test("obtain faults: unavailable issues nothing; a lost answer still spends the one-time profile")
    func obtainFaults() async throws {
        let server = Self.makeServer()
        server.enqueueObtainFaults([.unavailable, .answerLost])
        let unavailable = await Self.error { try await Self.signIn(server) }
        #expect(unavailable?.kind == .transient)
        #expect(unavailable?.isOutcomeUncertain == false)
        #expect(server.liveFamilyCount == 0)

        let lost = await Self.error { try await Self.signIn(server) }
        #expect(lost?.reason == .timedOut)
        #expect(lost?.isOutcomeUncertain == true)
        #expect(server.liveFamilyCount == 1)

        #expect(try await Self.signIn(server).user == ManagedUser(identifier: "ada"))
        #expect(server.obtainCount == 3)
    }

    @Test("a credential-state fault is a transient network error whose outcome is certain")
    func credentialStateFault() async throws {
        let server = Self.makeServer()
        let tokens = try await Self.signIn(server)
        server.enqueueCredentialStateFaults([.unavailable])
        let error = await Self.error {
            try await server.credentialState(for: Self.session(tokens))
        }
        #expect(error?.reason == .network(code: -1009))
        #expect(error?.kind == .transient)
        #expect(error?.isOutcomeUncertain == false)
        #expect(try await server.credentialState(for: Self.session(tokens)) == .authorized)
        #expect(server.credentialStateCount == 2)
    }

    // MARK: - Latency

    @Test("a refresh waits its latency on the clock before the server sees it")
    func latencyWaitsOnTheClock() async throws {
        let clock = ManualClock()
        let server = Self.makeServer(clock: clock, latency: 2)
        let tokens = try await Self.signIn(server)
        let refresh = Task { try await server.refresh(tokens.refreshToken!, scope: nil) }
        try await clock.waitForSleepers(1)
        #expect(clock.nextDeadline == clock.now.addingTimeInterval(2))
        #expect(server.refreshCount == 0)
        clock.advance(by: 2)
        let refreshed = try await refresh.value
        #expect(server.refreshCount == 1)
        #expect(server.isAccessTokenValid(refreshed.accessToken))
    }

    @Test("a refresh cancelled during its latency throws cancelled and never reaches the server")
    func cancellationDuringLatency() async throws {
        let clock = ManualClock()
        let server = Self.makeServer(clock: clock, latency: 2)
        let tokens = try await Self.signIn(server)
        let refresh = Task { try await server.refresh(tokens.refreshToken!, scope: nil) }
        try await clock.waitForSleepers(1)
        refresh.cancel()
        let error = await Self.error { try await refresh.value }
        #expect(error?.reason == .cancelled)
        #expect(server.refreshCount == 0)
        #expect(server.isAccessTokenValid(tokens.accessToken))
    }

    // MARK: - Holding

    @Test("held refreshes are recorded, wait for release, then race: one wins, the reuse revokes the family")
    func holdingAndRelease() async throws {
        let server = Self.makeServer()
        let tokens = try await Self.signIn(server)
        let refreshToken = try #require(tokens.refreshToken)
        server.holdsRefreshes = true
        let refreshes = (0..<2).map { _ in
            Task { try await server.refresh(refreshToken, scope: nil) }
        }
        try await server.waitForHeldRefreshes(2)
        #expect(server.heldRefreshCount == 2)
        #expect(server.presentedRefreshTokens == [refreshToken, refreshToken])
        #expect(server.duplicatePresentations == [refreshToken])
        #expect(server.isAccessTokenValid(tokens.accessToken))

        server.releaseHeldRefreshes()
        #expect(server.heldRefreshCount == 0)
        var successes = 0
        var terminalFailures = 0
        for refresh in refreshes {
            switch await refresh.result {
            case .success: successes += 1
            case .failure(let error): terminalFailures += (error as? RemoteAuthError)?.kind == .terminal ? 1 : 0
            }
        }
        #expect(successes == 1)
        #expect(terminalFailures == 1)
        #expect(server.liveFamilyCount == 0)
    }

    @Test("a held refresh stays held when cancelled; released, the server acts and the caller gets cancelled")
    func cancelledWhileHeld() async throws {
        let server = Self.makeServer()
        let tokens = try await Self.signIn(server)
        server.holdsRefreshes = true
        let refresh = Task { try await server.refresh(tokens.refreshToken!, scope: nil) }
        try await server.waitForHeldRefreshes(1)
        refresh.cancel()
        #expect(server.heldRefreshCount == 1)
        server.releaseHeldRefreshes()
        let error = await Self.error { try await refresh.value }
        #expect(error?.reason == .cancelled)
        #expect(error?.isOutcomeUncertain == true)
        #expect(!server.isAccessTokenValid(tokens.accessToken))
        #expect(server.refreshCount == 1)
    }

    @Test("waiting for held refreshes that never come times out")
    func waitForHeldRefreshesTimesOut() async throws {
        let server = Self.makeServer()
        await #expect(throws: MockTimeoutError.self) { try await server.waitForHeldRefreshes(1, timeout: 0.05) }
    }

    // MARK: - Revocation and credential state

    @Test("credential state: authorized while live, revoked once the family is, notFound for unknown tokens")
    func credentialStates() async throws {
        let server = Self.makeServer()
        let tokens = try await Self.signIn(server)
        #expect(try await server.credentialState(for: Self.session(tokens)) == .authorized)

        let unknown = ManagedSession(
            accessToken: "at-unknown",
            refreshToken: "rt-unknown",
            expiresAt: 0,
            issuedAt: 0,
            user: ManagedUser(identifier: "ada")
        )
        #expect(try await server.credentialState(for: unknown) == .notFound)

        try await server.revoke(tokens.accessToken, kind: .accessToken)
        #expect(server.revokedTokens == [tokens.accessToken])
        #expect(try await server.credentialState(for: Self.session(tokens)) == .revoked)
        #expect(!server.isAccessTokenValid(tokens.accessToken))
        let refresh = await Self.error {
            try await server.refresh(tokens.refreshToken!, scope: nil)
        }
        #expect(refresh?.kind == .terminal)

        // Unknown tokens are not an error (RFC 7009), and are counted.
        try await server.revoke("rt-unknown", kind: .refreshToken)
        #expect(server.revokedTokens.count == 2)
        #expect(server.credentialStateCount == 3)
    }

    @Test("revoking by the refresh token revokes the family's access token too")
    func revokeByRefreshToken() async throws {
        let server = Self.makeServer()
        let tokens = try await Self.signIn(server)
        try await server.revoke(tokens.refreshToken!, kind: .refreshToken)
        #expect(!server.isAccessTokenValid(tokens.accessToken))
        #expect(server.liveFamilyCount == 0)
    }

    @Test("revokeAllSessions revokes every family of that user and no other")
    func revokeAllSessions() async throws {
        let server = Self.makeServer()
        let grace = ManagedUser(identifier: "grace")
        server.register(grace, password: "pw")
        let phone = try await Self.signIn(server)
        let laptop = try await Self.signIn(server)
        let graces = try await server.obtainTokens(with: .password(username: "grace", password: "pw"))

        server.revokeAllSessions(of: "ada")
        #expect(try await server.credentialState(for: Self.session(phone)) == .revoked)
        #expect(try await server.credentialState(for: Self.session(laptop)) == .revoked)
        #expect(!server.isAccessTokenValid(laptop.accessToken))
        #expect(try await server.credentialState(for: Self.session(graces)) == .authorized)
        #expect(server.liveFamilyCount == 1)
        #expect(server.revokedTokens.isEmpty)
    }

    // MARK: - Description

    @Test("neither the description nor a dump shows a token")
    func descriptionHidesTokens() async throws {
        let server = Self.makeServer()
        let tokens = try await Self.signIn(server)
        let refreshed = try await server.refresh(tokens.refreshToken!, scope: nil)
        var dumped = ""
        dump(server, to: &dumped)
        let secrets = [tokens.accessToken, tokens.refreshToken!, refreshed.accessToken, refreshed.refreshToken!]
        for text in [server.description, dumped, String(reflecting: server)] {
            for secret in secrets + [Self.password] {
                #expect(!text.contains(secret))
            }
        }
        #expect(server.description.contains("live families: 1"))
    }

    @Test("reset forgets the counts and keeps the families")
    func reset() async throws {
        let server = Self.makeServer()
        let tokens = try await Self.signIn(server)
        _ = try await server.refresh(tokens.refreshToken!, scope: nil)
        server.reset()
        #expect(server.obtainCount == 0)
        #expect(server.refreshCount == 0)
        #expect(server.presentedRefreshTokens.isEmpty)
        #expect(server.liveFamilyCount == 1)
    }
}
