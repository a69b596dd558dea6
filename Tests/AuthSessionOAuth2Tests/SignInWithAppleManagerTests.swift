import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

/// Sign in with Apple through the session manager, end to end on a simulated Apple ID provider:
/// the name and email of the first sign-in kept, a relaunch without a sign-in flash, "Stop Using
/// Apple ID" at the next activation, the pushed revocation at once, and account deletion.
@Suite struct SignInWithAppleManagerTests {

    private static let clientID = "com.example.app"
    private static let ada = SimulatedAppleIDProvider.Account(
        userID: "001234.ada",
        givenName: "Ada",
        familyName: "Lovelace",
        email: "ada@privaterelay.appleid.com"
    )

    /// One launch of the app: a manager on the shared store and a handle observing it.
    private final class App: Sendable {
        let provider: ManagedSessionProvider
        let handle: AuthSessionHandle<ManagedSessionProvider>
        let recorder = RecordingAuthSessionDelegate()
        let statusAfterInit: AuthSessionStatus

        init(
            service: SignInWithAppleService,
            store: any SessionStore,
            clock: ManualClock,
            activation: ManualActivationSignal
        ) {
            provider = ManagedSessionProvider(
                store: store,
                remote: service,
                clock: clock,
                configuration: .init(credentialCheckInterval: 0, activationSignal: activation)
            )
            handle = AuthSessionHandle(
                sessionProvider: provider,
                biometricAuthenticator: MockBiometricAuthenticator(),
                activationSignal: activation,
                clock: clock
            )
            statusAfterInit = handle.sessionStatus
            handle.subscribeDelegate(recorder, receive: recorder.queue)
        }

        func settle() async {
            await provider.waitUntilIdle()
            await handle.waitUntilIdle()
            await recorder.drain()
        }
    }

    private let clock = ManualClock()
    private let activation = ManualActivationSignal()
    private let store = InMemorySessionStore()
    private let apple: SimulatedAppleIDProvider
    private let deletions = ConcurrencySafeContainer<[String]>([])
    private let refreshes = ConcurrencySafeContainer(0)

    init() {
        apple = SimulatedAppleIDProvider(
            clientID: Self.clientID,
            clock: clock,
            includesEmailInEveryIdentityToken: false
        )
    }

    private func service(_ backend: SignInWithAppleBackend = .deviceOnly) -> SignInWithAppleService {
        SignInWithAppleService(
            clientID: Self.clientID,
            backend: backend,
            credentialStates: apple,
            revocationSignal: apple,
            signatureVerifier: JSONWebKeySetVerifier(keySet: apple.keySet),
            clock: clock
        )
    }

    /// A backend that redeems the code at Apple, issues its own tokens, and deletes the account
    /// by revoking the user's tokens at Apple.
    private func backend() -> SignInWithAppleBackend {
        let apple = apple
        let deletions = deletions
        return .exchange(
            { authorization in
                let user = try apple.redeem(authorizationCode: authorization.authorizationCode)
                return IssuedTokens(
                    accessToken: "at-\(UUID())",
                    refreshToken: "rt-\(UUID())",
                    expiresIn: 3600,
                    user: .init(identifier: user)
                )
            },
            refresh: { [refreshes] _ in
                refreshes.withLock { $0 += 1 }
                return IssuedTokens(accessToken: "at-\(UUID())", refreshToken: "rt-\(UUID())", expiresIn: 3600)
            },
            deleteAccount: { session in
                let appleUser = session.user.profile[SignInWithAppleService.appleUserIDProfileKey] ?? ""
                apple.revokeTokens(userID: appleUser)
                deletions.withLock { $0.append(appleUser) }
            }
        )
    }

    private func launch(_ backend: SignInWithAppleBackend = .deviceOnly) -> App {
        App(service: service(backend), store: store, clock: clock, activation: activation)
    }

    private func signIn(_ app: App) async throws {
        let nonce = SignInWithAppleNonce()
        try await app.provider.signIn(with: apple.authorize(Self.ada, nonce: nonce.hashed), nonce: nonce)
    }

    @Test func theFirstSignInsNameAndEmailSurviveARelaunchAndALaterSignIn() async throws {
        let first = launch()
        try await signIn(first)
        await first.settle()
        #expect(first.provider.session?.user.name == "Ada Lovelace")
        #expect(first.provider.session?.user.email == "ada@privaterelay.appleid.com")

        // Relaunch: the stored session is signed in inside the handle's init.
        let second = launch()
        #expect(second.statusAfterInit == .signedIn)
        await second.settle()
        #expect(!second.recorder.statusChanges.contains { $0.to == .signedOut }, "no sign-in flash")
        #expect(second.provider.session?.user.name == "Ada Lovelace")

        // A later authorization carries no name, and its token no email.
        let nonce = SignInWithAppleNonce()
        let later = apple.authorize(Self.ada, nonce: nonce.hashed)
        #expect(later.fullName == nil && later.email == nil)
        try await second.provider.signIn(with: later, nonce: nonce)
        await second.settle()
        #expect(second.provider.session?.user.name == "Ada Lovelace")
        #expect(second.provider.session?.user.email == "ada@privaterelay.appleid.com")
        #expect(try store.load()?.user.name == "Ada Lovelace", "kept in the store too")
    }

    @Test(arguments: [false, true])
    func stopUsingAppleIDSignsOutAtTheNextActivation(withBackend: Bool) async throws {
        // With a backend, the session has a refresh token the backend would still honour: Apple's
        // verdict is about the Apple ID, so it signs out without asking the backend.
        let app = launch(withBackend ? backend() : .deviceOnly)
        try await signIn(app)
        await app.settle()
        apple.stopUsingAppleID(userID: Self.ada.userID)
        await app.settle()
        #expect(app.handle.sessionStatus == .signedIn, "nothing tells a running app")
        activation.fire()
        try await app.recorder.waitForStatus(.signedOut, timeout: 300)
        await app.settle()
        #expect(app.provider.session == nil)
        #expect(try store.load() == nil)
        let logouts = app.recorder.events.compactMap { event -> ManagedSessionError? in
            if case .logout(let error) = event { return error as? ManagedSessionError }
            return nil
        }
        #expect(logouts == [.credentialRevoked(.revoked)])
        #expect(refreshes.withLock { $0 } == 0, "the verdict was not put to the backend's refresh")
    }

    @Test func theRevocationNotificationSignsOutAtOnce() async throws {
        let app = launch()
        try await signIn(app)
        await app.settle()
        #expect(apple.observerCount == 1, "the service's signal is wired by default")
        apple.stopUsingAppleID(userID: Self.ada.userID, notifies: true)
        #expect(app.provider.session == nil, "signed out before the post returned")
        try await app.recorder.waitForStatus(.signedOut, timeout: 300)
    }

    @Test func deletingTheAccountRevokesAtTheBackendThenSignsOut() async throws {
        let app = launch(backend())
        try await signIn(app)
        await app.settle()
        let changes = app.provider.sessionChanges.makeAsyncIterator()
        try await app.provider.deleteAccount()
        #expect(deletions.withLock { $0 } == [Self.ada.userID])
        #expect(apple.tokenRevocationCount == 1)
        #expect(try await apple.credentialState(forUserID: Self.ada.userID) == .revoked)
        #expect(app.provider.session == nil)
        #expect(try store.load() == nil)
        try await app.recorder.waitForStatus(.signedOut, timeout: 300)
        let events = try await withSafetyNet {
            var iterator = changes
            var events: [String] = []
            while events.count < 2, let change = await iterator.next() {
                events.append("\(change.event)")
            }
            return events
        }
        #expect(events == ["initialSession", "signedOut(accountDeleted)"])
    }

    @Test func aDeletionTheBackendRefusesLeavesTheUserSignedIn() async throws {
        let failing = SignInWithAppleBackend.exchange(
            { _ in IssuedTokens(accessToken: "at", refreshToken: "rt", expiresIn: 3600) },
            deleteAccount: { _ in throw URLError(.notConnectedToInternet) }
        )
        let app = launch(failing)
        try await signIn(app)
        do {
            try await app.provider.deleteAccount()
            Issue.record("the deletion reported success")
        } catch {
            #expect(error == .remote(RemoteAuthError(.network(code: -1009))))
        }
        #expect(app.provider.session != nil)
        #expect(try store.load() != nil)
    }

    @Test func appleSaysRevokedWhileARefreshRotatesTheTokensStillSignsOut() async throws {
        let states = HeldCredentialStates()
        let service = SignInWithAppleService(
            clientID: Self.clientID,
            backend: backend(),
            credentialStates: states,
            revocationSignal: apple,
            signatureVerifier: JSONWebKeySetVerifier(keySet: apple.keySet),
            clock: clock
        )
        let app = App(service: service, store: store, clock: clock, activation: activation)
        try await signIn(app)
        await app.settle()
        clock.advance(by: 301)
        states.hold(answering: .revoked)
        activation.fire()
        try await withSafetyNet { await states.waitForHeldCheck() }
        _ = try await app.provider.refresh()  // the backend rotates while Apple answers
        states.release()
        try await app.recorder.waitForStatus(.signedOut, timeout: 300)
        #expect(app.provider.session == nil, "Apple's verdict is about the Apple ID, not about the tokens it saw")
    }

    @Test func appleSaysRevokedWhileAnotherProcessRotatesTheStoredSessionIsRemovedToo() async throws {
        let states = HeldCredentialStates()
        func service(_ states: any AppleIDCredentialStateSource) -> SignInWithAppleService {
            SignInWithAppleService(
                clientID: Self.clientID,
                backend: backend(),
                credentialStates: states,
                revocationSignal: apple,
                signatureVerifier: JSONWebKeySetVerifier(keySet: apple.keySet),
                clock: clock
            )
        }
        let app = App(service: service(states), store: store, clock: clock, activation: activation)
        try await signIn(app)
        await app.settle()
        // An extension sharing the store (here a second manager, which hears no notice from an
        // in-memory store) refreshes while Apple answers the app's check.
        let fileProvider = App(
            service: service(apple),
            store: store,
            clock: clock,
            activation: ManualActivationSignal()
        )
        await fileProvider.settle()
        clock.advance(by: 301)
        states.hold(answering: .revoked)
        activation.fire()
        try await withSafetyNet { await states.waitForHeldCheck() }
        _ = try await fileProvider.provider.refresh()
        states.release()
        try await app.recorder.waitForStatus(.signedOut, timeout: 300)
        await app.settle()
        #expect(try store.load() == nil, "the revoked Apple ID's session, rotated elsewhere, is removed too")
        let relaunched = App(service: service(apple), store: store, clock: clock, activation: ManualActivationSignal())
        #expect(relaunched.statusAfterInit == .signedOut)
    }

    @Test func aSignInOfTheSameAccountDuringItsDeletionIsSignedOutToo() async throws {
        let deleting = Checkpoint()
        let service = SignInWithAppleService(
            clientID: Self.clientID,
            backend: .exchange(
                { _ in IssuedTokens(accessToken: "at-\(UUID())", refreshToken: "rt-\(UUID())", expiresIn: 3600) },
                deleteAccount: { _ in await deleting.arrive() }
            ),
            credentialStates: apple,
            revocationSignal: apple,
            signatureVerifier: JSONWebKeySetVerifier(keySet: apple.keySet),
            clock: clock
        )
        let app = App(service: service, store: store, clock: clock, activation: activation)
        try await signIn(app)
        let deletion = Task { () -> Result<Void, ManagedSessionError> in
            do throws(ManagedSessionError) {
                try await app.provider.deleteAccount()
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try await withSafetyNet { await deleting.waitForArrival() }
        try await signIn(app)  // a second tap on "Sign in with Apple" while the backend deletes
        deleting.release()
        try await deletion.value.get()
        #expect(app.provider.session == nil, "the deleted account is not left signed in")
        #expect(try store.load() == nil)
    }
}

/// Where the code under test stops until the test lets it go: ``arrive()`` waits for
/// ``release()`` (at once after it); ``waitForArrival()`` returns once something arrived.
private final class Checkpoint: Sendable {
    private struct State {
        var hasArrived = false
        var isReleased = false
        var arrived: [CheckedContinuation<Void, Never>] = []
        var watchers: [CheckedContinuation<Void, Never>] = []
    }
    private let state = ConcurrencySafeContainer(State())

    func arrive() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (isReleased, watchers) = state.withLock { state in
                state.hasArrived = true
                if !state.isReleased { state.arrived.append(continuation) }
                defer { state.watchers = [] }
                return (state.isReleased, state.watchers)
            }
            for watcher in watchers { watcher.resume() }
            if isReleased { continuation.resume() }
        }
    }

    func waitForArrival() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let hasArrived = state.withLock { state in
                if !state.hasArrived { state.watchers.append(continuation) }
                return state.hasArrived
            }
            if hasArrived { continuation.resume() }
        }
    }

    func release() {
        let arrived = state.withLock { state in
            state.isReleased = true
            defer { state.arrived = [] }
            return state.arrived
        }
        for continuation in arrived { continuation.resume() }
    }
}

/// A credential-state source that answers what the test says; after ``hold(answering:)`` its
/// checks wait at a checkpoint until ``release()``.
private final class HeldCredentialStates: AppleIDCredentialStateSource, Sendable {
    private let state = ConcurrencySafeContainer((answer: CredentialState.authorized, checkpoint: Checkpoint?.none))

    func hold(answering answer: CredentialState) {
        state.withLock { $0 = (answer, Checkpoint()) }
    }

    func release() {
        state.withLock { $0.checkpoint }?.release()
    }

    /// Returns once a check is held.
    func waitForHeldCheck() async {
        await state.withLock { $0.checkpoint }?.waitForArrival()
    }

    func credentialState(forUserID userID: String) async throws(RemoteAuthError) -> CredentialState {
        await state.withLock { $0.checkpoint }?.arrive()
        return state.withLock { $0.answer }
    }
}
