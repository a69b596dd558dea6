#if canImport(Observation)
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Observation
import Testing

@testable import AuthSession

@Suite("ObservableAuthSession")
@MainActor
struct ObservableAuthSessionTests {

    @Test("starts from the handle's state")
    func initialState() {
        let harness = Harness()
        harness.provider.publish(.sessionSignIn)
        let model = ObservableAuthSession(handle: harness.handle)
        #expect(model.status == .signedIn && model.isSignedIn && !model.isLoading)
        #expect(model.user?.identifier == "mock-user")
        #expect(model.lastError == nil)
    }

    @Test("withObservationTracking reports a status change")
    func reportsStatusChange() async {
        let harness = Harness()
        let model = ObservableAuthSession(handle: harness.handle)
        let (changed, continuation) = AsyncStream<Void>.makeStream()
        withObservationTracking {
            _ = model.status
        } onChange: {
            continuation.yield()
            continuation.finish()
        }
        harness.provider.publish(.sessionSignIn)
        for await _ in changed {}
        await until(model) { $0.status == .signedIn }
        #expect(model.isSignedIn)
    }

    @Test("tracks a scripted lifecycle: launch, prompt, failure kept, manual retry, sign-out")
    func scriptedLifecycle() async throws {
        let harness = Harness(biometric: true)
        harness.provider.biometricErrorsThatKeepSession = [.canceledByUser]
        let model = ObservableAuthSession(handle: harness.handle)
        #expect(model.isLoading)

        harness.launch()
        await until(model) { $0.status == .biometricAuthentication }
        #expect(model.isLoading && !model.isSignedIn)

        try await harness.authenticator.resolveNextPrompt(with: .failure(.canceledByUser))
        await until(model) { $0.isManualAuthenticationRequired && $0.lastError != nil }
        #expect(model.isSignedIn)
        guard case .biometricAuthFailure = model.lastError else {
            Issue.record("expected biometricAuthFailure, got \(String(describing: model.lastError))")
            return
        }

        harness.handle.requestManualAuthentication()
        try await harness.authenticator.resolveNextPrompt(with: .success)
        await until(model) { $0.status == .signedIn && !$0.isManualAuthenticationRequired }

        try harness.provider.signout()
        await until(model) { $0.status == .signedOut && $0.user == nil }
        #expect(!model.isSignedIn && !model.isLoading)
    }

    @Test(
        "a change no callback carries (the manual flag cleared by a request that changes no status) reaches the model"
    )
    func manualFlagWithoutCallback() async throws {
        let harness = Harness(biometric: true)
        harness.provider.biometricErrorsThatKeepSession = [.canceledByUser]
        let model = ObservableAuthSession(handle: harness.handle)
        harness.launch()
        try await harness.authenticator.resolveNextPrompt(with: .failure(.canceledByUser))
        await until(model) { $0.isManualAuthenticationRequired }

        harness.provider.allowsLocalSessionValidation = false
        harness.provider.isBioMetricAuthenticationEnabled = false
        harness.handle.requestManualAuthentication()
        #expect(harness.handle.isManualAuthenticationRequired == false)
        #expect(harness.handle.sessionStatus == .signedIn)
        await until(model) { !$0.isManualAuthenticationRequired }
    }

    @Test("lastError keeps the latest error until cleared")
    func lastErrorLifetime() async {
        let harness = Harness()
        let model = ObservableAuthSession(handle: harness.handle)
        harness.provider.publish(.unexpectedError(.sessionMalformed))
        harness.provider.publish(.sessionFetchFailed(URLError(.timedOut)))
        await until(model) { model in
            if case .sessionFetchFailed = model.lastError { return true }
            return false
        }
        harness.provider.publish(.sessionSignIn)
        await until(model) { $0.isSignedIn }
        #expect(model.lastError != nil)
        model.clearLastError()
        #expect(model.lastError == nil)
    }

    @Test("a deallocated model stops listening")
    func stopsListening() async {
        let harness = Harness()
        do {
            let model = ObservableAuthSession(handle: harness.handle)
            #expect(harness.handle.streamConsumerCount == 1)
            harness.provider.publish(.sessionSignIn)
            await until(model) { $0.isSignedIn }
        }
        await until(harnessHasNoConsumers: harness)
        #expect(harness.handle.streamConsumerCount == 0)
    }

    @Test(
        "a sign-in during any read the model's creation makes still reaches the model",
        arguments: 0...2
    )
    @MainActor
    func modelSeesSignInDuringRegistration(readsBeforeSignIn: Int) async {
        let clock = ManualClock()
        let provider = SignInOnReadProvider(clock: clock)
        let handle = mockHandle(provider, clock: clock)
        provider.publish(.sessionFetched(isInitialFetch: true))
        #expect(handle.sessionStatus == .signedOut)

        provider.signInOnRead(after: readsBeforeSignIn)
        let model = ObservableAuthSession(handle: handle)
        // No further input: the model must agree with the handle on its own.
        let converged = await until(model, timeout: 10) { model in
            model.status == handle.sessionStatus && model.user?.identifier == handle.session?.user.identifier
        }
        #expect(converged, "model: \(model.status), user \(String(describing: model.user?.identifier))")
    }

    @Test("a sessionUpdated racing another event leaves the model on the provider's user")
    @MainActor
    func modelConvergesUnderRacingUpdates() async {
        let clock = ManualClock()
        let provider = HoldingProvider(session: MockSession(expiresIn: 3600, from: clock.now))
        let handle = mockHandle(provider, clock: clock)
        provider.publish(.sessionSignIn)
        let model = ObservableAuthSession(handle: handle)
        let renamed = MockSession(expiresIn: 3600, from: clock.now, user: MockUser(identifier: "renamed"))

        // An event's read of the session is held; meanwhile the provider renames the user.
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        provider.holdNextSessionRead(entered: { entered.signal() }, release: release)
        await onParallelThreads(2) { thread in
            if thread == 0 {
                provider.publish(.unexpectedError(.sessionMalformed))
            } else {
                entered.wait()
                provider.setSession(renamed)
                provider.publish(.sessionUpdated(renamed))
                release.signal()
            }
        }
        let converged = await until(model, timeout: 10) { $0.user?.identifier == "renamed" && $0.lastError != nil }
        #expect(converged, "model user: \(String(describing: model.user?.identifier))")
    }
}

/// A provider with no session that, when armed, signs a user in from inside a read of its
/// session: the read returns what it saw before, the sign-in is published right after.
private final class SignInOnReadProvider: AuthSessionProviderProtocol {
    private struct State {
        var session: MockSession?
        var readsBeforeSignIn: Int?
        weak var proxy: (any AuthSessionEventProxy)?
    }
    private let state = ConcurrencySafeContainer(State())
    private let clock: ManualClock

    init(clock: ManualClock) {
        self.clock = clock
    }

    /// After `reads` more reads of `session`, the next one signs a user in.
    func signInOnRead(after reads: Int) {
        state.withLock { $0.readsBeforeSignIn = reads }
    }

    var session: MockSession? {
        let now = clock.now
        let (session, proxy) = state.withLock { state -> (MockSession?, (any AuthSessionEventProxy)?) in
            let seen = state.session
            guard let reads = state.readsBeforeSignIn else { return (seen, nil) }
            if reads > 0 {
                state.readsBeforeSignIn = reads - 1
                return (seen, nil)
            }
            state.readsBeforeSignIn = nil
            state.session = MockSession(expiresIn: 3600, from: now, user: MockUser(identifier: "ada"))
            return (seen, state.proxy)
        }
        proxy?.publish(.sessionSignIn)
        return session
    }

    var isBioMetricAuthenticationEnabled: Bool { false }
    func initializeSessionProvider(for eventProxy: any AuthSessionEventProxy) {
        state.withLock { $0.proxy = eventProxy }
    }
    func publish(_ event: AuthSessionEvent) {
        state.withLock { $0.proxy }?.publish(event)
    }
    func setBioMetricAuthentication(_ isEnabled: Bool) {}
    func signout(with error: (any Error)?) throws {}
    func preferredAuthenticationReason() -> String { "" }
    func canPerformAuthentication() -> Bool { false }
}

/// Waits until the model's listener tasks have ended and left the handle.
@MainActor
private func until(harnessHasNoConsumers harness: Harness) async {
    // The listeners end on their next turn on the main actor after cancellation.
    for _ in 0..<1_000 where harness.handle.streamConsumerCount > 0 {
        await Task.yield()
    }
}
#endif
