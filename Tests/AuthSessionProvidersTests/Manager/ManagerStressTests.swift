import AuthSession
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

@Suite("Session manager under load", .serialized)
struct ManagerStressTests {

    /// Every round: the token expires, 10,000 callers ask for one while the refresh is held at the
    /// server, (every other round) half of them are cancelled, and the refresh is released.
    @Test(
        "10,000 concurrent callers on an expired token, 20 rounds: one refresh per round, one token for all, cancelled callers leave the rest served"
    )
    func tenThousandCallers() async throws {
        let harness = ManagerHarness()
        try await harness.signIn()
        let callers = 10_000
        for round in 0..<20 {
            harness.clock.advance(by: 3600)
            harness.server.holdsRefreshes = true
            let refreshesBefore = harness.server.refreshCount
            let tasks = (0..<callers).map { _ in
                Task { try await harness.provider.validAccessToken() }
            }
            try await harness.server.waitForHeldRefreshes(1, timeout: 120)
            try await waitUntil(timeout: 120) { harness.provider.waitingCallerCount == callers }
            let cancelsHalf = round % 2 == 1
            if cancelsHalf {
                for index in stride(from: 0, to: callers, by: 2) {
                    tasks[index].cancel()
                }
                #expect(harness.provider.waitingCallerCount == callers / 2, "cancelled callers leave at once")
            }
            harness.server.holdsRefreshes = false
            harness.server.releaseHeldRefreshes()

            var tokens = Set<String>()
            var cancelled = 0
            for task in tasks {
                switch await task.result {
                case .success(let token): tokens.insert(token)
                case .failure(let error as ManagedSessionError) where error == .cancelled: cancelled += 1
                case .failure(let error): Issue.record("round \(round): unexpected \(error)")
                }
            }
            #expect(harness.server.refreshCount == refreshesBefore + 1, "round \(round): one remote call")
            #expect(
                tokens == Set([harness.provider.session?.accessToken].compactMap { $0 }),
                "round \(round): one token"
            )
            #expect(cancelled == (cancelsHalf ? callers / 2 : 0), "round \(round)")
        }
        #expect(harness.server.presentedAfterAnsweredRotation.isEmpty)
        #expect(harness.logouts.isEmpty)
    }
}
