import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

/// Records each try and answers from a script; thread-safe for the retry loop's task.
final class ScriptedCalls: Sendable {
    private let outcomes: ConcurrencySafeContainer<[Result<Int, RemoteAuthError>]>
    init(_ outcomes: [Result<Int, RemoteAuthError>]) { self.outcomes = ConcurrencySafeContainer(outcomes) }
    var remaining: Int { outcomes.withLock { $0.count } }
    func next() throws(RemoteAuthError) -> Int {
        try outcomes.withLock { $0.removeFirst() }.get()
    }
}

@Suite struct RetryPolicyTests {

    @Test func capsGrowExponentiallyUpToTheMaximum() {
        let policy = RetryPolicy(maximumRetries: 10, initialDelay: 1, multiplier: 2, maximumDelay: 30)
        #expect((1...7).map(policy.delayCap(forRetry:)) == [1, 2, 4, 8, 16, 30, 30])
    }

    @Test func fullJitterStaysUnderTheCapAndSpreads() {
        let policy = RetryPolicy(maximumRetries: 3, initialDelay: 4)
        var generator = SeededRandomNumberGenerator(seed: 7)
        let error = RemoteAuthError(.timedOut)
        let waits = (0..<1_000).compactMap { _ in
            policy.delay(beforeRetry: 1, after: error, now: Date(), using: &generator)
        }
        #expect(waits.count == 1_000)
        #expect(waits.allSatisfy { $0 >= 0 && $0 <= 4 })
        #expect(waits.min()! < 0.5 && waits.max()! > 3.5, "full jitter spans the whole range")
    }

    @Test func givesUpAfterTheBudgetAndOnNonRetryableErrors() {
        let policy = RetryPolicy(maximumRetries: 2)
        var generator = SeededRandomNumberGenerator(seed: 1)
        let transient = RemoteAuthError(.httpStatus(503), statusCode: 503)
        #expect(policy.delay(beforeRetry: 2, after: transient, now: Date(), using: &generator) != nil)
        #expect(policy.delay(beforeRetry: 3, after: transient, now: Date(), using: &generator) == nil)
        for error in [
            RemoteAuthError(.server(code: "invalid_grant"), statusCode: 400),
            RemoteAuthError(.server(code: "invalid_client"), statusCode: 401), RemoteAuthError(.cancelled),
        ] {
            #expect(policy.delay(beforeRetry: 1, after: error, now: Date(), using: &generator) == nil)
        }
    }

    @Test func retryAfterIsAFloorAndTooLongEndsTheRetries() {
        let policy = RetryPolicy(maximumRetries: 3, initialDelay: 1, maximumRetryAfter: 60)
        var generator = SeededRandomNumberGenerator(seed: 3)
        let now = Date(timeIntervalSince1970: 1_000)
        let seconds = RemoteAuthError(.httpStatus(503), statusCode: 503, retryAfter: .seconds(20))
        #expect(policy.delay(beforeRetry: 1, after: seconds, now: now, using: &generator) == 20)
        let date = RemoteAuthError(.httpStatus(429), statusCode: 429, retryAfter: .date(now.addingTimeInterval(45)))
        #expect(policy.delay(beforeRetry: 1, after: date, now: now, using: &generator) == 45)
        let past = RemoteAuthError(.httpStatus(429), statusCode: 429, retryAfter: .date(now.addingTimeInterval(-45)))
        #expect(policy.delay(beforeRetry: 1, after: past, now: now, using: &generator)! <= 1)
        let tooLong = RemoteAuthError(.httpStatus(503), statusCode: 503, retryAfter: .seconds(3_600))
        #expect(policy.delay(beforeRetry: 1, after: tooLong, now: now, using: &generator) == nil)
    }

    @Test func hostileValuesAreCleaned() {
        let policy = RetryPolicy(maximumRetries: -3, initialDelay: -1, multiplier: .nan, maximumDelay: .infinity)
        #expect(policy.maximumRetries == 0)
        #expect(policy.initialDelay == 0 && policy.multiplier == 1 && policy.maximumDelay == 0)
        #expect(RetryPolicy(maximumRetries: 3, multiplier: 1e308).delayCap(forRetry: 1_000) == 30)
    }

    /// The loop sleeps on the injected clock: the test moves the clock, nothing waits in real time.
    @Test func runSleepsOnTheClockBetweenTries() async throws {
        let clock = ManualClock()
        let start = clock.now
        let calls = ScriptedCalls([
            .failure(RemoteAuthError(.timedOut)),
            .failure(RemoteAuthError(.httpStatus(503), statusCode: 503, retryAfter: .seconds(10))),
            .success(42),
        ])
        let policy = RetryPolicy(maximumRetries: 3, initialDelay: 2)
        let run = Task { () throws(RemoteAuthError) -> Int in
            try await policy.run(clock: clock, using: SeededRandomNumberGenerator(seed: 9)) {
                _ throws(RemoteAuthError) in
                try calls.next()
            }
        }
        try await clock.waitForSleepers(1)
        #expect(calls.remaining == 2)
        let first = try #require(clock.advanceToNextDeadline())
        #expect(first >= 0 && first <= 2)
        try await clock.waitForSleepers(1)
        #expect(calls.remaining == 1)
        #expect(clock.nextDeadline! >= clock.now.addingTimeInterval(10))
        clock.advance(by: 9.5)
        #expect(clock.sleeperCount == 1, "Retry-After is a floor: 9.5 s is not enough")
        clock.advanceToNextDeadline()
        #expect(try await run.value == 42)
        #expect(clock.now.timeIntervalSince(start) >= 10)
    }

    @Test func runThrowsTerminalErrorsAtOnce() async throws {
        let calls = ScriptedCalls([
            .failure(RemoteAuthError(.server(code: "invalid_grant"), statusCode: 400)), .success(1),
        ])
        let error = await #expect(throws: RemoteAuthError.self) {
            try await RetryPolicy.standard.run(clock: ManualClock()) { _ throws(RemoteAuthError) in try calls.next() }
        }
        #expect(error?.serverCode == "invalid_grant")
        #expect(calls.remaining == 1)
    }

    @Test func runGivesUpWithTheLastError() async throws {
        let clock = ManualClock()
        let calls = ScriptedCalls((0..<3).map { _ in .failure(RemoteAuthError(.network(code: -1004))) })
        let run = Task { () throws(RemoteAuthError) -> Int in
            try await RetryPolicy(maximumRetries: 2).run(clock: clock) { _ throws(RemoteAuthError) in try calls.next() }
        }
        for _ in 0..<2 {
            try await clock.waitForSleepers(1)
            clock.advanceToNextDeadline()
        }
        await #expect(throws: RemoteAuthError(.network(code: -1004))) { try await run.value }
        #expect(calls.remaining == 0)
    }

    @Test func cancellingDuringTheWaitEndsTheRun() async throws {
        let clock = ManualClock()
        let calls = ScriptedCalls([.failure(RemoteAuthError(.timedOut)), .success(1)])
        let run = Task { () throws(RemoteAuthError) -> Int in
            try await RetryPolicy.standard.run(clock: clock) { _ throws(RemoteAuthError) in try calls.next() }
        }
        try await clock.waitForSleepers(1)
        run.cancel()
        await #expect(throws: RemoteAuthError(.cancelled)) { try await run.value }
        #expect(calls.remaining == 1)
        #expect(clock.sleeperCount == 0)
    }
}

/// A refresh at a rotating server must never be retried after an answer was lost.
@Suite struct UncertainOutcomeTests {

    @Test(arguments: [
        (RemoteAuthError(.network(code: -1004)), false),  // cannot connect: nothing sent
        (RemoteAuthError(.network(code: -1009)), false),  // offline
        (RemoteAuthError(.network(code: -1003)), false),  // no such host
        (RemoteAuthError(.httpStatus(503), statusCode: 503), false),
        (RemoteAuthError(.httpStatus(500), statusCode: 500), true),  // it may have failed after committing
        (RemoteAuthError(.server(code: "server_error"), statusCode: 500), true),
        (RemoteAuthError(.server(code: "gateway_timeout"), statusCode: 504), true),
        (RemoteAuthError(.httpStatus(429), statusCode: 429), false),
        (RemoteAuthError(.server(code: "invalid_grant"), statusCode: 400), false),
        (RemoteAuthError(.timedOut), true),
        (RemoteAuthError(.network(code: -1005)), true),  // connection lost mid-answer
        (RemoteAuthError(.network(code: -1)), true),  // libcurl's "transfer closed" for a cut body
        (RemoteAuthError(.httpStatus(504), statusCode: 504), true),
        (RemoteAuthError(.httpStatus(502), statusCode: 502), true),
        (RemoteAuthError(.invalidResponse("body is not a JSON object")), true),
        (RemoteAuthError(.cancelled), true),
    ])
    func uncertainty(error: RemoteAuthError, isUncertain: Bool) {
        #expect(error.isOutcomeUncertain == isUncertain, "\(error)")
    }

    @Test func nonIdempotentRunsRetryOnlyCertainFailures() async throws {
        let clock = ManualClock()
        let refused = ScriptedCalls([.failure(RemoteAuthError(.network(code: -1004))), .success(7)])
        let run = Task { () throws(RemoteAuthError) -> Int in
            try await RetryPolicy.standard.run(clock: clock, isIdempotent: false) { _ throws(RemoteAuthError) in
                try refused.next()
            }
        }
        try await clock.waitForSleepers(1)
        clock.advanceToNextDeadline()
        #expect(try await run.value == 7, "nothing reached the server: retried")

        let lost = ScriptedCalls([.failure(RemoteAuthError(.timedOut)), .success(7)])
        await #expect(throws: RemoteAuthError(.timedOut)) {
            try await RetryPolicy.standard.run(clock: clock, isIdempotent: false) { _ throws(RemoteAuthError) in
                try lost.next()
            }
        }
        #expect(lost.remaining == 1, "the answer was lost: not retried")
    }
}
