import AuthSession
import AuthSessionInterface
import Foundation

/// A biometric authenticator whose prompts stay on screen until the test ends them.
///
/// ```swift
/// let authenticator = MockBiometricAuthenticator()
/// // ... drive the handle until it presents a prompt ...
/// try await authenticator.resolveNextPrompt(with: .success)
/// ```
///
/// Prompts end in the order they were presented. A prompt whose task is cancelled ends with
/// `BiometricAuthenticationError.canceledBySystem`.
///
/// All operations are thread-safe.
public final class MockBiometricAuthenticator: BiometricAuthenticator {

    /// How a prompt ends.
    public enum Outcome: Hashable, Sendable {
        /// The user is authenticated.
        case success
        /// The prompt fails with the given error.
        case failure(BiometricAuthenticationError)

        var result: Result<Void, BiometricAuthenticationError> {
            switch self {
            case .success: .success(())
            case .failure(let error): .failure(error)
            }
        }
    }

    private struct PendingPrompt {
        let id: UInt64
        let continuation: CheckedContinuation<Result<Void, BiometricAuthenticationError>, Never>
    }

    private struct State: WaitableState {
        var pending: [PendingPrompt] = []
        var automaticOutcome: Outcome?
        var cancelledBeforeRegistration: Set<UInt64> = []
        var lastID: UInt64 = 0
        var reasons: [String] = []
        var waiters = WaiterList<State>()
    }

    private let state = ConcurrencySafeContainer(State())

    /// Creates an authenticator with no prompts.
    public init() {}

    /// Presents a prompt and waits until the test ends it.
    ///
    /// - Parameter reason: Recorded in ``reasons``.
    /// - Throws: The failure the test chose, or `.canceledBySystem` if the task is cancelled.
    public func authenticate(reason: String) async throws(BiometricAuthenticationError) {
        let id = state.withLock { state in
            state.lastID += 1
            return state.lastID
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let immediate = state.mutateAndNotify { state -> Result<Void, BiometricAuthenticationError>? in
                    if state.cancelledBeforeRegistration.remove(id) != nil { return .failure(.canceledBySystem) }
                    state.reasons.append(reason)
                    if let outcome = state.automaticOutcome { return outcome.result }
                    state.pending.append(PendingPrompt(id: id, continuation: continuation))
                    return nil
                }
                if let immediate {
                    continuation.resume(returning: immediate)
                }
            }
        } onCancel: {
            let prompt = state.mutateAndNotify { state in
                guard let index = state.pending.firstIndex(where: { $0.id == id }) else {
                    state.cancelledBeforeRegistration.insert(id)
                    return nil as PendingPrompt?
                }
                return state.pending.remove(at: index)
            }
            prompt?.continuation.resume(returning: .failure(.canceledBySystem))
        }
        try result.get()
    }

    /// When set, every prompt presented from then on ends at once with this outcome (and is still
    /// counted in ``promptCount``); prompts already on screen stay. `nil` (the default) keeps
    /// prompts up until the test ends them.
    ///
    /// Useful to settle a handle at the end of a test, whatever prompts it still presents.
    public var automaticOutcome: Outcome? {
        get { state.withLock { $0.automaticOutcome } }
        set { state.withLock { $0.automaticOutcome = newValue } }
    }

    /// Ends the oldest prompt on screen with `outcome`.
    ///
    /// - Parameter outcome: How the prompt ends.
    /// - Returns: `false` if no prompt was on screen.
    @discardableResult
    public func resolvePendingPrompt(with outcome: Outcome) -> Bool {
        let prompt = state.mutateAndNotify { state in
            state.pending.isEmpty ? nil : state.pending.removeFirst()
        }
        prompt?.continuation.resume(returning: outcome.result)
        return prompt != nil
    }

    /// Waits until a prompt is on screen, then ends the oldest one with `outcome`.
    ///
    /// - Parameters:
    ///   - outcome: How the prompt ends.
    ///   - timeout: A safety net in seconds, not a way to wait.
    /// - Throws: ``MockTimeoutError`` if no prompt appears in time.
    public func resolveNextPrompt(with outcome: Outcome, timeout: TimeInterval = 10) async throws {
        try await waitForPendingPrompt(timeout: timeout)
        resolvePendingPrompt(with: outcome)
    }

    /// Waits until at least one prompt is on screen.
    ///
    /// - Parameter timeout: A safety net in seconds, not a way to wait.
    /// - Throws: ``MockTimeoutError`` if no prompt appears in time.
    public func waitForPendingPrompt(timeout: TimeInterval = 10) async throws {
        try await state.wait(timeout: timeout, for: "a pending biometric prompt") { !$0.pending.isEmpty }
    }

    /// Waits until no prompt is on screen (every prompt resolved or cancelled).
    ///
    /// - Parameter timeout: A safety net in seconds, not a way to wait.
    /// - Throws: ``MockTimeoutError`` if a prompt is still pending when it expires.
    public func waitForNoPendingPrompt(timeout: TimeInterval = 10) async throws {
        try await state.wait(timeout: timeout, for: "no pending biometric prompt") { $0.pending.isEmpty }
    }

    /// Waits until `count` prompts have been presented since creation or ``reset()``.
    ///
    /// - Parameters:
    ///   - count: The number of prompts.
    ///   - timeout: A safety net in seconds, not a way to wait.
    /// - Throws: ``MockTimeoutError`` if they do not appear in time.
    public func waitForPromptCount(_ count: Int, timeout: TimeInterval = 10) async throws {
        try await state.wait(timeout: timeout, for: "\(count) biometric prompts") { $0.reasons.count >= count }
    }

    /// How many prompts are on screen now.
    public var pendingPromptCount: Int {
        state.withLock { $0.pending.count }
    }

    /// How many prompts were presented since creation or ``reset()``.
    public var promptCount: Int {
        state.withLock { $0.reasons.count }
    }

    /// The reason of every prompt presented, in order.
    public var reasons: [String] {
        state.withLock { $0.reasons }
    }

    /// Forgets the presented prompts; prompts on screen stay on screen.
    public func reset() {
        state.withLock { $0.reasons = [] }
    }
}
