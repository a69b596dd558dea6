import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

#if os(Linux)
@Suite("Change notices that fall back to polling")
struct NoticeFallbackTests {

    @Test(
        "with no inotify instance (inotify_init1 fails with EMFILE, forced), a sign-out by another process is still heard, and the observer hears of the fallback exactly once"
    )
    func signOutHeardByPolling() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        let hub = InotifyHub(
            calls: InotifyCalls(initialize: { (-1, EMFILE) }, addWatch: { _, _, _ in (-1, EBADF) })
        )
        let observer = RecordingObserver()
        let provider = ManagedSessionProvider(
            store: FileSessionStore(directory: folder.url, safeguarding: .platform) {
                InotifyChangeNotifier(directory: $0, names: $1, hub: hub)
            },
            remote: server,
            retryPolicy: immediateRetries,
            clock: clock,
            configuration: .init(
                checksCredentialState: false,
                activationSignal: ManualActivationSignal(),
                observer: observer
            )
        )
        let recorder = RecordingAuthSessionDelegate()
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: ManualActivationSignal(),
            clock: clock
        )
        handle.subscribeDelegate(recorder, receive: recorder.queue)
        try await provider.signIn(with: .password(username: alice.identifier, password: alicePassword))

        // Another process signs out: it removes the stored session (within the same poll as the
        // sign-in's write, often: that write's post makes the next poll a notice all the same).
        try FileSessionStore(directory: folder.url).remove()
        try await waitUntil(timeout: 300) { provider.session == nil }
        await provider.waitUntilIdle()
        await provider.observationsDelivered()
        let fallbacks = observer.observations.filter { $0.name == "changeNoticesFellBack" }
        #expect(fallbacks.count == 1, "\(observer.lines)")
        #expect(fallbacks.first?.severity == .warning)
        #expect(fallbacks.first?.publicLogSummary == "AuthSessionKit [warning] changeNoticesFellBack")
        #expect(fallbacks.first?.description.contains(folder.url.path) == false, "no path")
        _ = handle
    }
}
#endif
