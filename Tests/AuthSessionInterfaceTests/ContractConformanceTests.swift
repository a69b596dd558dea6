import AuthSessionInterface
import Dispatch
import Foundation
import Testing

/// Records status callbacks; thread-safe.
private final class StatusRecorder: AuthSessionDelegate, @unchecked Sendable {
    // @unchecked: `changes` is only touched under `lock`.
    private let lock = NSLock()
    private var changes: [(old: ContractStatus, new: ContractStatus)] = []

    var recorded: [(old: ContractStatus, new: ContractStatus)] { lock.withLock { changes } }

    func authentication(
        _ sessionHandle: (any AuthSessionHandleProtocol)?,
        didUpdateStatus sessionStatus: any AuthSessionStatusProtocol,
        from oldStatus: any AuthSessionStatusProtocol,
        for session: (any AuthSessionProtocol)?
    ) {
        guard let new = sessionStatus as? ContractStatus, let old = oldStatus as? ContractStatus else { return }
        lock.withLock { changes.append((old, new)) }
    }
}

@Suite("The contract is implementable without the engine")
struct ContractConformanceTests {

    private static let queue = DispatchQueue(label: "ContractConformanceTests")

    @Test("a provider written against the contract drives a fake handle through sign-in and sign-out")
    func fakeHandleLifecycle() throws {
        let user = ContractUser(identifier: "ada")
        let provider = ContractProvider(
            session: ContractSession(accessToken: "secret", expiresAt: Date().timeIntervalSince1970 + 3600, user: user)
        )
        let handle = ContractHandle(sessionProvider: provider)
        #expect(handle.sessionStatus == .signedIn)
        #expect(handle.session?.user == user)

        let recorder = StatusRecorder()
        handle.subscribeDelegate(recorder, receive: Self.queue)

        try provider.signout()
        Self.queue.sync {}

        #expect(handle.sessionStatus == .signedOut)
        #expect(handle.session == nil)
        #expect(recorder.recorded.map(\.new) == [.signedOut])
        #expect(recorder.recorded.map(\.old) == [.signedIn])
        #expect(provider.recordedSignoutErrors.count == 1)
        #expect(provider.recordedSignoutErrors.first.map { $0 == nil } == true)
    }

    @Test("the handle protocol's extension members forward to the provider")
    func biometricFlagForwardsToProvider() {
        let provider = ContractProvider(session: nil)
        let handle = ContractHandle(sessionProvider: provider)
        #expect(handle.isBioMetricAuthenticationEnabled == false)
        handle.setBioMetricAuthentication(true)
        #expect(provider.isBioMetricAuthenticationEnabled)
        #expect(handle.isBioMetricAuthenticationEnabled)
        #expect(provider.canPerformAuthentication())
    }

    @Test("the provider's policy defaults are those of the spec")
    func providerPolicyDefaults() {
        let provider = ContractProvider(session: nil)
        #expect(provider.allowsLocalSessionValidation)
        #expect(provider.isSessionAutoRefreshEnabled == false)
        for error in BiometricAuthenticationError.allCases {
            #expect(provider.allowsSessionSigningOutOnBiometricAuthenticationFailure(with: error))
        }
    }

    @Test("signout() is signout(with: nil)")
    func signoutWithoutErrorPassesNil() throws {
        let provider = ContractProvider(session: nil)
        try provider.signout()
        try provider.signout(with: AuthSessionError.sessionExpired)
        let errors = provider.recordedSignoutErrors
        #expect(errors.count == 2)
        #expect(errors[0] == nil)
        #expect(errors[1] is AuthSessionError)
    }

    @Test("publish(_:) delivers the event with no provider")
    func publishConvenienceOmitsProvider() {
        final class ProviderRecordingPublisher: AuthSessionEventPublisher, @unchecked Sendable {
            // @unchecked: `providers` is only touched under `lock`.
            let lock = NSLock()
            var providers: [(any AuthSessionProviderProtocol)?] = []
            func publish(_ event: AuthSessionEvent, for sessionProvider: (any AuthSessionProviderProtocol)?) {
                lock.withLock { providers.append(sessionProvider) }
            }
        }
        let publisher = ProviderRecordingPublisher()
        let provider = ContractProvider(session: nil)
        publisher.publish(.sessionSignIn)
        publisher.publish(.sessionSignIn, for: provider)
        #expect(publisher.providers.count == 2)
        #expect(publisher.providers[0] == nil)
        #expect(publisher.providers[1] === provider)
    }
}
