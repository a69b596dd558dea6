import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// A biometric failure that says nothing about the person at the device never ends the session:
/// a cancelled prompt, one the system took down or could not show (a launch in the background, an
/// extension that cannot prompt), a device without biometry. Only a failed match signs out.
@Suite("Biometric failures that say nothing about the person keep the session")
struct ManagerBiometricFailureTests {

    /// A manager whose stored session has biometrics on, launched with a handle whose prompt ends
    /// with `outcome`.
    private static func launchGated(
        failingWith error: BiometricAuthenticationError
    ) async throws -> (harness: ManagerHarness, stored: ManagedSession) {
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        var stored = try await issuedSession(by: server, at: clock)
        stored.isBiometricAuthenticationEnabled = true
        let harness = ManagerHarness(stored: stored, server: server, clock: clock)
        try await harness.authenticator.resolveNextPrompt(with: .failure(error), timeout: 300)
        await harness.handle.waitForBiometricPrompt()
        await harness.settle()
        return (harness, stored)
    }

    @Test(
        "every failure but a failed match keeps the session: the handle requires manual authentication, the store keeps it, nothing is revoked",
        arguments: BiometricAuthenticationError.allCases.filter { $0 != .failed }
    )
    func failureThatSaysNothingKeepsTheSession(_ error: BiometricAuthenticationError) async throws {
        let (harness, stored) = try await Self.launchGated(failingWith: error)
        #expect(harness.handle.sessionStatus == .signedIn)
        #expect(harness.handle.isManualAuthenticationRequired, "the person unlocks it with a tap")
        #expect(harness.provider.session?.refreshToken == stored.refreshToken)
        #expect(harness.store.storedSession?.refreshToken == stored.refreshToken, "the shared store keeps it")
        #expect(harness.store.removeCount == 0)
        #expect(harness.logouts.isEmpty)
        #expect(harness.server.revokedTokens.isEmpty, "no token is revoked for a cancelled prompt")
        #expect(harness.provider.allowsSessionSigningOutOnBiometricAuthenticationFailure(with: error) == false)
    }

    @Test("a failed match (the face or finger did not match) signs out, as the spec's default policy does")
    func failedMatchSignsOut() async throws {
        let (harness, stored) = try await Self.launchGated(failingWith: .failed)
        #expect(harness.handle.sessionStatus == .signedOut)
        #expect(harness.provider.session == nil)
        #expect(harness.store.storedSession == nil)
        try await waitUntil(timeout: 300) { harness.server.revokedTokens.contains(stored.refreshToken ?? "") }
    }

    @Test("an app that treats a locked-out device as a stranger's says so in the configuration")
    func configuredFailuresSignOut() {
        var configuration = ManagedSessionProvider.Configuration()
        #expect(configuration.biometricFailuresEndingSession == [.failed])
        configuration.biometricFailuresEndingSession.insert(.biometryLockedout)
        let provider = ManagedSessionProvider(
            store: MockSessionStore(),
            remote: InProcessAuthorizationServer(clock: ManualClock()),
            configuration: configuration
        )
        #expect(provider.allowsSessionSigningOutOnBiometricAuthenticationFailure(with: .biometryLockedout))
        #expect(provider.allowsSessionSigningOutOnBiometricAuthenticationFailure(with: .failed))
        #expect(!provider.allowsSessionSigningOutOnBiometricAuthenticationFailure(with: .canceledBySystem))
    }

    @Test(
        "every LocalAuthentication error code: only authenticationFailed (-1) may sign out; notInteractive (-1004), systemCancel (-4), userCancel (-2) and the rest keep the session"
    )
    func localAuthenticationCodes() {
        let provider = ManagedSessionProvider(
            store: MockSessionStore(),
            remote: InProcessAuthorizationServer(clock: ManualClock())
        )
        // LAError.Code's raw values (LAError.h), and a code Apple may add.
        let codes = [-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -1004, -1005, 42]
        for code in codes {
            let error = BiometricAuthenticationError(localAuthenticationCode: code)
            let signsOut = provider.allowsSessionSigningOutOnBiometricAuthenticationFailure(with: error)
            #expect(signsOut == (code == -1), "LAError code \(code) (\(error))")
        }
    }
}

@Suite("A process that cannot prompt leaves every other process signed in")
struct CrossProcessBiometricTests {

    @Test(
        "an extension that cannot prompt (a real process, the platform's default gate) launches over the shared gated session: it stays locked, the store and the app keep the session"
    )
    func processThatCannotPromptKeepsEveryoneSignedIn() async throws {
        try #require(Worker.url != nil, "the SessionStoreWorker executable is built with the tests")
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url)
        let now = Date().timeIntervalSince1970
        let shared = ManagedSession(
            accessToken: "access-7",
            refreshToken: "refresh-7",
            expiresAt: now + 86_400,
            issuedAt: now,
            user: ManagedUser(identifier: "worker", profile: ["counter": "7"]),
            isBiometricAuthenticationEnabled: true
        )
        try store.save(shared)

        // The app: its own prompt passes.
        let appProvider = ManagedSessionProvider(
            store: store,
            remote: InProcessAuthorizationServer(clock: ManualClock()),
            configuration: .init(checksCredentialState: false, activationSignal: ManualActivationSignal())
        )
        let appHandle = AuthSessionHandle(
            sessionProvider: appProvider,
            biometricAuthenticator: SimulatedBiometricAuthenticator(outcome: .success),
            activationSignal: ManualActivationSignal(),
            clock: SystemClock()
        )
        await appHandle.waitForBiometricPrompt()
        await appHandle.waitUntilIdle()
        #expect(appHandle.sessionStatus == .signedIn)

        // The extension, in a process of its own.
        let lines = try await onOwnThread {
            let worker = try WorkerProcess(["gated-launch", folder.url.path])
            defer { _ = worker.wait() }
            return worker.remainingLines()
        }
        #expect(lines.contains("status signedIn manual true"), "the extension is locked, not signed out: \(lines)")
        #expect(lines.contains("stored 7"), "\(lines)")
        #expect(!lines.contains { $0.hasPrefix("revoked") }, "nothing is revoked: \(lines)")
        #expect(try store.load()?.refreshToken == "refresh-7", "the shared store keeps the session")
        await appProvider.waitUntilIdle()
        await appHandle.waitUntilIdle()
        #expect(appHandle.sessionStatus == .signedIn)
        #expect(appProvider.session?.refreshToken == "refresh-7")
    }
}
