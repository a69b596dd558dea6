import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

@Suite("Unreadable bytes while processes run are no sign-out")
struct CorruptWhileRunningTests {

    @Test(
        "a session file made unreadable while two processes run (real files, real notices): neither signs out, the session is written back, the bytes are kept aside"
    )
    func corruptFileIsNoSignOut() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let clock = ManualClock()
        let server = InProcessAuthorizationServer(clock: clock)
        server.register(alice, password: alicePassword)
        func manager() -> (
            ManagedSessionProvider, RecordingAuthSessionDelegate, AuthSessionHandle<ManagedSessionProvider>
        ) {
            let provider = ManagedSessionProvider(
                store: FileSessionStore(directory: folder.url),
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
            return (provider, recorder, handle)
        }
        let (app, appRecorder, appHandle) = manager()
        let session = try await app.signIn(with: .password(username: alice.identifier, password: alicePassword))
        let (widget, widgetRecorder, widgetHandle) = manager()
        await widget.waitUntilIdle()
        #expect(widget.session?.refreshToken == session.refreshToken)

        // Bytes that are no session replace the file, as a disk error or a foreign writer would.
        let file = folder.url.appendingPathComponent("session.json")
        let garbage = folder.url.appendingPathComponent(".garbage")
        try Data("{\"format\":\"AuthSessionKit.session\",\"version\":2,\"access".utf8).write(to: garbage)
        chmod(garbage.path, 0o600)
        _ = rename(garbage.path, file.path)

        // The session is back in the file, written back by one of them.
        let store = FileSessionStore(directory: folder.url)
        try await waitUntil(timeout: 300) { (try? store.load())?.refreshToken == session.refreshToken }
        await app.waitUntilIdle()
        await widget.waitUntilIdle()
        await appRecorder.drain()
        await widgetRecorder.drain()
        #expect(app.session?.refreshToken == session.refreshToken)
        #expect(widget.session?.refreshToken == session.refreshToken)
        #expect(appHandle.sessionStatus == .signedIn)
        #expect(widgetHandle.sessionStatus == .signedIn)
        for recorder in [appRecorder, widgetRecorder] {
            #expect(!recorder.events.contains { if case .logout = $0 { true } else { false } }, "\(recorder.events)")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
        #expect(
            names.contains { $0.hasPrefix("session.json.corrupt-") },
            "the unreadable bytes are kept aside: \(names)"
        )
        #expect(!names.contains("session.json.set-aside"), "the save cleared the record")
        #expect(server.revokedTokens.isEmpty)
    }

    @Test(
        "after a set-aside, a load that finds no file reports the set-aside, not 'no session'; a save or a removal ends it"
    )
    func setAsideRecord() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileSessionStore(directory: folder.url)
        try store.save(ManagedSession(accessToken: "a", refreshToken: "r", expiresAt: 2e9, issuedAt: 1e9, user: alice))
        try Data("not json".utf8).write(to: store.fileURL)
        #expect(throws: SessionStoreError.self) { try store.load() }
        do {
            _ = try store.load()
            Issue.record("a set-aside file read as no session")
        } catch .corrupt(_, let setAsideAt) {
            #expect(setAsideAt?.contains("session.json.corrupt-") == true)
        }
        try store.save(ManagedSession(accessToken: "b", refreshToken: "r2", expiresAt: 2e9, issuedAt: 1e9, user: alice))
        #expect(try store.load()?.accessToken == "b")
        try store.remove()
        #expect(try store.load() == nil)
    }

    @Test(
        "unreadable bytes are moved aside only inside the exclusive access: while another process holds it (a save under way), a reader leaves them in place, so that save is never moved and the file never goes missing"
    )
    func setAsideWaitsForTheExclusiveAccess() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // Two stores on one folder: two lock descriptors, as two processes have.
        let writer = FileSessionStore(directory: folder.url, synchronizesWrites: false)
        let reader = FileSessionStore(directory: folder.url, synchronizesWrites: false)
        let kept = ManagedSession(accessToken: "a", refreshToken: "r", expiresAt: 2e9, issuedAt: 1e9, user: alice)
        try writer.save(kept)
        try Data("not json".utf8).write(to: writer.fileURL)
        try writer.withExclusiveAccess {
            // The writer is about to write its session back; the reader hears a notice now.
            let error = #expect(throws: SessionStoreError.self) { try reader.load() }
            #expect(setAside(error) == .some(nil), "moved aside outside the exclusive access")
            #expect(FileManager.default.fileExists(atPath: writer.fileURL.path), "the file went missing")
            try writer.save(kept)
        }
        #expect(try reader.load()?.accessToken == "a", "the written-back session was moved away")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
        #expect(!names.contains { $0.hasPrefix("session.json.corrupt-") }, "\(names)")

        // Free again: the next reader moves the bytes aside, inside the access it takes.
        try Data("not json".utf8).write(to: writer.fileURL)
        let error = #expect(throws: SessionStoreError.self) { try reader.load() }
        #expect(setAside(error)??.contains("session.json.corrupt-") == true)
        // And a load inside the access this thread holds moves them too (no deadlock).
        try writer.save(kept)
        try Data("not json".utf8).write(to: writer.fileURL)
        try reader.withExclusiveAccess {
            let inside = #expect(throws: SessionStoreError.self) { try reader.load() }
            #expect(setAside(inside) != .some(nil))
        }
    }

    /// Where a `.corrupt` error says the bytes went: `.some(nil)` when they were left in place;
    /// `nil` for any other error.
    private func setAside(_ error: SessionStoreError?) -> String?? {
        guard case .corrupt(_, let location)? = error else { return nil }
        return .some(location)
    }
}
