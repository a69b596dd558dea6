import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

private let service = "com.example.app"
private let mainAddress = KeychainItemAddress(service: service, account: "session", accessGroup: nil)
private let afterFirstUnlock = KeychainItemProtection(
    accessibility: .afterFirstUnlockThisDeviceOnly,
    accessControl: nil
)

private func makeStore(
    _ keychain: FakeKeychain,
    accessibility: KeychainSessionStore.Accessibility = .afterFirstUnlockThisDeviceOnly,
    accessControl: KeychainSessionStore.AccessControl? = nil
) -> KeychainSessionStore {
    KeychainSessionStore(
        service: service,
        account: "session",
        accessGroup: nil,
        accessibility: accessibility,
        accessControl: accessControl,
        items: keychain
    )
}

/// A session the in-process server issued, saved in a fake keychain: what an app's launch finds.
private struct StoredSessionFixture {
    let clock: ManualClock
    let server: InProcessAuthorizationServer
    let keychain = FakeKeychain()
    let store: KeychainSessionStore
    let stored: ManagedSession

    init(accessControl: KeychainSessionStore.AccessControl? = nil) async throws {
        let clock = ManualClock()
        self.clock = clock
        server = InProcessAuthorizationServer(clock: clock)
        stored = try await issuedSession(by: server, at: clock)
        store = makeStore(keychain, accessControl: accessControl)
        try store.save(stored)
    }

    /// The app's launch: the manager, its handle (created now, so the store is loaded), a
    /// recorder subscribed right after, and the activation signal both listen to.
    func launch() -> (
        ManualActivationSignal, ManagedSessionProvider, AuthSessionHandle<ManagedSessionProvider>,
        RecordingAuthSessionDelegate
    ) {
        let activation = ManualActivationSignal()
        let provider = ManagedSessionProvider(
            store: store,
            remote: server,
            retryPolicy: immediateRetries,
            clock: clock,
            configuration: .init(checksCredentialState: false, activationSignal: activation)
        )
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: activation,
            clock: clock
        )
        let recorder = RecordingAuthSessionDelegate()
        handle.subscribeDelegate(recorder, receive: recorder.queue)
        return (activation, provider, handle, recorder)
    }
}

/// Expects `body` to throw ``SessionStoreError/unavailable(reason:)``; `otherwise` says what it
/// would mean if it returned.
private func expectUnavailable(
    _ otherwise: String,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) {
    do {
        try body()
        Issue.record(Comment(rawValue: otherwise), sourceLocation: sourceLocation)
    } catch SessionStoreError.unavailable {
    } catch {
        Issue.record("expected unavailable, got \(error)", sourceLocation: sourceLocation)
    }
}

/// The calls that could lose the main item: anything but a read or an add naming it.
private func destructiveCalls(_ keychain: FakeKeychain) -> [FakeKeychain.Operation] {
    keychain.calls.filter { $0.account == "session" && ![.read, .add].contains($0.operation) }.map(\.operation)
}

/// Runs `body(index)` on `count` threads of their own at once, and waits for all of them (a
/// 60-second safety net records a failure instead of hanging).
private func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    // Kept until all have finished, so that no two of them share an identity (`Thread.current`).
    var threads: [Thread] = []
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        threads.append(thread)
        thread.start()
    }
    if group.wait(timeout: .now() + 300) == .timedOut {
        Issue.record("\(count) threads did not finish within 60 s")
    }
    withExtendedLifetime(threads) {}
}

/// Holds every thread's second keychain call until all `count` threads had their first one
/// answered: the widest race two first saves can run into. A generous safety-net timeout lets a
/// waiting thread go (and says so) instead of hanging.
private final class FirstCallsGate: @unchecked Sendable {
    // @unchecked: `calls`, `answered` and `timedOut` are only touched while `condition` is locked.
    private let condition = NSCondition()
    private let count: Int
    private var calls: [ObjectIdentifier: Int] = [:]
    private var answered = 0
    private var timedOut = false

    init(count: Int) {
        self.count = count
    }

    func install(on keychain: FakeKeychain) {
        keychain.beforeCall.withLock { $0 = { [self] _, _ in beforeCall() } }
        keychain.afterCall.withLock { $0 = { [self] _, _ in afterCall() } }
    }

    private func beforeCall() {
        condition.lock()
        defer { condition.unlock() }
        let thread = ObjectIdentifier(Thread.current)
        calls[thread, default: 0] += 1
        guard calls[thread] == 2 else { return }
        let deadline = Date().addingTimeInterval(30)
        while answered < count {
            // The deadline is checked here: `wait(until:)`'s result is not a reliable timeout flag.
            guard Date() < deadline else {
                timedOut = true
                return
            }
            _ = condition.wait(until: deadline)
        }
    }

    private func afterCall() {
        condition.lock()
        defer { condition.unlock() }
        guard calls[ObjectIdentifier(Thread.current)] == 1 else { return }
        answered += 1
        condition.broadcast()
    }

    var didTimeOut: Bool {
        condition.lock()
        defer { condition.unlock() }
        return timedOut
    }
}

@Suite("KeychainSessionStore, against a keychain that answers as Apple's does")
struct KeychainSessionStoreTests {

    @Test("save, load and remove round-trip; each save stamps the item; no probe item is left")
    func roundTrip() throws {
        let keychain = FakeKeychain()
        let store = makeStore(keychain)
        #expect(try store.load() == nil)
        try store.save(sampleSession(counter: 1))
        let firstStamp = try #require(keychain.item(at: mainAddress)?.contents.stamp)
        #expect(try store.load() == sampleSession(counter: 1))
        try store.save(sampleSession(counter: 2))
        #expect(try store.load() == sampleSession(counter: 2))
        #expect(keychain.item(at: mainAddress)?.contents.stamp != firstStamp, "a new stamp for each save")
        #expect(keychain.item(at: mainAddress)?.protection == afterFirstUnlock)
        try store.remove()
        #expect(try store.load() == nil)
        try store.remove()
        #expect(keychain.items.isEmpty, "the probe item is deleted after each look")
    }

    // MARK: - A launch before the first unlock

    @Test(
        "before the first unlock, a read that says 'not found' is not trusted: unavailable, nothing deleted",
        arguments: [KeychainStatus.itemNotFound, .interactionNotAllowed]
    )
    func notFoundBeforeFirstUnlock(answer: KeychainStatus) throws {
        let keychain = FakeKeychain()
        let store = makeStore(keychain)
        try store.save(sampleSession(counter: 7))
        let stored = keychain.item(at: mainAddress)
        keychain.deviceState = .beforeFirstUnlock
        keychain.unreadableAnswer = answer

        #expect(throws: SessionStoreError.self) { try store.load() }
        do {
            _ = try store.load()
        } catch .unavailable(let reason) {
            #expect(!reason.contains("secret"), "no token in the reason")
        } catch {
            Issue.record("expected unavailable, got \(error)")
        }
        #expect(keychain.item(at: mainAddress) == stored, "the item is untouched")
        #expect(destructiveCalls(keychain).isEmpty, "no delete, update or move of the session")

        keychain.deviceState = .unlocked
        #expect(try store.load() == sampleSession(counter: 7))
    }

    @Test("with no item at all before the first unlock, the load is still unavailable: nothing can be known yet")
    func emptyBeforeFirstUnlock() throws {
        let keychain = FakeKeychain(deviceState: .beforeFirstUnlock)
        let store = makeStore(keychain)
        expectUnavailable("a load before the first unlock returned") { _ = try store.load() }
        keychain.deviceState = .unlocked
        #expect(try store.load() == nil, "once unlocked, 'not found' is trusted")
    }

    @Test("a locked device: an after-first-unlock item stays readable; 'not found' is trusted only once unlocked")
    func lockedAfterFirstUnlock() throws {
        let keychain = FakeKeychain()
        let background = makeStore(keychain)
        let foreground = makeStore(keychain, accessibility: .whenUnlockedThisDeviceOnly)
        keychain.deviceState = .locked
        #expect(throws: SessionStoreError.self, "locked: an item of a stricter class may be there") {
            try background.load()
        }
        try background.save(sampleSession(counter: 1))
        #expect(try background.load() == sampleSession(counter: 1), "after the first unlock, readable while locked")
        expectUnavailable("a when-unlocked save succeeded while locked") {
            try foreground.save(sampleSession(counter: 2))
        }
        #expect(try background.load() == sampleSession(counter: 1), "a refused save changes nothing")
        keychain.deviceState = .unlocked
        try background.remove()
        #expect(try background.load() == nil)
    }

    @Test("an item written with a stricter class than the store's is not 'no session' while locked")
    func stricterClassWhileLocked() throws {
        let keychain = FakeKeychain()
        // An earlier version of the app (or its extension) wrote it readable only while unlocked.
        let earlier = makeStore(keychain, accessibility: .whenUnlockedThisDeviceOnly)
        try earlier.save(sampleSession(counter: 3))
        keychain.deviceState = .locked
        let store = makeStore(keychain)
        expectUnavailable("a locked, stricter item read as 'no session'") { _ = try store.load() }
        #expect(destructiveCalls(keychain).isEmpty)
        keychain.deviceState = .unlocked
        #expect(try store.load() == sampleSession(counter: 3))
    }

    @Test(
        "a probe left behind proves nothing: deleted and made again, never taken for 'unlocked'",
        arguments: [true, false]
    )
    func staleProbe(checksUniquenessFirst: Bool) throws {
        let keychain = FakeKeychain(deviceState: .beforeFirstUnlock)
        keychain.checksUniquenessFirst = checksUniquenessFirst
        let store = makeStore(keychain)
        let probe = mainAddress.withAccount(store.probeAccount)
        keychain.plant(Data([0]), at: probe, protection: KeychainSessionStore.probeProtection)
        expectUnavailable("'not found' trusted before the first unlock, because of a stale probe") {
            _ = try store.load()
        }
        keychain.deviceState = .unlocked
        #expect(try store.load() == nil)
        #expect(keychain.items.isEmpty, "the stale probe is gone once unlocked")
    }

    @Test("a removal before the first unlock is unavailable (the item may be there), and deletes once unlocked")
    func removeBeforeFirstUnlock() throws {
        let keychain = FakeKeychain()
        let store = makeStore(keychain)
        try store.save(sampleSession())
        keychain.deviceState = .beforeFirstUnlock
        expectUnavailable("a removal that could not see the item reported success") { try store.remove() }
        #expect(keychain.item(at: mainAddress) != nil)
        keychain.deviceState = .unlocked
        try store.remove()
        #expect(keychain.item(at: mainAddress) == nil)
    }

    /// What happens between a store's "not found" and its probe.
    enum BetweenReadAndProbe: String, CaseIterable, Sendable {
        /// The item was there, hidden before the first unlock; the person unlocks the device.
        case deviceUnlocks
        /// The device was unlocked and there was no item; another process (an extension) writes one.
        case anotherProcessWrites
    }

    @Test(
        "after a probe that says 'unlocked', the load reads again before trusting 'not found'",
        arguments: BetweenReadAndProbe.allCases
    )
    func readAgainAfterProbe(between: BetweenReadAndProbe) throws {
        let keychain = FakeKeychain()
        let store = makeStore(keychain)
        let probeAccount = store.probeAccount
        switch between {
        case .deviceUnlocks:
            try store.save(sampleSession(counter: 4))
            keychain.deviceState = .beforeFirstUnlock
        case .anotherProcessWrites:
            break
        }
        let stored = SessionFormat.encode(sampleSession(counter: 4))
        keychain.beforeCall.withLock {
            $0 = { [keychain] operation, address in
                guard operation == .add, address.account == probeAccount else { return }
                switch between {
                case .deviceUnlocks:
                    keychain.deviceState = .unlocked
                case .anotherProcessWrites:
                    if keychain.item(at: mainAddress) == nil {
                        keychain.plant(stored, at: mainAddress, stamp: Data([1]), protection: afterFirstUnlock)
                    }
                }
            }
        }
        #expect(try store.load() == sampleSession(counter: 4), "the session is there: never 'signed out'")
        #expect(destructiveCalls(keychain).isEmpty)
    }

    @Test("a removal whose delete found nothing while locked, the device unlocking before the probe: deleted again")
    func removeAgainAfterProbe() throws {
        let keychain = FakeKeychain()
        let store = makeStore(keychain)
        let probeAccount = store.probeAccount
        try store.save(sampleSession())
        keychain.deviceState = .beforeFirstUnlock
        keychain.beforeCall.withLock {
            $0 = { [keychain] operation, address in
                if operation == .add, address.account == probeAccount { keychain.deviceState = .unlocked }
            }
        }
        try store.remove()
        #expect(keychain.item(at: mainAddress) == nil, "a sign-out is not left undone by the item it could not see")
        #expect(keychain.items.isEmpty, "and no probe is left")
    }

    @Test("the manager at a launch before the first unlock: loading, nothing deleted; the unlock signs in")
    func managerLaunchBeforeFirstUnlock() async throws {
        let fixture = try await StoredSessionFixture()
        let item = fixture.keychain.item(at: mainAddress)
        fixture.keychain.deviceState = .beforeFirstUnlock

        let (activation, provider, handle, recorder) = fixture.launch()

        #expect(handle.sessionStatus == .syncing)
        // The manager tries again on its clock and on activations; every try finds it locked.
        try await fixture.clock.waitForSleepers()
        _ = fixture.clock.advanceToNextDeadline()
        try await fixture.clock.waitForSleepers()
        activation.fire()
        await provider.waitUntilIdle()
        await handle.waitUntilIdle()
        await recorder.drain()
        #expect(handle.sessionStatus == .syncing, "still loading: before the first unlock is not signed out")
        #expect(fixture.keychain.item(at: mainAddress) == item, "the stored session is untouched")
        #expect(destructiveCalls(fixture.keychain).isEmpty)
        #expect(
            !recorder.events.contains {
                if case .logout = $0 { return true }
                return false
            }
        )

        fixture.keychain.deviceState = .unlocked
        activation.fire()
        try await recorder.waitForStatus(.signedIn)
        #expect(provider.session == fixture.stored)
    }

    // MARK: - First saves at once

    @Test("two stores and 8 threads racing first saves: one item, no error (each first call made before any second)")
    func racingFirstSaves() throws {
        for round in 0..<50 {
            let keychain = FakeKeychain()
            let stores = [makeStore(keychain), makeStore(keychain)]
            let threads = 8
            let gate = FirstCallsGate(count: threads)
            gate.install(on: keychain)
            let errors = ConcurrencySafeContainer<[SessionStoreError]>([])
            onThreads(threads) { index in
                do throws(SessionStoreError) {
                    try stores[index % 2].save(sampleSession(counter: index))
                } catch {
                    errors.withLock { $0.append(error) }
                }
            }
            keychain.beforeCall.withLock { $0 = nil }
            keychain.afterCall.withLock { $0 = nil }
            #expect(!gate.didTimeOut, "round \(round): every first call was answered")
            #expect(errors.withLock { $0 }.isEmpty, "round \(round)")
            #expect(keychain.items.count == 1, "round \(round): one item")
            let saved = try #require(try stores[0].load())
            #expect((0..<threads).map { sampleSession(counter: $0) }.contains(saved))
        }
    }

    @Test("first saves racing freely, 300 rounds of 8 threads on two stores: never an error, always one item")
    func racingFirstSavesFreely() throws {
        for _ in 0..<300 {
            let keychain = FakeKeychain()
            let stores = [makeStore(keychain), makeStore(keychain)]
            let failures = ConcurrencySafeContainer(0)
            onThreads(8) { index in
                do {
                    try stores[index % 2].save(sampleSession(counter: index))
                } catch {
                    failures.withLock { $0 += 1 }
                }
            }
            #expect(failures.withLock { $0 } == 0)
            #expect(keychain.items.count == 1)
        }
    }

    @Test("an item removed between a save's add and its update is added again")
    func removedBetweenAddAndUpdate() throws {
        let keychain = FakeKeychain()
        let store = makeStore(keychain)
        try store.save(sampleSession(counter: 1))
        let other = makeStore(keychain)
        let removedOnce = ConcurrencySafeContainer(false)
        keychain.beforeCall.withLock {
            $0 = { operation, _ in
                // Another process signs out after this save's add found the item.
                if operation == .update, !removedOnce.withLock({ $0 }) {
                    removedOnce.withLock { $0 = true }
                    try? other.remove()
                }
            }
        }
        try store.save(sampleSession(counter: 2))
        keychain.beforeCall.withLock { $0 = nil }
        #expect(try store.load() == sampleSession(counter: 2))
        #expect(
            Array(keychain.calls.map(\.operation).prefix(5)) == [.add, .add, .delete, .update, .add],
            "first save; then add (found), the other's delete, update (gone), add again"
        )
    }

    @Test("a save while the device is locked (a when-unlocked item) is unavailable and changes nothing")
    func saveWhileLocked() throws {
        let keychain = FakeKeychain()
        let store = makeStore(keychain, accessibility: .whenUnlockedThisDeviceOnly)
        try store.save(sampleSession(counter: 1))
        keychain.deviceState = .locked
        expectUnavailable("a save while locked succeeded") { try store.save(sampleSession(counter: 2)) }
        keychain.deviceState = .unlocked
        #expect(try store.load() == sampleSession(counter: 1))
    }

    // MARK: - Corrupt items

    @Test("a corrupt item is moved to another account, kept byte for byte, never deleted")
    func corruptSetAside() throws {
        let keychain = FakeKeychain()
        let garbage = Data("{\"format\": \"AuthSessionKit.session\", truncated".utf8)
        keychain.plant(garbage, at: mainAddress, stamp: Data([1, 2, 3]), protection: afterFirstUnlock)
        let store = makeStore(keychain)
        var location: String?
        do {
            _ = try store.load()
            Issue.record("corrupt bytes loaded")
        } catch .corrupt(_, let setAsideAt) {
            location = setAsideAt
        } catch {
            Issue.record("expected corrupt, got \(error)")
        }
        let aside = try #require(keychain.items.first { $0.key.account.hasPrefix("session.corrupt-") })
        #expect(aside.value.contents.data == garbage, "the bytes are kept")
        #expect(location?.contains(aside.key.account) == true, "the error says where they went")
        #expect(keychain.item(at: mainAddress) == nil, "the next save starts afresh")
        #expect(!keychain.calls.contains { $0.operation == .delete }, "nothing is deleted")
        #expect(try store.load() == nil)
        try store.save(sampleSession())
        #expect(try store.load() == sampleSession())
        #expect(keychain.items[aside.key]?.contents.data == garbage, "still kept after the next save")
    }

    @Test("a load inside exclusive access sets a corrupt item aside without taking the access again")
    func corruptInsideExclusiveAccess() throws {
        let keychain = FakeKeychain()
        keychain.plant(Data("not json".utf8), at: mainAddress, stamp: Data([3]), protection: afterFirstUnlock)
        let store = makeStore(keychain)
        let setAside: String? = try store.withExclusiveAccess { () throws -> String? in
            do throws(SessionStoreError) {
                _ = try store.load()
                return nil
            } catch .corrupt(_, let setAsideAt) {
                return setAsideAt
            }
        }
        #expect(setAside != nil)
        #expect(keychain.item(at: mainAddress) == nil)
    }

    @Test("a good session saved by another caller before the set-aside stays where it is")
    func goodItemSavedBeforeSetAside() throws {
        let keychain = FakeKeychain()
        let garbage = Data("garbage".utf8)
        keychain.plant(garbage, at: mainAddress, stamp: Data([9]), protection: afterFirstUnlock)
        let store = makeStore(keychain)
        let other = makeStore(keychain)
        let reads = ConcurrencySafeContainer(0)
        keychain.beforeCall.withLock {
            $0 = { operation, address in
                // The second read is the set-aside's look: another process saved a good one first.
                guard operation == .read, address.account == "session" else { return }
                if reads.withLock({ count in
                    count += 1
                    return count == 2
                }) {
                    try? other.save(sampleSession(counter: 5))
                }
            }
        }
        do {
            _ = try store.load()
            Issue.record("corrupt bytes loaded")
        } catch .corrupt(_, let setAsideAt) {
            #expect(setAsideAt == nil, "nothing was moved")
        } catch {
            Issue.record("expected corrupt, got \(error)")
        }
        keychain.beforeCall.withLock { $0 = nil }
        #expect(try store.load() == sampleSession(counter: 5), "the good session stays")
    }

    @Test("a good session saved between the set-aside's look and its move stays: only the stamp that was read moves")
    func goodItemSavedBeforeMove() throws {
        let keychain = FakeKeychain()
        keychain.plant(Data("garbage".utf8), at: mainAddress, stamp: Data([9]), protection: afterFirstUnlock)
        let store = makeStore(keychain)
        let other = makeStore(keychain)
        keychain.beforeCall.withLock {
            $0 = { operation, _ in
                if operation == .move { try? other.save(sampleSession(counter: 6)) }
            }
        }
        #expect(throws: SessionStoreError.self) { try store.load() }
        keychain.beforeCall.withLock { $0 = nil }
        #expect(try store.load() == sampleSession(counter: 6))
        #expect(keychain.items.count == 1, "nothing was moved aside")
    }

    @Test("an item without a stamp (an earlier version) is copied aside once, never moved: a good save meanwhile stays")
    func unstampedCorruptItem() throws {
        let keychain = FakeKeychain()
        let garbage = Data("garbage from an earlier version".utf8)
        keychain.plant(garbage, at: mainAddress, protection: afterFirstUnlock)
        let store = makeStore(keychain)
        let other = makeStore(keychain)
        // Another process saves a good session right after the set-aside's look.
        let looks = ConcurrencySafeContainer(0)
        keychain.afterCall.withLock {
            $0 = { operation, address in
                guard operation == .read, address.account == "session" else { return }
                if looks.withLock({ count in
                    count += 1
                    return count == 2
                }) {
                    try? other.save(sampleSession(counter: 8))
                }
            }
        }
        var location: String?
        do {
            _ = try store.load()
        } catch .corrupt(_, let setAsideAt) {
            location = setAsideAt
        } catch {
            Issue.record("expected corrupt, got \(error)")
        }
        keychain.afterCall.withLock { $0 = nil }
        #expect(try store.load() == sampleSession(counter: 8), "the good session stays where it is")
        let copies = keychain.items.filter { $0.key.account.hasPrefix("session.corrupt-copy-") }
        #expect(copies.count == 1 && copies.first?.value.contents.data == garbage, "the bytes are kept")
        let copyAccount = try #require(copies.first?.key.account)
        #expect(location?.contains(copyAccount) == true, "the error says where the bytes went")

        // Without a race: the item stays until a save replaces it; loading again copies nothing new.
        let keychain2 = FakeKeychain()
        keychain2.plant(garbage, at: mainAddress, protection: afterFirstUnlock)
        let store2 = makeStore(keychain2)
        for _ in 0..<3 {
            #expect(throws: SessionStoreError.self) { try store2.load() }
        }
        #expect(keychain2.items.count == 2, "the item and one copy")
        try store2.save(sampleSession(counter: 9))
        #expect(try store2.load() == sampleSession(counter: 9))
        #expect(!keychain2.calls.contains { $0.operation == .delete || $0.operation == .move })
    }

    @Test("a load outside exclusive access while another thread holds it never waits: the item stays for later")
    func corruptWhileAccessIsBusy() throws {
        let keychain = FakeKeychain()
        keychain.plant(Data("not json".utf8), at: mainAddress, stamp: Data([4]), protection: afterFirstUnlock)
        let store = makeStore(keychain)
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = Thread {
            _ = try? store.withExclusiveAccess {
                holding.signal()
                _ = release.wait(timeout: .now() + 60)
            }
        }
        holder.start()
        #expect(holding.wait(timeout: .now() + 300) == .success)
        do {
            _ = try store.load()
            Issue.record("corrupt bytes loaded")
        } catch .corrupt(_, let setAsideAt) {
            #expect(setAsideAt == nil, "not set aside: the access was busy")
        } catch {
            Issue.record("expected corrupt, got \(error)")
        }
        #expect(keychain.item(at: mainAddress) != nil)
        release.signal()
        let seen = try store.withExclusiveAccess { try store.load() }
        #expect(seen == nil, "the next exclusive access set it aside before its body ran")
        #expect(keychain.items.values.contains { $0.contents.data == Data("not json".utf8) }, "the bytes are kept")
    }

    @Test("a corrupt item found while the access was busy survives the next sign-in's save: copied aside first")
    func corruptAtBusyLoadThenSave() throws {
        let keychain = FakeKeychain()
        let garbage = Data("garbage".utf8)
        keychain.plant(garbage, at: mainAddress, stamp: Data([1]), protection: afterFirstUnlock)
        let store = makeStore(keychain)
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = Thread {
            _ = try? store.withExclusiveAccess {
                holding.signal()
                _ = release.wait(timeout: .now() + 60)
            }
        }
        holder.start()
        #expect(holding.wait(timeout: .now() + 300) == .success)
        #expect(throws: SessionStoreError.self) { try store.load() }
        try store.save(sampleSession(counter: 4))  // the user signs in meanwhile
        release.signal()
        #expect(try store.load() == sampleSession(counter: 4))
        #expect(keychain.items.values.contains { $0.contents.data == garbage }, "the bytes are kept")
    }

    @Test("a session from a newer format is left in place")
    func newerFormat() throws {
        let keychain = FakeKeychain()
        let newer = Data(#"{"format":"AuthSessionKit.session","version":99}"#.utf8)
        keychain.plant(newer, at: mainAddress, protection: afterFirstUnlock)
        let store = makeStore(keychain)
        #expect(
            throws: SessionStoreError.unsupportedFormatVersion(found: 99, newestSupported: SessionFormat.currentVersion)
        ) {
            try store.load()
        }
        #expect(keychain.item(at: mainAddress)?.contents.data == newer)
    }

    @Test("signing out while a refresh holds the store, the item found corrupt: the sign-out returns at once")
    func signOutDuringRefreshWithCorruptItem() async throws {
        let fixture = try await StoredSessionFixture()
        let (_, provider, handle, _) = fixture.launch()
        #expect(handle.sessionStatus == .signedIn)
        fixture.server.holdsRefreshes = true
        let refreshEnded = ConcurrencySafeContainer(false)
        let refresh = Task {
            defer { refreshEnded.withLock { $0 = true } }
            return try? await provider.refresh()
        }
        try await fixture.server.waitForHeldRefreshes(1)
        // Another writer leaves bytes that are not a session, while the refresh waits for the server.
        let garbage = Data("garbage".utf8)
        fixture.keychain.plant(garbage, at: mainAddress, stamp: Data([7]), protection: afterFirstUnlock)
        let returned = ConcurrencySafeContainer(false)
        let signOut = Thread {
            try? provider.signout(with: nil)  // the user taps "Sign out", on the main thread
            returned.withLock { $0 = true }
        }
        signOut.start()
        // It must not wait for the refresh, which would wait for it in turn once the server answers.
        guard (try? await waitUntil(timeout: 300, { returned.withLock { $0 } })) != nil else {
            // Recorded; releasing the refresh now would deadlock the two threads for good.
            return
        }
        fixture.server.releaseHeldRefreshes()
        try await waitUntil(timeout: 300) { refreshEnded.withLock { $0 } }
        _ = await refresh.value
        await provider.waitUntilIdle()
        await handle.waitUntilIdle()
        #expect(provider.session == nil)
        #expect(handle.sessionStatus == .signedOut)
        let main = fixture.keychain.item(at: mainAddress)?.contents.data
        #expect(main == nil || main == garbage, "no session written after the sign-out")
        #expect(fixture.keychain.items.values.contains { $0.contents.data == garbage }, "the bytes are kept")
    }

    @Test(
        "a corrupt item found when a refresh commits is no sign-out: the refreshed session is written",
        arguments: [Data([7]), nil]
    )
    func corruptAtRefreshCommit(stamp: Data?) async throws {
        let fixture = try await StoredSessionFixture()
        let (_, provider, handle, recorder) = fixture.launch()
        fixture.server.holdsRefreshes = true
        let refreshEnded = ConcurrencySafeContainer(false)
        let refresh = Task {
            defer { refreshEnded.withLock { $0 = true } }
            return try await provider.refresh()
        }
        try await fixture.server.waitForHeldRefreshes(1)
        // Bytes that are no session appear while the server answers (stamped, or an earlier
        // version's without a stamp).
        let garbage = Data("garbage".utf8)
        fixture.keychain.plant(garbage, at: mainAddress, stamp: stamp, protection: afterFirstUnlock)
        fixture.server.releaseHeldRefreshes()
        try await waitUntil(timeout: 300) { refreshEnded.withLock { $0 } }
        let refreshed = try await refresh.value
        await provider.waitUntilIdle()
        await handle.waitUntilIdle()
        await recorder.drain()
        #expect(handle.sessionStatus == .signedIn)
        #expect(provider.session == refreshed)
        #expect(try fixture.store.load() == refreshed, "the rotated tokens are stored, not lost")
        #expect(fixture.keychain.items.values.contains { $0.contents.data == garbage }, "the bytes are kept")
        #expect(
            !recorder.events.contains {
                if case .logout = $0 { return true }
                return false
            }
        )
    }

    @Test("a corrupt item found by the biometric setting's write is no sign-out: the session is written back")
    func corruptAtBiometricSetting() async throws {
        let fixture = try await StoredSessionFixture()
        let (_, provider, handle, _) = fixture.launch()
        fixture.keychain.plant(Data("garbage".utf8), at: mainAddress, stamp: Data([7]), protection: afterFirstUnlock)
        provider.setBioMetricAuthentication(true)
        #expect(try fixture.store.load()?.isBiometricAuthenticationEnabled == true)
        #expect(try fixture.store.load()?.refreshToken == fixture.stored.refreshToken)
        _ = try await provider.refresh()
        await provider.waitUntilIdle()
        await handle.waitUntilIdle()
        #expect(provider.session != nil, "the next refresh finds the session, not a sign-out elsewhere")
        #expect(try fixture.store.load() == provider.session)
    }

    @Test("a save before the first unlock over an item the keychain hides is unavailable, not a keychain error")
    func saveOverHiddenItem() throws {
        let keychain = FakeKeychain()
        keychain.checksUniquenessFirst = true
        let store = makeStore(keychain)
        try store.save(sampleSession(counter: 1))
        keychain.deviceState = .beforeFirstUnlock
        expectUnavailable("a save over a hidden item succeeded") { try store.save(sampleSession(counter: 2)) }
        keychain.deviceState = .unlocked
        #expect(try store.load() == sampleSession(counter: 1))
    }

    // MARK: - Entitlement and statuses

    @Test("without the entitlement (an unsigned macOS tool): a typed error that says what to do, not 'no session'")
    func missingEntitlement() throws {
        let keychain = FakeKeychain()
        keychain.hasEntitlement = false
        let store = makeStore(keychain)
        #expect(
            throws: SessionStoreError.missingEntitlement(
                operation: "SecItemAdd (confirming that SecItemCopyMatching can see the item)"
            )
        ) {
            try store.load()
        }
        #expect(throws: SessionStoreError.missingEntitlement(operation: "SecItemAdd")) {
            try store.save(sampleSession())
        }
        let message = SessionStoreError.missingEntitlement(operation: "SecItemAdd").description
        #expect(message.contains("-34018") && message.contains("FileSessionStore"))
    }

    @Test("every documented status a read can fail with becomes its mapped error, and changes nothing")
    func everyStatusThroughLoad() throws {
        for status in KeychainStatus.documented.keys where status != .success && status != .itemNotFound {
            let keychain = FakeKeychain()
            let store = makeStore(keychain)
            try store.save(sampleSession())
            let item = keychain.item(at: mainAddress)
            keychain.fail(.read, with: status)
            Self.expect(status, from: "SecItemCopyMatching") { () throws(SessionStoreError) in _ = try store.load() }
            #expect(keychain.item(at: mainAddress) == item, "\(status) changed the item")
            if status != .duplicateItem {
                keychain.fail(.add, with: status)
                Self.expect(status, from: "SecItemAdd") { () throws(SessionStoreError) in
                    try store.save(sampleSession(counter: 2))
                }
            }
            #expect(try store.load() == sampleSession())
        }
    }

    /// Expects `body` to throw what `status` means, decided here from Apple's meaning of each
    /// status (not by the mapping under test): a lock or no keychain is unavailable, a missing
    /// entitlement its own case, anything else a keychain error naming the call and the status.
    private static func expect(
        _ status: KeychainStatus,
        from operation: String,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () throws(SessionStoreError) -> Void
    ) {
        do {
            try body()
            Issue.record("\(status) did not fail \(operation)", sourceLocation: sourceLocation)
        } catch .unavailable {
            #expect(
                KeychainStatusTests.unavailable.contains(status.rawValue),
                "\(status) is not 'unavailable'",
                sourceLocation: sourceLocation
            )
        } catch .missingEntitlement(let failed) {
            #expect(status.rawValue == -34_018 && failed == operation, sourceLocation: sourceLocation)
        } catch .keychain(let failed, let raw) {
            #expect(failed == operation && raw == status.rawValue, sourceLocation: sourceLocation)
            #expect(!KeychainStatusTests.unavailable.contains(status.rawValue), sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(status) became \(error)", sourceLocation: sourceLocation)
        }
    }

    // MARK: - A new protection for an existing item

    @Test(
        "a protection SecItemUpdate refuses (errSecParam): the item is deleted and added again, inside exclusive access",
        arguments: [false, true]
    )
    func protectionRefusedByUpdate(savesInsideExclusiveAccess: Bool) throws {
        let keychain = FakeKeychain()
        keychain.protectionUpdate = .refusedWithParam
        // An earlier version of the app wrote the item readable only while unlocked.
        try makeStore(keychain, accessibility: .whenUnlockedThisDeviceOnly).save(sampleSession(counter: 1))
        let store = makeStore(keychain)
        // Which calls on the item ran while this store's exclusive access was held.
        let held = ConcurrencySafeContainer<[(FakeKeychain.Operation, Bool)]>([])
        keychain.beforeCall.withLock {
            $0 = { operation, address in
                guard address.account == "session", operation == .delete || operation == .add else { return }
                let isHeld = (try? store.withExclusiveAccessIfAvailable { true }) == nil
                held.withLock { $0.append((operation, isHeld)) }
            }
        }
        if savesInsideExclusiveAccess {
            try store.withExclusiveAccess { try store.save(sampleSession(counter: 2)) }
        } else {
            try store.save(sampleSession(counter: 2))
        }
        keychain.beforeCall.withLock { $0 = nil }

        #expect(keychain.item(at: mainAddress)?.protection == afterFirstUnlock, "the store's protection now")
        #expect(try store.load() == sampleSession(counter: 2))
        let replacement = held.withLock { $0 }.drop { $0.0 != .delete }
        #expect(replacement.map(\.0) == [.delete, .add], "a delete, then an add")
        #expect(replacement.allSatisfy { $0.1 }, "both inside exclusive access")
        #expect(keychain.items.count == 1, "nothing left beside the item")
    }

    @Test("an update that keeps the old protection: the next save after a load that reports it replaces the item")
    func protectionIgnoredByUpdate() throws {
        let keychain = FakeKeychain()
        keychain.protectionUpdate = .ignored
        try makeStore(keychain, accessibility: .whenUnlockedThisDeviceOnly).save(sampleSession(counter: 1))
        let store = makeStore(keychain)
        try store.save(sampleSession(counter: 2))
        #expect(
            keychain.item(at: mainAddress)?.protection.accessibility == .whenUnlockedThisDeviceOnly,
            "this keychain's update wrote the data and kept the protection"
        )
        #expect(try store.load() == sampleSession(counter: 2), "the load reports the protection it has")
        try store.save(sampleSession(counter: 3))
        #expect(keychain.item(at: mainAddress)?.protection == afterFirstUnlock)
        #expect(try store.load() == sampleSession(counter: 3))
        #expect(keychain.items.count == 1)
    }

    @Test("a replacement that cannot add the new protection now (a locked device) leaves the stored item as it was")
    func replacementRefusedWhileLocked() throws {
        let keychain = FakeKeychain()
        keychain.protectionUpdate = .refusedWithParam
        keychain.checksUniquenessFirst = true
        try makeStore(keychain).save(sampleSession(counter: 1))
        let stored = keychain.item(at: mainAddress)
        // A new version that wants the item readable only while unlocked, saving while locked.
        let store = makeStore(keychain, accessibility: .whenUnlockedThisDeviceOnly)
        #expect(try store.load() == sampleSession(counter: 1))
        keychain.deviceState = .locked
        expectUnavailable("a replacement while locked succeeded") { try store.save(sampleSession(counter: 2)) }
        #expect(
            keychain.item(at: mainAddress) == stored,
            "the session is never deleted before its replacement can be added"
        )
        #expect(keychain.items.count == 1)
        keychain.deviceState = .unlocked
        try store.save(sampleSession(counter: 2))
        #expect(keychain.item(at: mainAddress)?.protection.accessibility == .whenUnlockedThisDeviceOnly)
        #expect(try store.load() == sampleSession(counter: 2))
    }

    @Test("what a read reports of an item's protection differs from a store's only where it is known to")
    func protectionReport() {
        let plain = KeychainItemProtection(accessibility: .afterFirstUnlockThisDeviceOnly, accessControl: nil)
        let controlled = KeychainItemProtection(
            accessibility: .afterFirstUnlockThisDeviceOnly,
            accessControl: .userPresence
        )
        #expect(!KeychainProtectionReport(plain).differs(from: plain))
        #expect(KeychainProtectionReport(plain).differs(from: controlled), "an access control to add")
        #expect(KeychainProtectionReport(controlled).differs(from: plain), "an access control to remove")
        #expect(
            !KeychainProtectionReport(controlled).differs(
                from: KeychainItemProtection(
                    accessibility: .afterFirstUnlockThisDeviceOnly,
                    accessControl: .biometryCurrentSet
                )
            ),
            "an access control's flags cannot be read back: not known to differ"
        )
        #expect(
            KeychainProtectionReport(KeychainItemProtection(accessibility: .whenUnlocked, accessControl: nil))
                .differs(from: plain)
        )
        #expect(
            !KeychainProtectionReport(accessibility: nil, hasAccessControl: false).differs(from: plain),
            "an accessibility the keychain did not name is not known to differ"
        )
        #expect(
            KeychainProtectionReport(accessibility: .other, hasAccessControl: nil).differs(from: plain),
            "one the store does not write differs"
        )
        #expect(
            !KeychainProtectionReport(accessibility: .known(.afterFirstUnlockThisDeviceOnly), hasAccessControl: nil)
                .differs(from: controlled),
            "whether it has an access control unknown (what Apple's keychain reports): only the accessibility counts"
        )
    }

    // MARK: - Access control

    @Test(
        "an access-controlled item: unavailable without a prompt until authenticated, readable after, again unavailable once forgotten"
    )
    func accessControl() async throws {
        let keychain = FakeKeychain()
        let store = makeStore(keychain, accessControl: .userPresence)
        try store.save(sampleSession())
        expectUnavailable("an access-controlled item read without authentication") { _ = try store.load() }
        #expect(keychain.authenticationCount == 0, "a load never prompts")
        try await store.authenticate(reason: "Unlock your account")
        #expect(keychain.authenticationCount == 1)
        #expect(try store.load() == sampleSession())
        store.forgetAuthentication()
        #expect(throws: SessionStoreError.self) { try store.load() }

        keychain.authenticationOutcome = .failure(.canceledByUser)
        await #expect(throws: BiometricAuthenticationError.canceledByUser) {
            try await store.authenticate(reason: "Unlock your account")
        }
        #expect(throws: SessionStoreError.self) { try store.load() }
        #expect(keychain.item(at: mainAddress) != nil)
    }

    @Test(
        "the manager with an access-controlled item: loading until the app authenticates, then reloadStore() signs in"
    )
    func accessControlWithManager() async throws {
        let fixture = try await StoredSessionFixture(accessControl: .biometryCurrentSet)
        let (_, provider, handle, recorder) = fixture.launch()
        #expect(handle.sessionStatus == .syncing)
        provider.reloadStore()
        await provider.waitUntilIdle()
        #expect(handle.sessionStatus == .syncing, "reloading before the authentication changes nothing")

        try await fixture.store.authenticate(reason: "Unlock your account")
        provider.reloadStore()
        try await recorder.waitForStatus(.signedIn)
        #expect(provider.session == fixture.stored)
        #expect(fixture.keychain.authenticationCount == 1, "one prompt")
    }
}
