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
///             ProgressView()
///         } else if session.isSignedIn {
///             Text("Welcome")
///         } else {
///             Text("Please sign in")
///         }
///     }
/// }
/// ```
///
/// What it shows, precisely: the state each step of the handle leaves (a step applies one input:
/// a provider event, an activation, a prompt's outcome, a manual request), in step order, fed
/// under the same lock that orders delegate callbacks and starting with the state at creation.
/// That is the status, the manual-authentication flag (which no callback carries), the user the
/// step saw, and the step's last error. It does not show the statuses a step passes through
/// (a launch fetch going `syncing → validating → signedIn` shows `signedIn`), and SwiftUI draws
/// only the values current when it renders, so several quick steps may appear as one. To see
/// every change, use a delegate, ``SessionDelegateEventProxy`` or
/// ``AuthSessionHandle/statusUpdates()``.
///
/// It always converges: once the handle has no input left to apply, ``status`` and
/// ``isManualAuthenticationRequired`` equal the handle's and ``user`` is the user of its latest
/// step. It stops listening when it is deallocated. Use it from the main actor only.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, macCatalyst 17, *)
@MainActor
@Observable
public final class ObservableAuthSession {

    /// The handle's status.
    public private(set) var status: AuthSessionStatus

    /// The user of the latest step: the provider's session's user, read just before the step
    /// (or the one a `sessionUpdated` event carried); `nil` without a session.
    public private(set) var user: (any AuthSessionUserProtocol)?

    /// The latest error the handle reported, or `nil` if none since creation or
    /// ``clearLastError()``. A later success does not clear it.
    public private(set) var lastError: AuthSessionError?

    /// Whether validation is paused until the user asks for it again.
    public private(set) var isManualAuthenticationRequired: Bool

    /// Whether the status is ``AuthSessionStatus/signedIn``.
    public var isSignedIn: Bool { status.isSignedIn }

    /// Whether the session is still being decided (syncing, validating, or a biometric prompt).
    public var isLoading: Bool { status.isLoadingStatus }

    @ObservationIgnored private let listener: ListenerTask

    /// Creates a model that follows `handle` from now on.
    ///
    /// Its properties are read from the handle at once; the first update, taken under the handle's
    /// lock, then replaces them with what the latest step saw, so a change racing the creation is
    /// never lost.
    ///
    /// - Parameter handle: The handle to follow; held weakly.
    public init<Provider: AuthSessionProviderProtocol>(handle: AuthSessionHandle<Provider>) {
        status = handle.sessionStatus
        user = handle.session?.user
        isManualAuthenticationRequired = handle.isManualAuthenticationRequired
        listener = ListenerTask()

        let updates = handle.observationUpdates()
        listener.start { @MainActor [weak self] in
            for await update in updates {
                self?.apply(update)
            }
        }
    }

    /// Forgets ``lastError``, for example once it has been shown.
    public func clearLastError() {
        lastError = nil
    }

    private func apply(_ update: ObservationUpdate) {
        if status != update.status {
            status = update.status
        }
        if isManualAuthenticationRequired != update.isManualAuthenticationRequired {
            isManualAuthenticationRequired = update.isManualAuthenticationRequired
        }
        if !Self.isSame(user, update.user) {
            user = update.user
        }
        if let error = update.errors.last {
            lastError = error
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

/// A task cancelled when its owner is deallocated. Started after the owner's initialization, since
/// its body refers to the owner.
private final class ListenerTask: Sendable {
    private let task = ConcurrencySafeContainer<Task<Void, Never>?>(nil)

    func start(_ body: @escaping @Sendable @MainActor () async -> Void) {
        let started = Task { @MainActor in await body() }
        task.withLock { $0 = started }
    }

    deinit {
        task.withLock { $0 }?.cancel()
    }
}
#endif
