import AuthSessionInterface
import Dispatch
import Foundation
import Testing

// A feature module that depends on AuthSessionInterface alone observes a handle asynchronously
// and from the main actor, through the protocol (issue 8, items 14 and 15). The fake handle of
// ContractFakes.swift implements only the spec's requirements: what it gets here are the
// contract's defaults.

/// What a feature module writes: generic over any handle, engine or fake.
private func settledStatus<Handle: AuthSessionHandleProtocol>(of handle: Handle) async throws -> Handle.SessionStatus {
    try await handle.firstStatus { !$0.isLoadingStatus }
}

@MainActor
private final class SignInScreenModel: MainActorAuthSessionDelegate {
    var screens: [String] = []
    var startingStatus: String?

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didStartObservingWith sessionStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    ) {
        startingStatus = "\(sessionStatus)"
    }

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didUpdateStatus sessionStatus: any AuthSessionStatusProtocol,
        from oldStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    ) {
        screens.append(sessionStatus.isSignedIn ? "home" : sessionStatus.isSignedOut ? "sign-in" : "splash")
    }
}

@Suite("Observing through the contract alone")
struct ContractObservationTests {

    @Test("15. a module that knows only the protocol iterates statusUpdates and awaits firstStatus")
    func asyncObservationThroughTheProtocol() async throws {
        let provider = ContractProvider(session: nil)
        let handle = ContractHandle(sessionProvider: provider)
        #expect(try await settledStatus(of: handle) == .signedOut)

        var iterator = handle.statusUpdates().makeAsyncIterator()
        #expect(await iterator.next() == .signedOut, "starts with the current status")
        provider.eventProxy?.publish(.sessionSignIn)
        #expect(await iterator.next() == .signedIn)
        provider.eventProxy?.publish(.sessionSignedOut(error: nil))
        #expect(await iterator.next() == .signedOut)
    }

    @Test("15. delegateEvents has a default for any conformer")
    func delegateEventsThroughTheProtocol() async {
        let provider = ContractProvider(session: nil)
        let handle = ContractHandle(sessionProvider: provider)
        var events = handle.delegateEvents().makeAsyncIterator()
        provider.eventProxy?.publish(.sessionSignIn)
        #expect(await events.next()?.description == "statusChanged(signedOut → signedIn)")
    }

    @Test("15. a cancelled iteration unsubscribes its private delegate")
    func cancelledIterationUnsubscribes() async {
        let provider = ContractProvider(session: nil)
        let handle = ContractHandle(sessionProvider: provider)
        let updates = handle.statusUpdates()
        let consumer = Task {
            for await status in updates where status.isSignedIn {
                return true
            }
            return false
        }
        #expect(handle.subscriberCount == 1)
        consumer.cancel()
        #expect(await consumer.value == false)
        #expect(handle.subscriberCount == 0)
    }

    @Test("14. a @MainActor class observes any handle as a MainActorAuthSessionDelegate")
    @MainActor
    func mainActorDelegateThroughTheProtocol() async {
        let provider = ContractProvider(session: nil)
        let handle = ContractHandle(sessionProvider: provider)
        let model = SignInScreenModel()
        handle.subscribeDelegate(model)
        provider.eventProxy?.publish(.sessionSignIn)
        provider.eventProxy?.publish(.sessionSignedOut(error: nil))
        await drainMain()  // the fake enqueued both callbacks on the main queue before returning
        #expect(model.screens == ["home", "sign-in"])

        handle.unsubscribeDelegate(model)
        provider.eventProxy?.publish(.sessionSignIn)
        await drainMain()
        #expect(model.screens == ["home", "sign-in"], "nothing after unsubscribing")
    }
}

/// Lets the main queue run what is on it now.
@MainActor
private func drainMain() async {
    await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
}
