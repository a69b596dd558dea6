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

    /// Tells the observer how far the server's clock was from this device's in a token answer,
    /// when the answer showed a difference (a sign-in's or a refresh's).
    func issued(_ tokens: IssuedTokens) {
        if let offset = tokens.serverClockOffset {
            delivery.send(.serverClockOffset(offset))
        }
    }

    /// One event of the outbox, with the runtime session as it was when the event was queued,
    /// and, for a sign-out the provider queued, what it recorded when it decided it.
    func published(_ event: AuthSessionEvent, session: ManagedSession?, signOut: QueuedSignOut? = nil) {
        let changes = changes.publish(event, session: session, cause: signOut?.cause)
        switch event {
        case .sessionSignedOut(let error):
            let ended = changes.contains {
                if case .signedOut = $0.event { return true }
                return false
            }
            // A launch that ends signed out on its own (a spent session, a corrupt store: no
            // sign-out was asked for) ended a session too; a sign-out that was asked for says
            // itself whether it ended one (the session the launch was still refreshing).
            let launchEnded = signOut == nil && error != nil && changes.contains { $0.event.isInitial }
            let wasSignedIn = ended || launchEnded || signOut?.endedSession == true
            let cause = signOut?.cause ?? SignOutCause(error: error)
            delivery.send(.signedOut(cause: cause, wasSignedIn: wasSignedIn))
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

/// A sign-out the provider queued itself, as it was when it was decided: its cause rendered
/// while the ended session's tokens were still registered with `SecretRedactor`, and whether
/// it ended a session (the launch may still have been refreshing it, unknown to the stream).
struct QueuedSignOut: Sendable {
    let cause: SignOutCause
    let endedSession: Bool
}

/// Pairs the sign-outs the provider queues with their events in the outbox.
///
/// The outbox holds the handle's events (`sessionSignedOut(error:)` carries the app's error as
/// it is), and the machine queues sign-outs of its own; each sign-out event is numbered by its
/// place among all the sign-outs ever queued, which is the number drained so far plus those
/// still in the outbox. Used under the provider's lock.
struct SignOutLedger {
    private var entries: [UInt64: QueuedSignOut] = [:]
    private var drainedCount: UInt64 = 0

    /// Records `signOut` for the sign-out event about to be queued behind
    /// `signOutsInOutbox` others.
    mutating func queue(_ signOut: QueuedSignOut, behind signOutsInOutbox: Int) {
        entries[drainedCount + UInt64(signOutsInOutbox)] = signOut
    }

    /// A sign-out event left the outbox: what was recorded for it, if the provider queued it.
    mutating func drained() -> QueuedSignOut? {
        defer { drainedCount += 1 }
        return entries.removeValue(forKey: drainedCount)
    }

    /// Whether `event` is a sign-out.
    static func isSignOut(_ event: AuthSessionEvent) -> Bool {
        if case .sessionSignedOut = event { return true }
        return false
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
