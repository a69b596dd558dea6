import AuthSession
import Foundation

/// The error a test-kit wait throws when its condition did not hold in time.
///
/// Timeouts are a safety net against a hung test, not a way to wait: every wait in the test kit
/// resumes as soon as its condition holds.
public struct MockTimeoutError: Error, CustomStringConvertible {

    /// What was awaited, and for how long.
    public let description: String

    /// Creates the error.
    ///
    /// - Parameter description: What was awaited, and for how long.
    public init(description: String) {
        self.description = description
    }
}

/// One wait: a continuation resumed exactly once, by its condition or by its safety net, and the
/// safety net's timer, cancelled as soon as the wait ends.
///
/// Holds nothing of the state it waits on, so a timer that outlives the wait keeps no recorded
/// history alive.
///
/// All operations are thread-safe.
final class WaitTicket: Sendable {

    private struct Slot {
        var continuation: CheckedContinuation<Void, any Error>?
        var timer: Task<Void, Never>?
    }

    private let slot: ConcurrencySafeContainer<Slot>

    init(_ continuation: CheckedContinuation<Void, any Error>) {
        slot = ConcurrencySafeContainer(Slot(continuation: continuation))
    }

    /// Whether the wait has ended.
    var isFinished: Bool {
        slot.withLock { $0.continuation == nil }
    }

    /// Gives the wait its safety net; cancels it at once if the wait already ended.
    func attach(_ timer: Task<Void, Never>) {
        let hasEnded = slot.withLock { slot in
            guard slot.continuation != nil else { return true }
            slot.timer = timer
            return false
        }
        if hasEnded {
            timer.cancel()
        }
    }

    /// Ends the wait with `result`, unless it has ended already; cancels the timer.
    func finish(_ result: Result<Void, any Error>) {
        let ended = slot.withLock { slot in
            defer { slot = Slot() }
            return slot
        }
        ended.timer?.cancel()
        ended.continuation?.resume(with: result)
    }
}

/// The waits on some state, each with its condition; lives inside that state's lock.
///
/// Not thread-safe: keep it in a `ConcurrencySafeContainer` with the state it
/// watches.
struct WaiterList<State>: Sendable {

    private var waiters: [(isSatisfied: @Sendable (State) -> Bool, ticket: WaitTicket)] = []

    mutating func add(_ ticket: WaitTicket, until isSatisfied: @escaping @Sendable (State) -> Bool) {
        waiters.append((isSatisfied, ticket))
    }

    /// Removes and returns the waits whose condition holds for `state`; drops the ones that
    /// already ended (timed out).
    mutating func takeSatisfied(by state: State) -> [WaitTicket] {
        var satisfied: [WaitTicket] = []
        waiters.removeAll { waiter in
            if waiter.ticket.isFinished { return true }
            guard waiter.isSatisfied(state) else { return false }
            satisfied.append(waiter.ticket)
            return true
        }
        return satisfied
    }

    /// The number of waits still registered; for tests.
    var count: Int { waiters.count }
}

/// A state whose changes can be awaited.
protocol WaitableState: Sendable {
    var waiters: WaiterList<Self> { get set }
}

extension ConcurrencySafeContainer where Value: WaitableState {

    /// Changes the state, then resumes every waiter whose condition now holds (outside the lock).
    @discardableResult
    func mutateAndNotify<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        let (result, ready) = try withLock { state in
            let result = try body(&state)
            var waiters = state.waiters
            let ready = waiters.takeSatisfied(by: state)
            state.waiters = waiters
            return (result, ready)
        }
        for ticket in ready {
            ticket.finish(.success(()))
        }
        return result
    }

    /// Returns once `isSatisfied` holds for the state.
    ///
    /// - Throws: ``MockTimeoutError`` if it does not hold within `timeout` seconds.
    func wait(
        timeout: TimeInterval,
        for description: @autoclosure () -> String,
        until isSatisfied: @escaping @Sendable (Value) -> Bool
    ) async throws {
        let description = description()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let ticket = WaitTicket(continuation)
            let isWaiting = withLock { state in
                guard !isSatisfied(state) else { return false }
                state.waiters.add(ticket, until: isSatisfied)
                return true
            }
            guard isWaiting else {
                ticket.finish(.success(()))
                return
            }
            // The safety net holds the ticket only: never the state, whose history may be large.
            ticket.attach(
                Task {
                    do {
                        try await Task.sleep(nanoseconds: UInt64(timeout * 1_000_000_000))
                    } catch {
                        return  // the wait ended first
                    }
                    ticket.finish(
                        .failure(
                            MockTimeoutError(description: "timed out after \(timeout) s waiting for \(description)")
                        )
                    )
                }
            )
        }
    }
}
