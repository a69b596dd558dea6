import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

/// Collects what a provider publishes, as a handle's proxy would receive it.
private final class Inbox: Sendable {
    let events = ConcurrencySafeContainer<[String]>([])
    let proxy: SessionHandleEventProxy

    init() {
        let events = events
        proxy = SessionHandleEventProxy { event in events.withLock { $0.append(event.description) } }
    }

    var received: [String] { events.withLock { $0 } }
}

@Suite("MockSessionProvider")
struct MockSessionProviderTests {

    @Test("by default a sign-out clears the session and publishes sessionSignedOut with the error")
    func defaultSignOut() throws {
        let inbox = Inbox()
        let provider = MockSessionProvider(session: MockSession(expiresIn: 60))
        provider.initializeSessionProvider(for: inbox.proxy)
        try provider.signout(with: AuthSessionError.sessionExpired)
        #expect(provider.session == nil)
        #expect(
            inbox.received == [
                "sessionSignedOut(AuthSessionError.sessionExpired: The authentication session has timed out.)"
            ]
        )
        #expect(provider.signOutCount == 1)
        #expect(provider.signOutErrors.first.flatMap { $0 as? AuthSessionError } != nil)
    }

    @Test("a throwing sign-out keeps the session and publishes nothing")
    func throwingSignOut() {
        let inbox = Inbox()
        let provider = MockSessionProvider(session: MockSession(expiresIn: 60))
        provider.initializeSessionProvider(for: inbox.proxy)
        provider.signOutBehavior = .throwing(URLError(.timedOut))
        #expect(throws: URLError.self) { try provider.signout() }
        #expect(provider.session != nil)
        #expect(inbox.received.isEmpty)
        #expect(provider.signOutCount == 1)
    }

    @Test("a silent sign-out clears the session and publishes nothing")
    func silentSignOut() throws {
        let inbox = Inbox()
        let provider = MockSessionProvider(session: MockSession(expiresIn: 60))
        provider.initializeSessionProvider(for: inbox.proxy)
        provider.signOutBehavior = .silent
        try provider.signout()
        #expect(provider.session == nil)
        #expect(inbox.received.isEmpty)
    }

    @Test("events given at creation are published synchronously during initialization")
    func eventsOnInitialize() {
        let inbox = Inbox()
        let provider = MockSessionProvider(eventsOnInitialize: [
            .fetchingSession, .sessionFetched(isInitialFetch: true),
        ])
        provider.initializeSessionProvider(for: inbox.proxy)
        #expect(inbox.received == ["fetchingSession", "sessionFetched(initial)"])
        #expect(provider.initializeCount == 1)
    }

    @Test("publish goes through the proxy, which is held weakly")
    func publishThroughWeakProxy() {
        let provider = MockSessionProvider()
        #expect(provider.publish(.sessionSignIn) == false)
        do {
            let inbox = Inbox()
            provider.initializeSessionProvider(for: inbox.proxy)
            #expect(provider.publish(.sessionSignIn))
            #expect(inbox.received == ["sessionSignIn"])
        }
        #expect(provider.eventProxy == nil)
        #expect(provider.publish(.sessionSignIn) == false)
        #expect(provider.publishedEvents.count == 3)
    }

    @Test("every policy answer is settable")
    func policies() {
        let provider = MockSessionProvider()
        #expect(provider.allowsLocalSessionValidation && !provider.isSessionAutoRefreshEnabled)
        #expect(!provider.canPerformAuthentication())
        provider.setBioMetricAuthentication(true)
        #expect(provider.canPerformAuthentication() && provider.isBioMetricAuthenticationEnabled)
        provider.allowsLocalSessionValidation = false
        provider.isSessionAutoRefreshEnabled = true
        #expect(!provider.allowsLocalSessionValidation && provider.isSessionAutoRefreshEnabled)
        provider.biometricErrorsThatKeepSession = [.canceledByUser]
        #expect(!provider.allowsSessionSigningOutOnBiometricAuthenticationFailure(with: .canceledByUser))
        #expect(provider.allowsSessionSigningOutOnBiometricAuthenticationFailure(with: .failed))
        provider.authenticationReason = "Why"
        #expect(provider.preferredAuthenticationReason() == "Why")
    }

    @Test("reset forgets the history and keeps the configuration")
    func reset() throws {
        let provider = MockSessionProvider(session: MockSession(expiresIn: 60), isBioMetricAuthenticationEnabled: true)
        provider.initializeSessionProvider(for: Inbox().proxy)
        provider.signOutBehavior = .silent
        try provider.signout()
        provider.publish(.sessionSignIn)
        provider.reset()
        #expect(provider.signOutCount == 0 && provider.initializeCount == 0 && provider.publishedEvents.isEmpty)
        #expect(provider.isBioMetricAuthenticationEnabled)
    }

    @Test("it is safe to drive from many threads")
    func threadSafe() {
        let provider = MockSessionProvider()
        provider.signOutBehavior = .silent
        DispatchQueue.concurrentPerform(iterations: 1_000) { index in
            provider.session = MockSession(expiresIn: TimeInterval(index))
            try? provider.signout()
            _ = provider.session
        }
        #expect(provider.signOutCount == 1_000)
    }
}

@Suite("MockBiometricAuthenticator")
struct MockBiometricAuthenticatorTests {

    @Test("prompts stay pending until resolved, and end in order")
    func resolvesInOrder() async throws {
        let authenticator = MockBiometricAuthenticator()
        let first = Task { try await authenticator.authenticate(reason: "first") }
        try await authenticator.waitForPromptCount(1)
        let second = Task { try await authenticator.authenticate(reason: "second") }
        try await authenticator.waitForPromptCount(2)
        #expect(authenticator.pendingPromptCount == 2)
        #expect(authenticator.reasons == ["first", "second"])

        #expect(authenticator.resolvePendingPrompt(with: .failure(.canceledByUser)))
        #expect(authenticator.resolvePendingPrompt(with: .success))
        #expect(authenticator.resolvePendingPrompt(with: .success) == false)
        await #expect(throws: BiometricAuthenticationError.canceledByUser) { try await first.value }
        try await second.value
        #expect(authenticator.pendingPromptCount == 0)
        #expect(authenticator.promptCount == 2)
    }

    @Test("a cancelled prompt ends with canceledBySystem")
    func cancellation() async throws {
        let authenticator = MockBiometricAuthenticator()
        let prompt = Task { try await authenticator.authenticate(reason: "r") }
        try await authenticator.waitForPendingPrompt()
        prompt.cancel()
        await #expect(throws: BiometricAuthenticationError.canceledBySystem) { try await prompt.value }
        #expect(authenticator.pendingPromptCount == 0)
    }

    @Test("a prompt cancelled before it starts ends with canceledBySystem and is never pending")
    func cancellationBeforeStart() async {
        let authenticator = MockBiometricAuthenticator()
        let prompt = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await authenticator.authenticate(reason: "r")
        }
        await #expect(throws: BiometricAuthenticationError.canceledBySystem) { try await prompt.value }
        #expect(authenticator.pendingPromptCount == 0)
    }

    @Test("waits time out with MockTimeoutError instead of hanging")
    func timeout() async {
        let authenticator = MockBiometricAuthenticator()
        await #expect(throws: MockTimeoutError.self) { try await authenticator.waitForPendingPrompt(timeout: 0.05) }
    }

    @Test("reset forgets presented prompts")
    func reset() async throws {
        let authenticator = MockBiometricAuthenticator()
        let prompt = Task { try await authenticator.authenticate(reason: "r") }
        try await authenticator.resolveNextPrompt(with: .success)
        try await prompt.value
        authenticator.reset()
        #expect(authenticator.promptCount == 0 && authenticator.reasons.isEmpty)
    }
}

@Suite("ManualActivationSignal and ManualClock")
struct ManualSeamTests {

    @Test("fire calls every live observer synchronously; cancelled ones are gone")
    func signal() {
        let signal = ManualActivationSignal()
        let calls = ConcurrencySafeContainer(0)
        let first = signal.observe { calls.withLock { $0 += 1 } }
        let second = signal.observe { calls.withLock { $0 += 10 } }
        signal.fire()
        #expect(calls.withLock { $0 } == 11)
        second.cancel()
        signal.fire()
        #expect(calls.withLock { $0 } == 12)
        #expect(signal.observerCount == 1 && signal.fireCount == 2)
        signal.reset()
        #expect(signal.fireCount == 0)
        _ = first
    }

    @Test("the clock moves only when told")
    func clock() {
        let clock = ManualClock()
        #expect(clock.now == ManualClock.defaultStart)
        clock.advance(by: 90)
        #expect(clock.now == ManualClock.defaultStart.addingTimeInterval(90))
        clock.now = Date(timeIntervalSince1970: 0)
        #expect(clock.now.timeIntervalSince1970 == 0)
    }
}

@Suite("RecordingAuthSessionDelegate, MockSession, MockUser")
struct RecordingDelegateTests {

    @Test("records all six callbacks in order, with session and user")
    func recordsEverything() async throws {
        let recorder = RecordingAuthSessionDelegate()
        let session = MockSession(expiresIn: 60, user: MockUser(identifier: "ada"))
        recorder.authentication(nil, didCompleteFetchWith: session, isInitialFetch: true)
        recorder.authentication(
            nil,
            didUpdateStatus: AuthSessionStatus.signedIn,
            from: AuthSessionStatus.syncing,
            for: session
        )
        recorder.authentication(nil, didLoginWith: session.user, for: session)
        recorder.authentication(nil, didUpdate: session.user, for: session)
        recorder.authentication(nil, didFailWith: .sessionExpired, for: session)
        recorder.authentication(nil, didLogoutWith: nil)
        let events = try await recorder.waitForEvents(count: 6)
        #expect(try await recorder.waitForEvent(number: 3).description == "login")
        #expect(
            events.map(\.description) == [
                "sessionFetch(initial)", "statusChanged(syncing → signedIn)", "login", "userUpdate",
                "failure(AuthSessionError.sessionExpired: The authentication session has timed out.)", "logout(nil)",
            ]
        )
        #expect(recorder.statusChanges == [.init(from: .syncing, to: .signedIn)])
        #expect((recorder.records[2].user as? MockUser)?.identifier == "ada")
        #expect(recorder.records.allSatisfy { !$0.hadHandle })
        recorder.reset()
        #expect(recorder.count == 0)
    }

    @Test("waitForStatus returns once the change arrives; a missing one times out")
    func waits() async throws {
        let recorder = RecordingAuthSessionDelegate()
        let arrival = Task {
            try await recorder.waitForStatus(.signedOut)
        }
        recorder.queue.async {
            recorder.authentication(
                nil,
                didUpdateStatus: AuthSessionStatus.signedOut,
                from: AuthSessionStatus.syncing,
                for: nil
            )
        }
        try await arrival.value
        await #expect(throws: MockTimeoutError.self) {
            try await recorder.waitForStatus(.biometricAuthentication, timeout: 0.05)
        }
    }

    @Test("a satisfied wait lets go of the recorded state at once, not when its safety net expires")
    func satisfiedWaitReleasesState() async throws {
        final class TrackedSession: AuthSessionProtocol {
            let accessToken = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJl"
            let expiresAt: TimeInterval = 0
            let user = MockUser(identifier: "ada")
        }
        weak var released: TrackedSession?
        var recorder: RecordingAuthSessionDelegate? = RecordingAuthSessionDelegate()
        do {
            let session = TrackedSession()
            released = session
            let waiting = recorder!
            waiting.authentication(nil, didCompleteFetchWith: session, isInitialFetch: true)
            // The second callback is certainly not there yet: this wait registers a waiter whose
            // safety net would run for ten minutes.
            let arrival = Task { try await waiting.waitForEvents(count: 2, timeout: 600) }
            waiting.queue.async { waiting.authentication(nil, didLogoutWith: nil) }
            _ = try await arrival.value
        }
        recorder = nil
        #expect(released == nil, "the wait's timer still holds the recorded session")
    }

    @Test("a dump of the recorder's records never shows a token, even of an app's own session type")
    func recordsHideSessions() {
        struct AppSession: AuthSessionProtocol {
            let accessToken: String
            let expiresAt: TimeInterval
            let user: MockUser
        }
        let recorder = RecordingAuthSessionDelegate()
        let session = AppSession(accessToken: "tok_live_0123456789abcdef", expiresAt: 0, user: MockUser())
        recorder.authentication(nil, didLoginWith: session.user, for: session)
        var dumped = ""
        dump(recorder.records, to: &dumped)
        #expect(!dumped.contains("tok_live"), "\(dumped)")
        #expect(dumped.contains("mock-user") && dumped.contains("login"))
    }

    @Test("the kit's default token looks like a real one, so no rendering of an error leaks it")
    func defaultTokenIsRedacted() {
        let token = MockSession(expiresAt: 0).accessToken
        let cause = NSError(domain: "test", code: 1, userInfo: [NSLocalizedDescriptionKey: "sent \(token), got 401"])
        let error = AuthSessionError.networkFailure(error: cause)
        var dumped = ""
        dump(error, to: &dumped)
        for text in [
            error.description, error.localizedDescription, dumped, "\(AuthSessionEvent.sessionFetchFailed(cause))",
        ] {
            #expect(!text.contains(token), "\(text)")
        }
    }

    @Test("MockSession never prints its token")
    func sessionDescription() {
        let session = MockSession(
            expiresIn: 10,
            from: Date(timeIntervalSince1970: 0),
            accessToken: "s3cr3t",
            user: MockUser(identifier: "ada")
        )
        #expect(session.description == "MockSession(user: ada, expiresAt: 10.0, accessToken: <redacted>)")
        #expect(String(reflecting: session) == session.description)
        var dumped = ""
        dump(session, to: &dumped)
        #expect(!dumped.contains("s3cr3t"))
        #expect(dumped.contains("ada"))
        #expect(session.expiresIn(at: Date(timeIntervalSince1970: 4)) == 6)
    }
}
