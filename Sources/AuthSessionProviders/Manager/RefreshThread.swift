import AuthSession
import Foundation

/// The three concurrency mechanisms a refresh runs on, each named, with its reason.
///
/// A refresh takes the store's exclusive access (a blocking lock, across processes for a file
/// store) twice, each time for microseconds, and waits for the server in between with nothing
/// held. Blocking locks are no place for Swift concurrency's cooperative threads (a pool of as
/// many threads as cores: one blocked on another process's lock stalls unrelated tasks), so the
/// refresh runs on a thread of its own, and reaches the async world through these.
enum RefreshThread {

    /// Starts `body` on a new thread named `name`: the refresh's (or a write-back's) own, which
    /// may block on the store's lock and on ``awaitAnswer(of:until:clock:timedOut:)``.
    static func start(named name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.name = name
        thread.start()
    }

    /// Runs `operation` (the exchange with the async remote) and blocks the calling thread, a
    /// refresh's own, until it answers or `deadline` comes on `clock`, whichever is first: then
    /// `operation` is cancelled and the answer is `timedOut`. Why a deadline: a little before the
    /// refresh's lease lapses, another process may take the lease over and present the same
    /// refresh token; this one must have stopped waiting for its answer by then.
    static func awaitAnswer<Answer: Sendable>(
        of operation: @escaping @Sendable () async -> Answer,
        until deadline: Date,
        clock: any AuthSessionClock,
        timedOut: Answer
    ) -> Answer {
        let answer = ConcurrencySafeContainer<Answer?>(nil)
        let done = DispatchSemaphore(value: 0)
        /// The first answer wins; the other is dropped.
        @Sendable func settle(_ value: Answer) -> Bool {
            answer.withLock { answer in
                defer { if answer == nil { answer = value } }
                return answer == nil
            }
        }
        let exchange = Task.detached {
            let result = await operation()
            if settle(result) { done.signal() }
        }
        let watchdog = Task.detached {
            do {
                try await clock.sleep(until: deadline)
            } catch {
                return
            }
            if settle(timedOut) {
                exchange.cancel()
                done.signal()
            }
        }
        done.wait()
        watchdog.cancel()
        return answer.withLock { $0 } ?? timedOut
    }

    /// Blocks the calling thread, a refresh's own, until `wake` is signalled (a change notice, or
    /// the refresh's flight ended) or `deadline` comes on `clock`. Why: a refresh that found
    /// another process's lease waits for that process's commit with nothing held, and looks
    /// again at the latest at `deadline` in case a notice was missed.
    static func sleep(until deadline: Date, clock: any AuthSessionClock, orUntilSignalled wake: DispatchSemaphore) {
        let timer = Task.detached {
            try? await clock.sleep(until: deadline)
            wake.signal()
        }
        wake.wait()
        timer.cancel()
    }
}
