import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// Where a view model looks up what it shows (an actor of the app: a cache, a database).
private actor Directory {
    func displayName(of user: String) -> String { user.uppercased() }
}

/// A login screen's view model, as an app writes it: its state comes from `sessionChanges`, and it
/// looks something up (an `await`) before it shows a user.
@MainActor
private final class LoginViewModel {
    private let directory = Directory()

    enum Screen: Equatable {
        case loading
        case signIn
        case home(user: String, refreshes: Int)
    }

    private(set) var screen: Screen = .loading
    private var loop: Task<Void, Never>?

    func start(_ provider: ManagedSessionProvider) {
        loop = Task { [weak self] in
            for await (event, session) in provider.sessionChanges {
                guard let self else { return }
                switch (event, session) {
                case (.tokenRefreshed, let session?):
                    if case .home(let user, let refreshes) = screen, user == session.user.identifier.uppercased() {
                        screen = .home(user: user, refreshes: refreshes + 1)
                    }
                case (_, let session?):
                    let name = await directory.displayName(of: session.user.identifier)
                    screen = .home(user: name, refreshes: 0)
                case (_, nil):
                    screen = .signIn
                }
            }
        }
    }

    func stop() {
        loop?.cancel()
    }
}

@Suite("A test awaits the state a view model derives from sessionChanges")
struct SessionChangesHandledTests {

    @MainActor
    @Test(
        "after waitUntilSessionChangesHandled the view model shows every change: sign-in, refresh, sign-out, 200 rounds with two models"
    )
    func viewModelStateIsCurrent() async throws {
        let harness = ManagerHarness()
        let first = LoginViewModel()
        let second = LoginViewModel()
        first.start(harness.provider)
        second.start(harness.provider)
        #expect(await harness.provider.waitUntilSessionChangesHandled(timeout: 300))
        #expect(first.screen == .signIn)
        // 200 rounds (a stale view model showed in 12 of them without the wait); 20 under
        // ThreadSanitizer, where each round is ten times slower.
        for round in 0..<(isThreadSanitized ? 20 : 200) {
            try await harness.signIn(round.isMultiple(of: 2) ? alice : bob)
            #expect(await harness.provider.waitUntilSessionChangesHandled(timeout: 300))
            let user = (round.isMultiple(of: 2) ? alice.identifier : bob.identifier).uppercased()
            #expect(first.screen == .home(user: user, refreshes: 0), "round \(round)")
            _ = try await harness.provider.refresh()
            #expect(await harness.provider.waitUntilSessionChangesHandled(timeout: 300))
            #expect(first.screen == .home(user: user, refreshes: 1), "round \(round)")
            #expect(second.screen == first.screen, "round \(round)")
            try harness.provider.signout(with: nil)
            #expect(await harness.provider.waitUntilSessionChangesHandled(timeout: 300))
            #expect(first.screen == .signIn, "round \(round)")
            #expect(second.screen == .signIn, "round \(round)")
        }
        first.stop()
        second.stop()
        _ = harness.handle
    }

    @Test("an iteration busy inside its body holds the wait until it asks again; the wait's time limit ends it")
    func busyIterationHoldsTheWait() async throws {
        let harness = ManagerHarness()
        let gate = AsyncGate()
        let handled = ConcurrencySafeContainer(0)
        let loop = Task {
            for await _ in harness.provider.sessionChanges {
                handled.withLock { $0 += 1 }
                await gate.wait()
            }
        }
        // The first element (the launch's) is being handled, and the body waits on the gate.
        try await waitUntil(timeout: 300) { handled.withLock { $0 } == 1 }
        #expect(await harness.provider.waitUntilSessionChangesHandled(timeout: 0.2) == false)
        let waiting = Task { await harness.provider.waitUntilSessionChangesHandled(timeout: 300) }
        gate.open()
        #expect(await waiting.value)
        loop.cancel()
        #expect(
            await harness.provider.waitUntilSessionChangesHandled(timeout: 300),
            "a cancelled loop is no longer waited for"
        )
    }
}
