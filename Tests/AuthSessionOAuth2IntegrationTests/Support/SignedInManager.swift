import AuthSession
import AuthSessionMocks
import AuthSessionProviders

/// A manager signed in through `remote` with a password, on `clock` (a manual clock nobody moves:
/// its tokens look fresh to it, so nothing but a 401 refreshes), and the handle that starts it
/// (kept alive by the caller).
func makeSignedInManager(
    remote: any RemoteAuthService,
    clock: ManualClock = ManualClock(),
    username: String,
    password: String
) async throws -> (ManagedSessionProvider, AuthSessionHandle<ManagedSessionProvider>) {
    let provider = ManagedSessionProvider(
        store: InMemorySessionStore(),
        remote: remote,
        clock: clock,
        configuration: .init(activationSignal: ManualActivationSignal())
    )
    let handle = AuthSessionHandle(
        sessionProvider: provider,
        biometricAuthenticator: MockBiometricAuthenticator(),
        activationSignal: ManualActivationSignal(),
        clock: clock
    )
    try await provider.signIn(with: .password(username: username, password: password))
    return (provider, handle)
}
