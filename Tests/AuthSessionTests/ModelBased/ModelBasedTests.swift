import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSession

/// Where a model-based run went wrong: enough to replay it.
struct ModelFailure: Error, CustomStringConvertible {
    let seed: UInt64
    /// The inputs up to and including the first step that failed: the shortest failing prefix.
    let prefix: [ModelInput]
    let problem: String
    /// The prefix with every input removed that the failure does not need (greedy shrinking).
    var shrunk: [ModelInput]?

    var description: String {
        var text = """
            model-based run failed (replay: AUTH_SESSION_MODEL_SEED=\(seed) AUTH_SESSION_MODEL_SEQUENCES=1 swift test --filter ModelBasedTests)
            \(problem)
            shortest failing prefix (\(prefix.count) inputs):
            \(Self.list(prefix))
            """
        if let shrunk, shrunk.count < prefix.count {
            text += "\nthe same failure needs only these \(shrunk.count) inputs:\n\(Self.list(shrunk))"
        }
        return text
    }

    private static func list(_ inputs: [ModelInput]) -> String {
        inputs.enumerated().map { "  \($0.offset + 1). \($0.element)" }.joined(separator: "\n")
    }
}

/// Drives one random input sequence through a real handle and the reference model, checking
/// after every step that they agree and that the invariants hold.
struct ModelRun {
    let seed: UInt64
    let inputs: [ModelInput]
    /// Whether the activation signal stands for an app lifecycle (half the runs each way).
    let hasApplicationLifecycle: Bool

    let mutation: ReferenceModel.Mutation?

    init(seed: UInt64, length: Int, mutation: ReferenceModel.Mutation? = nil) {
        self.seed = seed
        self.mutation = mutation
        var generator = SeededRandomNumberGenerator(seed: seed)
        hasApplicationLifecycle = Bool.random(using: &generator)
        // A third of the runs start with what may come before the launch fetch: failed fetches,
        // sign-outs, a session appearing, biometrics switched on, activations.
        var inputs = ModelInput.launchPrelude(using: &generator)
        while inputs.count < length {
            inputs.append(ModelInput.random(using: &generator))
        }
        self.inputs = Array(inputs.prefix(max(length, 0)))
    }

    private init(seed: UInt64, inputs: [ModelInput], hasApplicationLifecycle: Bool, mutation: ReferenceModel.Mutation?)
    {
        self.seed = seed
        self.inputs = inputs
        self.hasApplicationLifecycle = hasApplicationLifecycle
        self.mutation = mutation
    }

    /// Runs the sequence and, if it fails, shrinks the failing prefix.
    func check() async -> ModelFailure? {
        guard var failure = await run() else { return nil }
        var shrunk = failure.prefix
        var index = shrunk.count - 2
        while index >= 0 {
            var candidate = shrunk
            candidate.remove(at: index)
            let candidateRun = ModelRun(
                seed: seed,
                inputs: candidate,
                hasApplicationLifecycle: hasApplicationLifecycle,
                mutation: mutation
            )
            if await candidateRun.run() != nil {
                shrunk = candidate
            }
            index -= 1
        }
        failure.shrunk = shrunk
        return failure
    }

    /// Runs the sequence; checks delegate callbacks after every step when `checkingCallbacksEveryStep`
    /// (slower), otherwise once at the end.
    func run(checkingCallbacksEveryStep: Bool = false) async -> ModelFailure? {
        let harness = Harness(expiresIn: 3600, hasApplicationLifecycle: hasApplicationLifecycle)
        var model = ReferenceModel(hasApplicationLifecycle: hasApplicationLifecycle)
        model.mutation = mutation
        var gate = GateWatch()
        for (index, input) in inputs.enumerated() {
            let before = harness.handle.sessionStatus
            let hadFetchResult = model.hasFetchResult
            let promptWasUp = model.isPromptOnScreen
            let promptsBefore = harness.authenticator.promptCount
            let biometricsRequired = harness.provider.isBioMetricAuthenticationEnabled
            do {
                try await apply(input, to: harness, promptIsUp: promptWasUp)
            } catch {
                return failure(at: index, "step failed: \(error)")
            }
            model.apply(input)
            // A prompt the step abandoned is taken down by the handle: let that finish.
            if model.abandonedPrompt {
                guard await completes(within: 10, { await harness.handle.waitForBiometricPrompt() }) else {
                    return failure(at: index, "the handle never took down the prompt the step abandoned")
                }
            }
            // A prompt the step presented appears on a task of the handle's: let it appear
            // before the next input, so that the prompt count can be checked exactly.
            if model.isPromptOnScreen {
                do {
                    try await harness.authenticator.waitForPendingPrompt(timeout: 10)
                } catch {
                    return failure(at: index, "the model shows a prompt, the authenticator never got one")
                }
            }

            if let problem = disagreement(harness, model)
                ?? invariantViolation(harness, input, before: before, hadFetchResult: hadFetchResult)
                ?? gate.violation(
                    after: input,
                    from: before,
                    to: harness.handle.sessionStatus,
                    biometricsRequired: biometricsRequired,
                    prompted: harness.authenticator.promptCount > promptsBefore
                )
            {
                return failure(at: index, problem)
            }
            if checkingCallbacksEveryStep, let problem = await callbackMismatch(harness, model) {
                return failure(at: index, problem)
            }
        }
        if let problem = await callbackMismatch(harness, model) {
            if !checkingCallbacksEveryStep {
                return await run(checkingCallbacksEveryStep: true) ?? failure(at: inputs.count - 1, problem)
            }
            return failure(at: inputs.count - 1, problem)
        }
        let published = harness.provider.publishedEvents.filter {
            if case .sessionSignedOut = $0 { return true }
            return false
        }
        let logouts = harness.recorder.events.filter {
            if case .logout = $0 { return true }
            return false
        }
        if published.count != logouts.count {
            return failure(
                at: inputs.count - 1,
                "\(published.count) sessionSignedOut events but \(logouts.count) logout callbacks"
            )
        }
        return nil
    }

    private func failure(at index: Int, _ problem: String) -> ModelFailure {
        ModelFailure(seed: seed, prefix: Array(inputs[...index]), problem: problem)
    }

    // MARK: - Driving the real handle

    private func apply(_ input: ModelInput, to harness: Harness, promptIsUp: Bool) async throws {
        let provider = harness.provider
        switch input {
        case .fetchingSession: provider.publish(.fetchingSession)
        case .sessionFetched(let initial): provider.publish(.sessionFetched(isInitialFetch: initial))
        case .sessionFetchFailed: provider.publish(.sessionFetchFailed(URLError(.notConnectedToInternet)))
        case .sessionSignIn: provider.publish(.sessionSignIn)
        case .sessionSignedOut(let withError):
            provider.publish(.sessionSignedOut(error: withError ? URLError(.userAuthenticationRequired) : nil))
        case .sessionUpdated: provider.publish(.sessionUpdated(provider.session))
        case .unexpectedError: provider.publish(.unexpectedError(.sessionMalformed))
        case .setSession(let seconds): provider.session = seconds.map { harness.session(expiresIn: $0) }
        case .advanceClock(let seconds): harness.clock.advance(by: seconds)
        case .setLocalValidation(let value): provider.allowsLocalSessionValidation = value
        case .setAutoRefresh(let value): provider.isSessionAutoRefreshEnabled = value
        case .setBiometricEnabled(let value): provider.isBioMetricAuthenticationEnabled = value
        case .setKeptBiometricErrors(let errors): provider.biometricErrorsThatKeepSession = errors
        case .setSignOutBehavior(.publishes): provider.signOutBehavior = .clearsSessionAndPublishes
        case .setSignOutBehavior(.throwing): provider.signOutBehavior = .throwing(URLError(.timedOut))
        case .setSignOutBehavior(.silent): provider.signOutBehavior = .silent
        case .activation: harness.activation.fire()
        case .manualAuthenticationRequest: harness.handle.requestManualAuthentication()
        case .promptOutcome(let outcome):
            guard promptIsUp else { return }
            try await harness.authenticator.resolveNextPrompt(with: outcome)
            guard await completes(within: 10, { await harness.handle.waitForBiometricPrompt() }) else {
                throw MockTimeoutError(description: "the handle never applied the prompt's outcome")
            }
        case .appSignsIn(let seconds):
            provider.session = harness.session(expiresIn: seconds)
            provider.publish(.sessionSignIn)
        case .appSignsOut:
            try? provider.signout()
        }
    }

    // MARK: - Checks

    private func disagreement(_ harness: Harness, _ model: ReferenceModel) -> String? {
        let handle = harness.handle
        var problems: [String] = []
        if handle.sessionStatus != model.status {
            problems.append("status: handle \(handle.sessionStatus), model \(model.status)")
        }
        if handle.isManualAuthenticationRequired != model.isManualAuthenticationRequired {
            problems.append(
                "manual authentication: handle \(handle.isManualAuthenticationRequired), model \(model.isManualAuthenticationRequired)"
            )
        }
        if handle.isBiometricAuthenticationInProcess != model.isPromptOnScreen {
            problems.append(
                "prompt on screen: handle \(handle.isBiometricAuthenticationInProcess), model \(model.isPromptOnScreen)"
            )
        }
        if harness.provider.signOutCount != model.providerSignOutCalls {
            problems.append("provider sign-outs: \(harness.provider.signOutCount), model \(model.providerSignOutCalls)")
        }
        if harness.authenticator.promptCount != model.promptsPresented {
            problems.append("prompts presented: \(harness.authenticator.promptCount), model \(model.promptsPresented)")
        }
        if harness.authenticator.pendingPromptCount != (model.isPromptOnScreen ? 1 : 0) {
            problems.append(
                "prompts pending: \(harness.authenticator.pendingPromptCount), model \(model.isPromptOnScreen ? 1 : 0)"
            )
        }
        if (harness.provider.session == nil) != (model.expiresAt == nil) {
            problems.append(
                "provider session present: \(harness.provider.session != nil), model \(model.expiresAt != nil)"
            )
        }
        return problems.isEmpty ? nil : problems.joined(separator: "; ")
    }

    private func invariantViolation(
        _ harness: Harness,
        _ input: ModelInput,
        before: AuthSessionStatus,
        hadFetchResult: Bool
    ) -> String? {
        let handle = harness.handle
        let status = handle.sessionStatus
        if status == .signedOut && handle.isManualAuthenticationRequired {
            return "invariant: manual authentication required while signed out"
        }
        if harness.authenticator.pendingPromptCount > 1 {
            return "invariant: \(harness.authenticator.pendingPromptCount) prompts pending"
        }
        if status == .biometricAuthentication && harness.authenticator.pendingPromptCount != 1 {
            return "invariant: biometricAuthentication with \(harness.authenticator.pendingPromptCount) prompts pending"
        }
        if status == .validating {
            return "invariant: resting in validating"
        }
        if case .activation = input, !hadFetchResult, status != before {
            return "invariant: an activation before the first fetch moved \(before) → \(status)"
        }
        if before == .signedOut && status != .signedOut && !input.mayLeaveSignedOut {
            return "invariant: '\(input)' left signedOut for \(status)"
        }
        return nil
    }

    private func callbackMismatch(_ harness: Harness, _ model: ReferenceModel) async -> String? {
        await harness.recorder.drain()
        let actual = harness.recorder.events.map(Self.token)
        guard actual != model.callbacks else { return nil }
        let common = zip(actual, model.callbacks).prefix { $0 == $1 }.count
        return """
            callbacks differ after \(common) in common:
              handle: \(actual.dropFirst(common).prefix(6))
              model:  \(model.callbacks.dropFirst(common).prefix(6))
            """
    }

    /// The model's token for a recorded callback.
    static func token(_ event: AuthSessionDelegateEvent) -> String {
        switch event {
        case .sessionStatusChanged(let old, let new): "status \(old)→\(new)"
        case .sessionFetch(let isInitial): isInitial ? "fetch initial" : "fetch refresh"
        case .login: "login"
        case .logout: "logout"
        case .userUpdate: "userUpdate"
        case .failure(let error): "failure \(error.caseName)"
        }
    }
}

/// The biometric gate as the README promises it, checked from the outside, independently of the
/// reference model: with biometrics required, the status reaches `.signedIn` only through a
/// prompt, an interactive sign-in, or while the gate is already open (signed in or prompted since
/// launch or the last sign-out).
struct GateWatch {
    /// Signed in, or prompted, since launch or the last time the status was `.signedOut`.
    private var isOpen = false

    mutating func violation(
        after input: ModelInput,
        from before: AuthSessionStatus,
        to after: AuthSessionStatus,
        biometricsRequired: Bool,
        prompted: Bool
    ) -> String? {
        let signsIn = input.kind == "sessionSignIn" || input.kind == "appSignsIn"
        let answersPrompt = input.kind == "promptOutcome" && before == .biometricAuthentication
        var problem: String?
        if after == .signedIn && before != .signedIn && biometricsRequired && !isOpen && !signsIn && !answersPrompt
            && !prompted
        {
            problem =
                "gate: '\(input)' moved \(before) → signedIn with biometrics required and no prompt since the last sign-out"
        }
        if after == .signedOut {
            isOpen = false
        } else if after == .signedIn || prompted || after == .biometricAuthentication {
            isOpen = true
        }
        return problem
    }
}

@Suite("Model-based random testing")
struct ModelBasedTests {

    private static let environment = ProcessInfo.processInfo.environment
    /// The first sequence's seed; sequence `n` uses `seed + n`.
    static let seed = environment["AUTH_SESSION_MODEL_SEED"].flatMap { UInt64($0) } ?? 0x5EED_A11C
    static let sequences = environment["AUTH_SESSION_MODEL_SEQUENCES"].flatMap { Int($0) } ?? 10_000
    static let length = environment["AUTH_SESSION_MODEL_LENGTH"].flatMap { Int($0) } ?? 60
    static let shards = 4

    @Test(
        "random input sequences: the handle agrees with the reference model and the invariants hold",
        arguments: 0..<shards
    )
    func randomSequences(shard: Int) async {
        for index in stride(from: shard, to: Self.sequences, by: Self.shards) {
            let run = ModelRun(seed: Self.seed &+ UInt64(index), length: Self.length)
            if let failure = await run.check() {
                Issue.record("\(failure)")
                return
            }
        }
    }

    @Test("the generator is seeded: the same seed gives the same inputs")
    func generatorIsReplayable() {
        let first = ModelRun(seed: 42, length: 200).inputs.map(\.description)
        let second = ModelRun(seed: 42, length: 200).inputs.map(\.description)
        let other = ModelRun(seed: 43, length: 200).inputs.map(\.description)
        #expect(first == second)
        #expect(first != other)
    }

    @Test("the generator reaches every kind of input and every expiry edge")
    func generatorCoversInputs() {
        let inputs = ModelRun(seed: 7, length: 5_000).inputs
        #expect(Set(inputs.map(\.kind)).count == 19)
        let descriptions = inputs.map(\.description)
        for fragment in [
            "119.5 s", "120.0 s", "120.5 s", "179.5 s", "180.0 s", "180.5 s", "cleared", "throwing", "silent", "true)",
        ] {
            #expect(descriptions.contains { $0.contains(fragment) }, "no input mentions \(fragment)")
        }
        for error in BiometricAuthenticationError.allCases {
            #expect(descriptions.contains("prompt outcome failure(.\(error))"))
        }
    }

    @Test("a model that disagrees with the handle is caught at its first diverging step, with seed and shrunk inputs")
    func failuresAreReported() async throws {
        let run = ModelRun(seed: Self.seed, length: Self.length, mutation: .ignoresSignIn)
        let firstSignIn = try #require(run.inputs.firstIndex { $0.kind == "sessionSignIn" || $0.kind == "appSignsIn" })
        let failure = try #require(await run.check())
        #expect(failure.prefix.count == firstSignIn + 1)
        #expect(failure.description.contains("AUTH_SESSION_MODEL_SEED=\(Self.seed)"))
        let shrunk = try #require(failure.shrunk)
        #expect(shrunk.count <= failure.prefix.count)
        #expect(shrunk.contains { $0.kind == "sessionSignIn" || $0.kind == "appSignsIn" })
    }
}

/// Whether `operation` finishes within `seconds`; a safety net that turns a hang into a reported
/// failure (the operation is left running if it never finishes).
func completes(within seconds: TimeInterval, _ operation: @escaping @Sendable () async -> Void) async -> Bool {
    let settled = ConcurrencySafeContainer(false)
    return await withCheckedContinuation { continuation in
        let resume: @Sendable (Bool) -> Void = { finished in
            let first = settled.withLock { settled in
                defer { settled = true }
                return !settled
            }
            if first {
                continuation.resume(returning: finished)
            }
        }
        let timer = Task {
            do {
                try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
            } catch {
                return  // the operation finished first
            }
            resume(false)
        }
        Task {
            await operation()
            timer.cancel()
            resume(true)
        }
    }
}
