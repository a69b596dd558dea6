import AuthSession
import Foundation

/// How everything in the session manager retries a transient failure: how many times, how long
/// to wait between tries, and how a server's `Retry-After` counts.
///
/// The wait before retry *n* (1 for the first retry) is drawn uniformly from zero to
/// `min(maximumDelay, initialDelay × multiplier^(n−1))` ("full jitter"), so clients that failed
/// together do not retry together. When the server sent `Retry-After`, the wait is at least
/// that long; a `Retry-After` beyond ``maximumRetryAfter`` ends the retries instead (the error is
/// thrown, and the caller tries again at its next occasion). Only errors whose
/// ``RemoteAuthError/isRetryable`` is true are retried: terminal and misconfiguration errors are
/// thrown at once.
///
/// Waits run on an `AuthSessionClock`, so a test drives them with a manual clock.
///
/// All operations are thread-safe.
public struct RetryPolicy: Sendable, Hashable {

    /// Retries after the first try; 0 means one try only.
    public var maximumRetries: Int

    /// The cap of the first retry's wait, in seconds.
    public var initialDelay: TimeInterval

    /// How much the cap grows with each retry.
    public var multiplier: Double

    /// The largest cap of any wait, in seconds.
    public var maximumDelay: TimeInterval

    /// The longest `Retry-After` the policy waits for, in seconds; a longer one ends the retries.
    public var maximumRetryAfter: TimeInterval

    /// Creates a policy.
    ///
    /// Negative or non-finite values are treated as zero, and a multiplier below 1 as 1.
    ///
    /// - Parameters:
    ///   - maximumRetries: Retries after the first try.
    ///   - initialDelay: The cap of the first retry's wait.
    ///   - multiplier: How much the cap grows with each retry.
    ///   - maximumDelay: The largest cap.
    ///   - maximumRetryAfter: The longest `Retry-After` waited for.
    public init(
        maximumRetries: Int = 3,
        initialDelay: TimeInterval = 1,
        multiplier: Double = 2,
        maximumDelay: TimeInterval = 30,
        maximumRetryAfter: TimeInterval = 120
    ) {
        func clean(_ value: Double) -> Double { value.isFinite ? max(0, value) : 0 }
        self.maximumRetries = max(0, maximumRetries)
        self.initialDelay = clean(initialDelay)
        self.multiplier = multiplier.isFinite ? max(1, multiplier) : 1
        self.maximumDelay = clean(maximumDelay)
        self.maximumRetryAfter = clean(maximumRetryAfter)
    }

    /// Three retries, waits capped at 1, 2 and 4 seconds, `Retry-After` up to two minutes.
    public static let standard = RetryPolicy()

    /// One try, no retry.
    public static let never = RetryPolicy(maximumRetries: 0)

    /// The cap of retry `retry`'s wait (1 for the first retry), before jitter.
    ///
    /// - Parameter retry: The retry's number, from 1.
    /// - Returns: Seconds.
    public func delayCap(forRetry retry: Int) -> TimeInterval {
        let exponent = Double(max(0, retry - 1))
        let cap = initialDelay * pow(multiplier, exponent)
        return cap.isFinite ? min(maximumDelay, cap) : maximumDelay
    }

    /// The wait before retry `retry`, or `nil` when the policy gives up.
    ///
    /// - Parameters:
    ///   - retry: The retry's number, from 1.
    ///   - error: The error the previous try threw.
    ///   - now: The current date, for a `Retry-After` date.
    ///   - generator: The randomness for the jitter.
    /// - Returns: Seconds to wait, or `nil`: the retry budget is spent, the error is not
    ///   retryable, or its `Retry-After` is longer than ``maximumRetryAfter``.
    public func delay(
        beforeRetry retry: Int,
        after error: RemoteAuthError,
        now: Date,
        using generator: inout some RandomNumberGenerator
    ) -> TimeInterval? {
        guard error.isRetryable, retry >= 1, retry <= maximumRetries else { return nil }
        let cap = delayCap(forRetry: retry)
        let jittered = cap > 0 ? Double.random(in: 0...cap, using: &generator) : 0
        guard let retryAfter = error.retryAfter else { return jittered }
        let asked = retryAfter.delay(from: now)
        guard asked <= maximumRetryAfter else { return nil }
        return max(jittered, asked)
    }

    /// Runs `operation`, retrying it per the policy, waiting on `clock`.
    ///
    /// Cancelling the calling task ends the waits and the retries: the error then has reason
    /// ``RemoteAuthError/Reason/cancelled``, unless `operation` already threw another.
    ///
    /// - Parameters:
    ///   - clock: The clock the waits sleep on.
    ///   - isIdempotent: Whether `operation` may safely take effect twice. A refresh at a server
    ///     that rotates refresh tokens may not: pass `false`, and a failure whose
    ///     ``RemoteAuthError/isOutcomeUncertain`` is true (a timeout, a reset after sending) is
    ///     thrown instead of retried, because the server may have spent the token already.
    ///   - generator: The randomness for the jitter; the system's by default.
    ///   - operation: The call to try. It receives the try's number, from 1.
    /// - Returns: What `operation` returned.
    /// - Throws: The last ``RemoteAuthError``, once the policy gives up.
    public func run<Value>(
        clock: any AuthSessionClock,
        isIdempotent: Bool = true,
        using generator: some RandomNumberGenerator = SystemRandomNumberGenerator(),
        _ operation: (_ attempt: Int) async throws(RemoteAuthError) -> Value
    ) async throws(RemoteAuthError) -> Value {
        var generator = generator
        var attempt = 1
        while true {
            do {
                return try await operation(attempt)
            } catch {
                guard !Task.isCancelled, isIdempotent || !error.isOutcomeUncertain,
                    let wait = delay(beforeRetry: attempt, after: error, now: clock.now, using: &generator)
                else {
                    throw error
                }
                do {
                    try await clock.sleep(for: wait)
                } catch {
                    throw RemoteAuthError(.cancelled)
                }
                attempt += 1
            }
        }
    }
}
