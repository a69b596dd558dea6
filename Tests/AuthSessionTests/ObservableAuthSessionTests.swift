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
