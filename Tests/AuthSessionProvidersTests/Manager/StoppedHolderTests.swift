import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("A process stopped inside the store's exclusive access")
struct StoppedHolderTests {

    /// Starts a worker that takes the store's exclusive access in `folder` and stops itself there.
    private func stoppedHolder(in folder: TemporaryFolder) throws -> WorkerProcess {
        let worker = try WorkerProcess(["hold-and-stop", folder.url.path])
        #expect(worker.readLine() == "holding")
        return worker
    }

    @Test("the wait for it is bounded, and the waiter is told why: another process holds the store")
    func waitIsBoundedAndExplained() async throws {
        try #require(Worker.url != nil, "the SessionStoreWorker executable is built with the tests")
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let worker = try stoppedHolder(in: folder)
        defer { worker.kill() }
        let store = FileSessionStore(directory: folder.url, exclusiveAccessWaitLimit: 0.5)
        let outcome = try await onOwnThread { () -> String in
            do {
                try store.withExclusiveAccess {}
                return "entered while a stopped process held it"
            } catch SessionStoreError.unavailable(let reason) {
                return reason
            } catch {
                return "\(error)"
            }
        }
        #expect(outcome.contains("another process has held the store's exclusive access"), "\(outcome)")
        #expect(outcome.contains("stopped"), "\(outcome)")
    }

    @Test("a refresh behind it fails as the store being unavailable, with the reason, and leaves the session as it was")
    func refreshBehindItIsToldWhy() async throws {
        try #require(Worker.url != nil, "the SessionStoreWorker executable is built with the tests")
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        let store = FileSessionStore(directory: folder.url, exclusiveAccessWaitLimit: 0.5)
        server.register(alice, password: alicePassword)
        let provider = ManagedSessionProvider(
            store: store,
            remote: server,
            retryPolicy: immediateRetries,
            clock: clock,
            configuration: .init(checksCredentialState: false, activationSignal: ManualActivationSignal())
        )
        let session = try await provider.signIn(with: .password(username: alice.identifier, password: alicePassword))

        let worker = try stoppedHolder(in: folder)
        defer { worker.kill() }
        let reason: String
        do {
            let refreshed = try await provider.refresh()
            Issue.record("refreshed while a stopped process held the store: \(refreshed)")
            return
        } catch {
            guard case .storage(.unavailable(let why)) = error else {
                Issue.record("expected the store to be unavailable, got \(error)")
                return
            }
            reason = why
        }
        #expect(reason.contains("another process"))
        #expect(provider.session == session, "the session stays as it was")
        #expect(server.refreshLog.isEmpty, "nothing was presented")
    }
}

@Suite("A store that refuses itself at launch")
struct StoreRefusedAtLaunchTests {

    @Test(
        "a session file other users may read: the launch reports it, and a sign-in fails at once with the same cause, before the server issues tokens; once the file is fixed, sign-ins work"
    )
    func signInFailsAtOnceUntilTheFileIsFixed() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        let store = FileSessionStore(directory: folder.url)
        try store.save(try await issuedSession(by: server, at: clock))
        chmod(store.fileURL.path, 0o644)
        let issuedBefore = server.obtainCount

        let provider = ManagedSessionProvider(
            store: store,
            remote: server,
            retryPolicy: immediateRetries,
            clock: clock,
            configuration: .init(checksCredentialState: false, activationSignal: ManualActivationSignal())
        )
        let recorder = RecordingAuthSessionDelegate()
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: ManualActivationSignal(),
            clock: clock
        )
        handle.subscribeDelegate(recorder, receive: recorder.queue)
        await provider.waitUntilIdle()
        #expect(provider.session == nil)

        do {
            _ = try await provider.signIn(with: .password(username: alice.identifier, password: alicePassword))
            Issue.record("signed in over a store that refuses itself")
        } catch {
            guard case .storage(.insecurePermissions) = error else {
                Issue.record("expected the store's refusal, got \(error)")
                return
            }
        }
        #expect(server.obtainCount == issuedBefore, "no tokens were issued for nothing")

        chmod(store.fileURL.path, 0o600)
        _ = try await provider.signIn(with: .password(username: alice.identifier, password: alicePassword))
        #expect(provider.session != nil)
        withExtendedLifetime(handle) {}
    }
}
