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

/// Continuations waiting for a condition on some state; lives inside that state's lock.
///
/// Not thread-safe: keep it in a `ConcurrencySafeContainer` with the state it
/// watches.
struct WaiterList<State>: Sendable {

    private struct Waiter {
        let id: UInt64
        let isSatisfied: @Sendable (State) -> Bool
        let continuation: CheckedContinuation<Void, any Error>
        /// The safety-net timer, cancelled once the waiter is resumed.
        var timeout: Task<Void, Never>?
    }

    /// A waiter taken off the list, to resume outside the lock.
    struct Ready: Sendable {
        let continuation: CheckedContinuation<Void, any Error>
        let timeout: Task<Void, Never>?

        func resume() {
            timeout?.cancel()
            continuation.resume()
        }
    }

    private var waiters: [Waiter] = []
    private var lastID: UInt64 = 0

    mutating func add(
        _ continuation: CheckedContinuation<Void, any Error>,
        until isSatisfied: @escaping @Sendable (State) -> Bool
    ) -> UInt64 {
        lastID += 1
        waiters.append(Waiter(id: lastID, isSatisfied: isSatisfied, continuation: continuation))
        return lastID
    }

    /// Removes and returns the waiters whose condition holds for `state`.
    mutating func takeSatisfied(by state: State) -> [Ready] {
        var satisfied: [Ready] = []
        waiters.removeAll { waiter in
            guard waiter.isSatisfied(state) else { return false }
            satisfied.append(Ready(continuation: waiter.continuation, timeout: waiter.timeout))
            return true
        }
        return satisfied
    }

    /// Gives waiter `id` its timer; `false` if it was already resumed (cancel the timer then).
    mutating func attach(_ timeout: Task<Void, Never>, to id: UInt64) -> Bool {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return false }
        waiters[index].timeout = timeout
        return true
    }

    /// Removes and returns the waiter `id`, if it is still waiting.
    mutating func take(_ id: UInt64) -> CheckedContinuation<Void, any Error>? {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return waiters.remove(at: index).continuation
    }
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
        for waiter in ready {
            waiter.resume()
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
            let id: UInt64? = withLock { state in
                if isSatisfied(state) { return nil }
                return state.waiters.add(continuation, until: isSatisfied)
            }
            guard let id else {
                continuation.resume()
                return
            }
            Task {
                try? await Task.sleep(nanoseconds: UInt64(timeout * 1_000_000_000))
                let expired = withLock { $0.waiters.take(id) }
                expired?.resume(
                    throwing: MockTimeoutError(description: "timed out after \(timeout) s waiting for \(description)")
                )
            }
        }
    }
}
