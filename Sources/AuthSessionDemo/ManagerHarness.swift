import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import AuthSessionProviders
import Foundation

/// A `ManagedSessionProvider` as the handle sees it, with every event it publishes kept for the
/// timeline. Everything else is passed through unchanged.
final class TracedManager: AuthSessionProviderProtocol {
    typealias AuthSession = ManagedSession

    let manager: ManagedSessionProvider
    private let published = ConcurrencySafeContainer<[AuthSessionEvent]>([])
    /// Kept here: the manager holds its proxy weakly.
    private let proxy = ConcurrencySafeContainer<TracingEventProxy?>(nil)

    init(_ manager: ManagedSessionProvider) {
        self.manager = manager
    }

    /// Every event the manager published, in order.
    var events: [AuthSessionEvent] { published.withLock { $0 } }

    var session: ManagedSession? { manager.session }
    var isBioMetricAuthenticationEnabled: Bool { manager.isBioMetricAuthenticationEnabled }
    var allowsLocalSessionValidation: Bool { manager.allowsLocalSessionValidation }
    var isSessionAutoRefreshEnabled: Bool { manager.isSessionAutoRefreshEnabled }

    func initializeSessionProvider(for eventProxy: any AuthSessionEventProxy) {
        let published = published
        let tracing = TracingEventProxy { event in published.withLock { $0.append(event) } }
        tracing.upstream = eventProxy
        proxy.withLock { $0 = tracing }
        manager.initializeSessionProvider(for: tracing)
    }

    func setBioMetricAuthentication(_ isEnabled: Bool) { manager.setBioMetricAuthentication(isEnabled) }
    func signout(with error: (any Error)?) throws { try manager.signout(with: error) }
    func preferredAuthenticationReason() -> String { manager.preferredAuthenticationReason() }
    func canPerformAuthentication() -> Bool { manager.canPerformAuthentication() }

    func allowsSessionSigningOutOnBiometricAuthenticationFailure(with error: BiometricAuthenticationError) -> Bool {
        manager.allowsSessionSigningOutOnBiometricAuthenticationFailure(with: error)
    }
}

/// Records each event, then hands it to the handle's own proxy on the same thread.
final class TracingEventProxy: AuthSessionEventProxy, @unchecked Sendable {
    // Safe: `upstream` is set once, before the proxy is given to the manager, and only read after.
    var upstream: (any AuthSessionEventProxy)?
    private let record: @Sendable (AuthSessionEvent) -> Void

    init(eventListening: @escaping @Sendable (AuthSessionEvent) -> Void) {
        record = eventListening
    }

    func publish(_ event: AuthSessionEvent, for sessionProvider: (any AuthSessionProviderProtocol)?) {
        record(event)
        upstream?.publish(event, for: sessionProvider)
    }
}

/// One run of the app: a store on the scenario's file, a manager, a handle, and a recorder
/// subscribed right after the handle's creation.
final class DemoApp {
    let store: FileSessionStore
    let traced: TracedManager
    let handle: AuthSessionHandle<TracedManager>
    let recorder = RecordingAuthSessionDelegate(label: "auth-session-demo.manager-delegate")
    /// The handle's status when its initializer returned (the manager loads the store inside it).
    let statusAfterInit: AuthSessionStatus
    /// The events the manager published inside the handle's initializer.
    let eventsDuringInit: [AuthSessionEvent]
    var printedEvents: Int
    var printedRecords = 0

    var provider: ManagedSessionProvider { traced.manager }

    convenience init(folder: URL, backend: DemoBackend, clock: ManualClock, activation: ManualActivationSignal) {
        self.init(folder: folder, remote: backend.remote, clock: clock, activation: activation)
    }

    init(folder: URL, remote: any RemoteAuthService, clock: ManualClock, activation: ManualActivationSignal) {
        store = FileSessionStore(directory: folder)
        let manager = ManagedSessionProvider(
            store: store,
            remote: remote,
            retryPolicy: .standard,
            clock: clock,
            configuration: .init(activationSignal: activation)
        )
        traced = TracedManager(manager)
        handle = AuthSessionHandle(
            sessionProvider: traced,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: activation,
            clock: clock
        )
        statusAfterInit = handle.sessionStatus
        eventsDuringInit = traced.events
        printedEvents = eventsDuringInit.count
        handle.subscribeDelegate(recorder, receive: recorder.queue)
    }

    /// Waits until the manager and the handle have nothing in flight and the recorder has every
    /// callback delivered.
    func settle() async {
        await provider.waitUntilIdle()
        await handle.waitUntilIdle()
        await recorder.drain()
    }

    var logoutCount: Int {
        recorder.events.count {
            if case .logout = $0 { return true }
            return false
        }
    }

    /// The session file, its mode and what it holds.
    func fileSummary() -> String {
        let path = store.fileURL.path
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else {
            return "\(store.fileURL.lastPathComponent) (absent)"
        }
        let mode = (attributes[.posixPermissions] as? NSNumber).map { String($0.intValue, radix: 8) } ?? "?"
        let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
        return "\(store.fileURL.lastPathComponent) (mode \(mode), \(size) bytes)"
    }

    /// The file's mode, or `nil` without a file.
    var fileMode: Int? {
        (try? FileManager.default.attributesOfItem(atPath: store.fileURL.path))?[.posixPermissions]
            .flatMap { ($0 as? NSNumber)?.intValue }
    }

    /// Prints the events the manager published and the callbacks the delegate received since the
    /// last time.
    ///
    /// - Parameter describe: How an event reads in the timeline.
    /// - Returns: Whether anything was printed.
    @discardableResult
    func printNew(_ describe: (AuthSessionEvent) -> String) -> Bool {
        let events = traced.events
        let printed = events.count > printedEvents || recorder.count > printedRecords
        for event in events.dropFirst(printedEvents) {
            line("      manager  → \(describe(event))")
        }
        printedEvents = events.count
        let records = recorder.records
        for record in records.dropFirst(printedRecords) {
            line("      \(DemoHarness.describe(record))")
        }
        printedRecords = records.count
        return printed
    }
}

/// The world of one session-manager scenario: a temporary folder for the session file, a clock
/// the demo moves, the authorization server, and the app as it is now (it may relaunch).
final class ManagerDemoHarness: DemoTimeline {
    let backend: DemoBackend
    /// Moved by the demo: the manager schedules its refreshes and back-offs on it.
    let clock = ManualClock(now: Date())
    let activation = ManualActivationSignal()
    let root: URL
    let folder: URL
    private(set) var app: DemoApp
    var failures: [String] = []
    private var tokenLabels: [String: String] = [:]
    private var accessTokenCount = 0

    init(scenario: String, backend: DemoBackend) throws {
        self.backend = backend
        root = try Self.makeTemporaryFolder(for: scenario)
        folder = root.appendingPathComponent("store", isDirectory: true)
        app = DemoApp(folder: folder, backend: backend, clock: clock, activation: activation)
    }

    // MARK: - Steps

    /// The app quits and starts again: a new store object on the same file, a new manager, a new
    /// handle.
    func relaunch() async {
        await app.settle()
        line("  ▶ app quits (the manager, its handle and its store object are released)")
        app = DemoApp(folder: folder, backend: backend, clock: clock, activation: activation)
        await printLaunch("app relaunches: new FileSessionStore on the same file, new manager, new AuthSessionHandle")
    }

    /// The user signs in with the backend's password grant.
    func signIn() async throws {
        line("  ▶ user signs in: provider.signIn(with: .password(username: \"\(backend.userName)\", …))")
        let session = try await app.provider.signIn(with: backend.grant)
        await app.settle()
        printNew()
        line(
            "      session  access token \(label(session.accessToken)), expires in \(expiresIn(session)), stored in \(fileSummary())"
        )
    }

    /// Runs `action` as an input the timeline names, then prints what followed.
    func input(_ text: String, _ action: () async throws -> Void) async rethrows {
        line("  ▶ \(text)")
        try await action()
        await app.settle()
        if !printNew() {
            line("      (nothing published, no callback)")
        }
    }

    /// Moves the clock to the proactive refresh the manager scheduled, once it sleeps on it.
    ///
    /// - Returns: The seconds the clock moved.
    @discardableResult
    func jumpToScheduledRefresh() async throws -> TimeInterval {
        try await clock.waitForSleepers(1)
        let expiry = app.provider.session.map { Date(timeIntervalSince1970: $0.expiresAt) }
        let moved = clock.advanceToNextDeadline() ?? 0
        let before = expiry.map {
            " (\(Int($0.timeIntervalSince(clock.now).rounded())) s before the access token expires)"
        }
        line("  ⏱  clock jumps \(Int(moved.rounded())) s to the refresh the manager scheduled\(before ?? "")")
        return moved
    }

    // MARK: - Output

    /// Prints the events the manager published and the callbacks the delegate received since the
    /// last time.
    @discardableResult
    func printNew() -> Bool {
        app.printNew(describe)
    }

    /// A short label for a token (`A1`, `A2`, … for access tokens), never the token.
    func label(_ accessToken: String) -> String {
        if let label = tokenLabels[accessToken] { return label }
        accessTokenCount += 1
        let label = "A\(accessTokenCount)"
        tokenLabels[accessToken] = label
        return label
    }

    func expiresIn(_ session: ManagedSession) -> String {
        "\(Int((session.expiresAt - clock.now.timeIntervalSince1970).rounded())) s"
    }

    /// The session file, its mode and what it holds.
    func fileSummary() -> String {
        app.fileSummary()
    }

    /// The file's mode, or `nil` without a file.
    var fileMode: Int? {
        app.fileMode
    }

    /// What the file holds now, read by a store object of its own.
    func storedSession() -> ManagedSession? {
        try? FileSessionStore(directory: folder).load()
    }

    func describe(_ event: AuthSessionEvent) -> String {
        Self.describe(event, label: label)
    }

    /// How `event` reads in the timeline, its access token shown by `label`.
    static func describe(_ event: AuthSessionEvent, label: (String) -> String) -> String {
        switch event {
        case .fetchingSession: "fetchingSession"
        case .sessionFetched(let isInitialFetch): "sessionFetched(\(isInitialFetch ? "launch" : "refresh"))"
        case .sessionFetchFailed(let error): "sessionFetchFailed(\(error))"
        case .sessionSignIn: "sessionSignIn"
        case .sessionSignedOut(let error): "sessionSignedOut(\(error.map { "\($0)" } ?? "voluntary"))"
        case .sessionUpdated(let session):
            "sessionUpdated(access token \((session as? ManagedSession).map { label($0.accessToken) } ?? "none"))"
        case .unexpectedError(let error): "unexpectedError(\(error))"
        }
    }
}
