#if canImport(Observation)
import AuthSessionInterface
import Observation

/// A handle's state for SwiftUI: status, sign-in, loading, the user and the last error, kept
/// current on the main actor and observable with the Observation framework.
///
/// ```swift
/// struct RootView: View {
///     let session: ObservableAuthSession
///
///     var body: some View {
///         if session.isLoading {
///             SplashView()
///         } else if session.isSignedIn {
///             HomeView()
///         } else {
///             SignInView()
///         }
///     }
/// }
/// ```
///
/// The model consumes ``AuthSessionHandle/statusUpdates()`` and
/// ``AuthSessionHandle/delegateEvents()``: the same transitions delegates see, in the same order.
/// It stops listening when it is deallocated. Use it from the main actor only.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, macCatalyst 17, *)
@MainActor
@Observable
public final class ObservableAuthSession {

    /// The handle's status.
    public private(set) var status: AuthSessionStatus

    /// The signed-in user, or `nil`; read from the provider's session at each change.
    public private(set) var user: (any AuthSessionUserProtocol)?

    /// The latest error the handle reported, or `nil` if none yet.
    public private(set) var lastError: AuthSessionError?

    /// Whether validation is paused until the user asks for it again.
    public private(set) var isManualAuthenticationRequired: Bool

    /// Whether the status is ``AuthSessionStatus/signedIn``.
    public var isSignedIn: Bool { status.isSignedIn }

    /// Whether the session is still being decided (syncing, validating, or a biometric prompt).
    public var isLoading: Bool { status.isLoadingStatus }

    @ObservationIgnored private let listeners: ListenerTasks

    /// Creates a model that follows `handle` from now on.
    ///
    /// - Parameter handle: The handle to follow; held weakly.
    public init<Provider: AuthSessionProviderProtocol>(handle: AuthSessionHandle<Provider>) {
        status = handle.sessionStatus
        user = handle.session?.user
        isManualAuthenticationRequired = handle.isManualAuthenticationRequired
        listeners = ListenerTasks()

        let statuses = handle.statusUpdates()
        let events = handle.delegateEvents()
        let facts: @Sendable () -> HandleFacts = { [weak handle] in
            HandleFacts(
                user: handle?.session?.user,
                isManualAuthenticationRequired: handle?.isManualAuthenticationRequired ?? false
            )
        }
        listeners.start { @MainActor [weak self] in
            for await status in statuses {
                self?.apply(status: status, facts())
            }
        }
        listeners.start { @MainActor [weak self] in
            for await event in events {
                self?.apply(event, facts())
            }
        }
    }

    private func apply(status newStatus: AuthSessionStatus, _ facts: HandleFacts) {
        if status != newStatus {
            status = newStatus
        }
        refresh(facts)
    }

    private func apply(_ event: AuthSessionDelegateEvent, _ facts: HandleFacts) {
        if case .failure(let error) = event {
            lastError = error
        }
        refresh(facts)
    }

    private func refresh(_ facts: HandleFacts) {
        if !Self.isSame(user, facts.user) {
            user = facts.user
        }
        if isManualAuthenticationRequired != facts.isManualAuthenticationRequired {
            isManualAuthenticationRequired = facts.isManualAuthenticationRequired
        }
    }
}

@available(iOS 17, macOS 14, tvOS 17, watchOS 10, macCatalyst 17, *)
extension ObservableAuthSession {

    /// Whether two users are equal, by their own `Hashable` conformance.
    fileprivate static func isSame(_ lhs: (any AuthSessionUserProtocol)?, _ rhs: (any AuthSessionUserProtocol)?) -> Bool
    {
        switch (lhs, rhs) {
        case (nil, nil): true
        case (let lhs?, let rhs?): AnyHashable(lhs) == AnyHashable(rhs)
        default: false
        }
    }
}

/// What the model reads from the handle at each change.
private struct HandleFacts: Sendable {
    let user: (any AuthSessionUserProtocol)?
    let isManualAuthenticationRequired: Bool
}

/// Tasks cancelled when their owner is deallocated.
private final class ListenerTasks: Sendable {
    private let tasks = ConcurrencySafeContainer<[Task<Void, Never>]>([])

    func start(_ body: @escaping @Sendable @MainActor () async -> Void) {
        let task = Task { @MainActor in await body() }
        tasks.withLock { $0.append(task) }
    }

    deinit {
        for task in tasks.withLock({ $0 }) {
            task.cancel()
        }
    }
}
#endif
