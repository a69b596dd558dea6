import AuthSession
import AuthSessionInterface
import Foundation

/// What a manager tells beyond its handle: the session stream's subscribers and the observer.
///
/// The manager calls it from its drain of the outbox (one thread at a time, in commit order, with
/// no lock held) and at the start and end of a sign-in or a refresh; it never calls a subscriber
/// or the observer itself (the hub buffers, the delivery queues).
final class ManagerInstrumentation: Sendable {
    let changes = SessionChangeHub()
    let delivery: ObservationDelivery
    private let refreshCounters = ConcurrencySafeContainer<[UInt64: RefreshCounters]>([:])

    init(observer: (any ManagedSessionObserver)?) {
        delivery = ObservationDelivery(observer: observer)
    }

    /// One event of the outbox, with the runtime session as it was when the event was queued.
    func published(_ event: AuthSessionEvent, session: ManagedSession?) {
        let changes = changes.publish(event, session: session)
        switch event {
        case .sessionSignedOut(let error):
            let ended = changes.contains {
                if case .signedOut = $0.event { return true }
                return false
            }
            // A launch that ends signed out (a spent session, a corrupt store) ended a session too.
            let launchEnded = error != nil && changes.contains { $0.event.isInitial }
            delivery.send(.signedOut(cause: SignOutCause(error: error), wasSignedIn: ended || launchEnded))
        case .unexpectedError(let error):
            switch error {
            case .sessionFetchFailed(let cause as ManagedSessionError):
                if case .storage(let storeError) = cause { delivery.send(.storeFailed(storeError, during: .refresh)) }
            case .signingOutFailure(let cause as ManagedSessionError):
                if case .storage(let storeError) = cause { delivery.send(.storeFailed(storeError, during: .signOut)) }
            case .userUpdateFailure(let cause as ManagedSessionError):
                if case .storage(let storeError) = cause {
                    delivery.send(.storeFailed(storeError, during: .settingUpdate))
                }
            default:
                break
            }
        default:
            break
        }
    }

    /// The counters of the refresh `flightID`, made on first use.
    func counters(for flightID: UInt64) -> RefreshCounters {
        refreshCounters.withLock { counters in
            if let existing = counters[flightID] { return existing }
            let made = RefreshCounters()
            counters[flightID] = made
            return made
        }
    }

    /// The refresh `flightID` ended: its counters.
    func endRefresh(_ flightID: UInt64) -> RefreshCounters {
        refreshCounters.withLock { $0.removeValue(forKey: flightID) } ?? RefreshCounters()
    }
}

extension ManagedSessionEvent {

    /// Whether this is ``initialSession``.
    var isInitial: Bool {
        if case .initialSession = self { return true }
        return false
    }
}

extension ManagedSessionProvider {

    /// Runs a sign-in, telling the observer when it starts and how it ended.
    func observingSignIn(
        grantType: String,
        _ body: () async throws(ManagedSessionError) -> ManagedSession
    ) async throws(ManagedSessionError) -> ManagedSession {
        let delivery = instrumentation.delivery
        let start = clock.now
        delivery.send(.signInStarted(grantType: grantType))
        do throws(ManagedSessionError) {
            let session = try await body()
            delivery.send(
                .signInFinished(grantType: grantType, error: nil, duration: clock.now.timeIntervalSince(start))
            )
            return session
        } catch {
            if case .storage(let storeError) = error { delivery.send(.storeFailed(storeError, during: .signIn)) }
            delivery.send(
                .signInFinished(grantType: grantType, error: error, duration: clock.now.timeIntervalSince(start))
            )
            throw error
        }
    }

    /// Waits until every observation queued so far reached the observer (for tests).
    func observationsDelivered() async {
        await instrumentation.delivery.delivered()
    }
}

extension ManagedSessionProvider {

    /// Tells the observer how the refresh `flight` ended, before its result is committed (so a
    /// sign-out it causes is observed after it).
    func reportRefresh(_ flight: RefreshFlight, _ outcome: RefreshOutcome, since start: Date) {
        let counters = instrumentation.endRefresh(flight.id)
        let reported: ManagedSessionObservation.RefreshOutcome
        switch outcome {
        case .committed(_, let orphaned):
            // Its own tokens stored, or (none presented, or orphaned by a rotation found at commit)
            // another process's adopted.
            reported = counters.attempts > 0 && orphaned == nil ? .refreshed : .adopted
        case .failed(let error):
            if case .storage(let storeError) = error {
                instrumentation.delivery.send(.storeFailed(storeError, during: .refresh))
            }
            reported = .failed(error)
        case .terminal(let error, _, _):
            reported = .endedSession(error)
        case .stale:
            // Ended by a rotation another process stored (a notice), or by a sign-out or sign-in.
            reported = flight.generation == generationForReports ? .adopted : .superseded
        }
        instrumentation.delivery.send(
            .refreshFinished(
                .init(
                    outcome: reported,
                    duration: clock.now.timeIntervalSince(start),
                    attempts: counters.attempts,
                    leaseWaits: counters.leaseWaits,
                    isLaunch: flight.isLaunch
                )
            )
        )
    }
}
