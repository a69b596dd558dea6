import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

@Suite("InMemorySessionStore and MockSessionStore")
struct InMemoryAndMockStoreTests {

    @Test("the in-memory store keeps one session and gives exclusive access across threads")
    func inMemory() async throws {
        let store = InMemorySessionStore()
        #expect(try store.load() == nil)
        try store.save(sampleSession(counter: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<500 {
                        try store.withExclusiveAccess {
                            var session = try store.load() ?? sampleSession(counter: 0)
                            session.user.profile["n"] = "\((Int(session.user.profile["n"] ?? "0") ?? 0) + 1)"
                            try store.save(session)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.load()?.user.profile["n"] == "4000")
        try store.remove()
        #expect(try store.load() == nil)
    }

    @Test("the mock store fails on command, counts its calls, and keeps its session through failures")
    func mockFailures() throws {
        let store = MockSessionStore(session: sampleSession(counter: 1))
        store.isUnavailable = true
        #expect(throws: SessionStoreError.unavailable(reason: "the mock store is unavailable")) { try store.load() }
        #expect(throws: SessionStoreError.unavailable(reason: "the mock store is unavailable")) {
            try store.withExclusiveAccess {}
        }
        store.isUnavailable = false
        #expect(try store.load() == sampleSession(counter: 1), "unavailable is never empty")

        store.failsWrites = true
        #expect(throws: SessionStoreError.self) { try store.save(sampleSession(counter: 2)) }
        #expect(throws: SessionStoreError.self) { try store.remove() }
        #expect(store.storedSession == sampleSession(counter: 1))
        store.failsWrites = false

        store.corruptNextLoad()
        #expect {
            try store.load()
        } throws: { error in
            if case .corrupt? = error as? SessionStoreError { return true }
            return false
        }
        #expect(try store.load() == nil, "the corrupt session was set aside")

        try store.save(sampleSession(counter: 3))
        #expect(store.savedSessions == [sampleSession(counter: 3)])
        #expect(store.loadCount == 4 && store.saveCount == 2 && store.removeCount == 1)
        #expect(store.exclusiveAccessCount == 1)
        store.reset()
        #expect(store.loadCount == 0 && store.savedSessions.isEmpty && store.storedSession != nil)
    }

    @Test("a test can await saves")
    func awaitSaves() async throws {
        let store = MockSessionStore()
        let saved = Task { try await store.waitForSaveCount(2) }
        try store.save(sampleSession(counter: 1))
        try store.save(sampleSession(counter: 2))
        try await saved.value
        #expect(store.saveCount == 2)
    }
}
