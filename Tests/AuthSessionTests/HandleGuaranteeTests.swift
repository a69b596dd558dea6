import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession

/// Whether `changes` form a chain starting at `start`: each change's old value is the previous
/// change's new value.
func isChain(_ changes: [RecordingAuthSessionDelegate.StatusChange], from start: AuthSessionStatus) -> Bool {
    var current = start
    for change in changes {
        guard change.from == current, change.to != change.from else { return false }
        current = change.to
    }
    return true
}

@Suite("Guarantees beyond the spec")
struct HandleGuaranteeTests {

    @Test(
        "an activation or a manual request never leaves signedOut, whatever the policies",
        arguments: [(true, false), (true, true), (false, false), (false, true)]
    )
    func activationNeverLeavesSignedOut(localValidation: Bool, biometric: Bool) async throws {
        let harness = Harness(expiresIn: 3600, localValidation: localValidation)
        harness.launch()
        harness.activation.fire()  // arms revalidation
        harness.provider.publish(.sessionSignedOut(error: nil))
        harness.provider.session = harness.session(expiresIn: 3600)
        harness.provider.isBioMetricAuthenticationEnabled = biometric
        for _ in 0..<4 {
            harness.activation.fire()
            harness.handle.requestManualAuthentication()
        }
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(harness.authenticator.promptCount == 0)
        #expect(await harness.statusChanges().last == "signedIn → signedOut")
    }

    @Test("a provider that publishes sessionSignedOut from inside signout(with:) ends signed out, one logout")
    func synchronousSignOutEvent() async {
        let harness = Harness(expiresIn: 3600)
        harness.launch()
        harness.activation.fire()
        harness.clock.advance(by: 3500)
        harness.activation.fire()
        #expect(harness.handle.sessionStatus == .signedOut)
        let events = await harness.events()
        #expect(events.filter { $0.hasPrefix("logout") }.count == 1)
    }

    @Test("a provider that reads and drives the handle from inside signout(with:) does not deadlock")
    func reentrantSignOut() async {
        let provider = ReentrantProvider(session: MockSession(expiresIn: 60, from: ManualClock.defaultStart))
        let handle = mockHandle(provider)
        provider.handle.withLock { $0 = handle }
        provider.proxy.withLock { $0 }?.publish(.sessionFetched(isInitialFetch: true))
        #expect(handle.sessionStatus == .signedOut)
        #expect(provider.statusesSeenInSignOut.withLock { $0 } == [.signedOut])
        #expect(handle.isManualAuthenticationRequired == false)
    }

    @Test("a provider that publishes from inside initializeSessionProvider and signs out synchronously ends signed out")
    func reentrantInitialization() {
        let harness = Harness(
            expiresIn: 30,
            eventsOnInitialize: [.fetchingSession, .sessionFetched(isInitialFetch: true)]
        )
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(harness.provider.session == nil)
        #expect(
            harness.provider.publishedEvents.map(\.description).last
                == "sessionSignedOut(AuthSessionError.sessionExpired: The authentication session has timed out.)"
        )
    }
}

/// A provider that, inside `signout(with:)`, reads the handle, publishes the sign-out, and
/// asks for manual authentication: every kind of call back into the handle.
private final class ReentrantProvider: AuthSessionProviderProtocol {
    let storedSession: ConcurrencySafeContainer<MockSession?>
    let proxy = ConcurrencySafeContainer<(any AuthSessionEventProxy)?>(nil)
    let handle = ConcurrencySafeContainer<AuthSessionHandle<ReentrantProvider>?>(nil)
    let statusesSeenInSignOut = ConcurrencySafeContainer<[AuthSessionStatus]>([])

    init(session: MockSession) {
        storedSession = ConcurrencySafeContainer(session)
    }

    var session: MockSession? { storedSession.withLock { $0 } }
    var isBioMetricAuthenticationEnabled: Bool { false }

    func initializeSessionProvider(for eventProxy: any AuthSessionEventProxy) {
        proxy.withLock { $0 = eventProxy }
    }

    func setBioMetricAuthentication(_ isEnabled: Bool) {}

    func signout(with error: (any Error)?) throws {
        let handle = handle.withLock { $0 }
        if let status = handle?.sessionStatus {
            statusesSeenInSignOut.withLock { $0.append(status) }
        }
        storedSession.withLock { $0 = nil }
        proxy.withLock { $0 }?.publish(.sessionSignedOut(error: error))
        handle?.requestManualAuthentication()
        _ = handle?.isBiometricAuthenticationInProcess
    }

    func preferredAuthenticationReason() -> String { "" }
    func canPerformAuthentication() -> Bool { false }
}

extension ConcurrencyLoad {

    @Suite("One chain under load")
    struct ChainLoadTests {

        @Test("status changes form one chain for every subscriber, with inputs from 8 threads")
        func chainUnderConcurrency() async {
            let harness = Harness(expiresIn: 3600)
            let others = (0..<3).map { RecordingAuthSessionDelegate(label: "chain-\($0)") }
            for recorder in others {
                harness.handle.subscribeDelegate(recorder, receive: recorder.queue)
            }
            let events: [AuthSessionEvent] = [
                .fetchingSession, .sessionFetched(isInitialFetch: false), .sessionSignIn, .sessionSignedOut(error: nil),
                .sessionFetchFailed(URLError(.timedOut)), .sessionFetched(isInitialFetch: true),
            ]
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                for step in 0..<500 {
                    if step % 7 == 3 {
                        harness.activation.fire()
                    } else {
                        harness.provider.publish(events[(thread * 31 + step) % events.count])
                    }
                }
            }
            await harness.handle.waitUntilIdle()
            let final = harness.handle.sessionStatus
            for recorder in [harness.recorder] + others {
                await recorder.drain()
                let changes = recorder.statusChanges
                #expect(isChain(changes, from: .syncing))
                #expect((changes.last?.to ?? .syncing) == final)
                #expect(changes == harness.recorder.statusChanges)
            }
        }
    }
}
