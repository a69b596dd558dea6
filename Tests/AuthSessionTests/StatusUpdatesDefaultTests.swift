import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession

/// A conformer of the contract that implements only the delegate API, over a real handle: it
/// gets the protocol's default `statusUpdates()`.
private final class ForwardingHandle: AuthSessionHandleProtocol {
    let inner: AuthSessionHandle<MockSessionProvider>

    init(inner: AuthSessionHandle<MockSessionProvider>) {
        self.inner = inner
    }

    init(sessionProvider: MockSessionProvider) {
        inner = AuthSessionHandle(sessionProvider: sessionProvider)
    }

    var sessionProvider: MockSessionProvider { inner.sessionProvider }
    var session: MockSession? { inner.session }
    var sessionStatus: AuthSessionStatus { inner.sessionStatus }
    var isBiometricAuthenticationInProcess: Bool { inner.isBiometricAuthenticationInProcess }
    var isManualAuthenticationRequired: Bool { inner.isManualAuthenticationRequired }
    func requestManualAuthentication() { inner.requestManualAuthentication() }
    func subscribeDelegate(_ delegate: any AuthSessionDelegate, receive queue: DispatchQueue) {
        inner.subscribeDelegate(delegate, receive: queue)
    }
    func unsubscribeDelegate(_ delegate: any AuthSessionDelegate) { inner.unsubscribeDelegate(delegate) }
}

/// The contract's default `statusUpdates()`, built on the delegate API alone.
@Suite("Default statusUpdates()")
struct StatusUpdatesDefaultTests {

    @Test("the contract's default statusUpdates never goes back in time, even when changes race the call")
    func defaultStatusUpdatesNeverGoBack() async {
        let trials = 3_000
        var backwards = 0
        let history: [AuthSessionStatus] = [.signedIn, .syncing, .signedOut, .signedIn]
        for _ in 0..<trials {
            let provider = MockSessionProvider(session: MockSession(expiresIn: 3600))
            let inner = mockHandle(provider)
            provider.publish(.sessionSignIn)
            let handle = ForwardingHandle(inner: inner)
            let stream = handle.statusUpdates()  // the protocol's default
            provider.publish(.fetchingSession)
            provider.publish(.sessionSignedOut(error: nil))
            provider.publish(.sessionSignIn)
            var seen: [AuthSessionStatus] = []
            for await status in stream {
                seen.append(status)
                if status == .signedIn && seen.contains(.signedOut) { break }
            }
            // What it yields must be a run of the real history, from some point on.
            if !(0..<history.count).contains(where: { Array(history[$0...]).starts(with: seen) }) {
                backwards += 1
            }
            withExtendedLifetime(handle) {}
        }
        #expect(backwards == 0, "\(backwards) of \(trials) sequences went back in time")
    }
}
