import AuthSessionInterface
import Dispatch
import Foundation

// Types written against the contract alone, in the shape the primary spec's "Usage 1" shows:
// they prove a feature module can describe, consume and fake a session without the engine.

struct ContractUser: AuthSessionUserProtocol {
    let identifier: String
}

struct ContractSession: AuthSessionProtocol {
    let accessToken: String
    let expiresAt: TimeInterval
    let user: ContractUser
}

/// A provider in the spec's shape, made thread-safe with a lock.
final class ContractProvider: NSObject, AuthSessionProviderProtocol, @unchecked Sendable {
    // @unchecked: every mutable property is read and written under `lock`.
    typealias AuthSession = ContractSession

    private let lock = NSLock()
    private var storedSession: ContractSession?
    private var biometricEnabled = false
    private var signoutErrors: [(any Error)?] = []
    private(set) weak var eventProxy: (any AuthSessionEventProxy)?

    init(session: ContractSession?) {
        storedSession = session
    }

    var session: ContractSession? { lock.withLock { storedSession } }
    var isBioMetricAuthenticationEnabled: Bool { lock.withLock { biometricEnabled } }
    var recordedSignoutErrors: [(any Error)?] { lock.withLock { signoutErrors } }

    func initializeSessionProvider(for eventProxy: any AuthSessionEventProxy) {
        lock.withLock { self.eventProxy = eventProxy }
        eventProxy.publish(.fetchingSession)
        eventProxy.publish(.sessionFetched(isInitialFetch: true))
    }

    func setBioMetricAuthentication(_ isEnabled: Bool) {
        lock.withLock { biometricEnabled = isEnabled }
    }

    func signout(with error: (any Error)?) throws {
        let proxy = lock.withLock {
            storedSession = nil
            signoutErrors.append(error)
            return eventProxy
        }
        proxy?.publish(.sessionSignedOut(error: error))
    }

    func preferredAuthenticationReason() -> String { "Unlock your account" }
    func canPerformAuthentication() -> Bool { isBioMetricAuthenticationEnabled }
}

/// A status type of a fake handle.
enum ContractStatus: AuthSessionStatusProtocol, Equatable {
    case loading
    case signedIn
    case signedOut

    var isSyncing: Bool { self == .loading }
    var isSignedIn: Bool { self == .signedIn }
    var isSignedOut: Bool { self == .signedOut }
    var isValidating: Bool { false }
    var isBiometricAuthentication: Bool { false }
}

/// An event proxy written against the contract: forwards every event to its closure.
final class ContractEventProxy: AuthSessionEventProxy {
    private let eventListening: @Sendable (AuthSessionEvent) -> Void

    init(eventListening: @escaping @Sendable (AuthSessionEvent) -> Void) {
        self.eventListening = eventListening
    }

    func publish(_ event: AuthSessionEvent, for sessionProvider: (any AuthSessionProviderProtocol)?) {
        eventListening(event)
    }
}

/// The smallest honest handle: maps sign-in / sign-out / fetch events to a status and tells its
/// delegates. It shows the handle contract can be met (and faked) without the engine.
final class ContractHandle<Provider: AuthSessionProviderProtocol>: AuthSessionHandleProtocol, @unchecked Sendable {
    // @unchecked: `status`, `manualRequired` and `subscribers` are only touched under `lock`;
    // the `let`s are set once in `init`.
    typealias Delegate = any AuthSessionDelegate

    private struct Subscriber {
        weak var delegate: (any AuthSessionDelegate)?
        let queue: DispatchQueue
    }

    let sessionProvider: Provider
    private let lock = NSLock()
    private var status = ContractStatus.loading
    private var manualRequired = false
    private var subscribers: [ObjectIdentifier: Subscriber] = [:]
    private var proxy: ContractEventProxy?

    init(sessionProvider: Provider) {
        self.sessionProvider = sessionProvider
        let proxy = ContractEventProxy { [weak self] event in self?.handle(event) }
        self.proxy = proxy
        sessionProvider.initializeSessionProvider(for: proxy)
    }

    var session: Provider.AuthSession? { sessionProvider.session }
    var sessionStatus: ContractStatus { lock.withLock { status } }
    var isBiometricAuthenticationInProcess: Bool { false }
    var isManualAuthenticationRequired: Bool { lock.withLock { manualRequired } }

    func requestManualAuthentication() {
        lock.withLock { manualRequired = false }
    }

    func subscribeDelegate(_ delegate: any AuthSessionDelegate, receive queue: DispatchQueue) {
        lock.withLock { subscribers[ObjectIdentifier(delegate)] = Subscriber(delegate: delegate, queue: queue) }
    }

    func unsubscribeDelegate(_ delegate: any AuthSessionDelegate) {
        _ = lock.withLock { subscribers.removeValue(forKey: ObjectIdentifier(delegate)) }
    }

    var subscriberCount: Int { lock.withLock { subscribers.count } }

    private func handle(_ event: AuthSessionEvent) {
        let session = sessionProvider.session
        let newStatus: ContractStatus? =
            switch event {
            case .fetchingSession: .loading
            case .sessionFetched, .sessionFetchFailed: session == nil ? .signedOut : .signedIn
            case .sessionSignIn: .signedIn
            case .sessionSignedOut: .signedOut
            case .sessionUpdated, .unexpectedError: nil
            }
        lock.withLock {
            guard let newStatus, newStatus != status else { return }
            let oldStatus = status
            status = newStatus
            for subscriber in subscribers.values {
                subscriber.queue.async { [weak self, weak delegate = subscriber.delegate] in
                    delegate?.authentication(self, didUpdateStatus: newStatus, from: oldStatus, for: session)
                }
            }
        }
    }
}
