import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

@Suite("A widget that only reads the session follows the app's store, and never refreshes or checks")
struct ReadOnlyRoleTests {

    @Test(
        "a reader launched on a due session makes no request: it publishes the stored session, a token call fails as read-only (the session stands), and the app's refresh reaches it through the store"
    )
    func readerFollowsTheApp() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let stored = try await issuedSession(by: server, at: clock)
        let store = MockSessionStore(session: stored, postsChangeNotices: true)
        let credentialChecksBefore = server.credentialStateCount
        // The token is due (inside the refresh margin) when the widget starts.
        clock.advance(by: stored.expiresAt - 10 - clock.now.timeIntervalSince1970)

        let widgetActivation = ManualActivationSignal()
        let widget = ManagedSessionProvider(
            store: store,
            remote: server,
            clock: clock,
            configuration: .init(checksCredentialState: true, activationSignal: widgetActivation, role: .readOnly)
        )
        let widgetHandle = AuthSessionHandle(
            sessionProvider: widget,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: widgetActivation,
            clock: clock
        )
        await widget.waitUntilIdle()
        await widgetHandle.waitUntilIdle()
        #expect(widgetHandle.sessionStatus == .signedIn)
        #expect(widget.session?.refreshToken == stored.refreshToken)
        widgetActivation.fire()
        await widget.waitUntilIdle()
        #expect(server.refreshCount == 0, "no launch refresh, no activation refresh")
        #expect(server.credentialStateCount == credentialChecksBefore, "no credential check")

        await #expect(throws: ManagedSessionError.readOnly) { try await widget.validAccessToken() }
        await #expect(throws: ManagedSessionError.readOnly) { try await widget.refresh() }
        #expect(ManagedSessionError.readOnly.endsSession == false)
        #expect(widget.session != nil, "the session stands")
        #expect(server.refreshCount == 0)

        // The app launches on the due session and refreshes it; its write is a notice the widget
        // hears.
        let app = ManagerHarness(store: store, server: server, clock: clock)
        await app.settle()
        let refreshed = try #require(app.provider.session)
        #expect(refreshed.refreshToken != stored.refreshToken)
        try await waitUntil(timeout: 300) { widget.session?.refreshToken == refreshed.refreshToken }
        #expect(try await widget.validAccessToken() == refreshed.accessToken)
        #expect(server.refreshCount == 1, "one refresh, by the app")
    }

    @Test("a reader arms no timer: the clock passing the refresh time sends nothing")
    func readerArmsNoTimer() async throws {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let session = try await issuedSession(by: server, at: clock)
        let store = MockSessionStore(session: session)
        let widget = ManagedSessionProvider(
            store: store,
            remote: server,
            clock: clock,
            configuration: .init(
                checksCredentialState: false,
                activationSignal: ManualActivationSignal(),
                role: .readOnly
            )
        )
        let handle = AuthSessionHandle(
            sessionProvider: widget,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: ManualActivationSignal(),
            clock: clock
        )
        await widget.waitUntilIdle()
        await handle.waitUntilIdle()
        #expect(clock.sleeperCount == 0, "nothing waits on the clock")
        clock.advance(by: 7200)
        await widget.waitUntilIdle()
        #expect(server.refreshCount == 0)
        #expect(widget.session?.refreshToken == session.refreshToken)
        #expect(store.removeCount == 0, "an expired token is the app's to renew, not a sign-out")
    }
}
