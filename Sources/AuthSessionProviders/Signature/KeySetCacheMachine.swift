import Foundation

/// The decisions of a ``JSONWebKeySetVerifier``'s cache: use the keys it holds, fetch them, join
/// the fetch in flight, or refuse. A value type without locks, I/O or clock reads; the verifier
/// holds it behind a lock and performs what it decides.
///
/// The rules:
/// - A set fetched less than `lifetime` ago is fresh: a token whose key it holds is verified
///   with it, without a fetch.
/// - A stale set that holds the token's key verifies it at once, and the set is fetched again
///   meanwhile (unless a fetch is in flight, or failed moments ago): no verification waits for a
///   refetch its keys do not need.
/// - No key for the token in a stale set, or no set yet: fetch (or join the fetch in flight).
/// - A fresh set without the token's key: fetch again, but at most once per
///   `minimumRefetchInterval` (measured from the start of the last fetch of any kind), so tokens
///   naming random keys cannot make the verifier hammer the issuer; inside that interval the key
///   is refused as unknown (a transient refusal: it may appear).
/// - A failed fetch leaves the set as it was, and is not repeated for `failureBackoff`: meanwhile
///   a verification that needs a fetch gets that failure at once, instead of each waiting for a
///   request of its own to a key set URL that is down.
/// - Keys held that do not verify a token (a token without `kid` after a rotation, a `kid` the
///   issuer reused) are no verdict until the set was fetched for that verification: it fetches
///   once more, under the same throttle and backoff, and is refused as unknown (transient) when
///   it may not.
/// - A set is "fetched for" a verification only by a fetch that started after the verification
///   began (``fetchesStarted`` when it began is its ticket: ``hasFetched(since:)``). A fetch
///   already in flight may answer with the keys from before a rotation the token comes from, so
///   a verification that joined one gets no verdict from it: it fetches once more, under the
///   throttle, or is refused as unknown (transient).
/// - After a fetch for it, a verification decides with what it has, and keys that then fail the
///   token are the verdict. It waits for two fetches at most: one it joined, one of its own.
/// - Time that runs backwards (a clock set back) counts as time passed: a set fetched "in the
///   future" is stale, and no throttle or backoff holds.
///
/// Not thread-safe: use from one task at a time (the verifier's lock does this).
struct KeySetCacheMachine: Sendable {

    /// What a verification does next.
    enum Decision: Equatable {
        /// Verify with these keys: the candidates for the token.
        case verify([JSONWebKey])
        /// Verify with these keys of a stale set, and start a fetch that nobody waits for (the
        /// machine now counts it in flight).
        case verifyWhileFetching([JSONWebKey])
        /// Start a fetch (the machine now counts it in flight) and wait for it.
        case startFetch
        /// Wait for the fetch in flight.
        case joinFetch
        /// Refuse the token.
        case refuse(IDTokenValidationError)
        /// Fail with the error of a fetch that failed moments ago.
        case fail(RemoteAuthError)
    }

    /// How long a fetched set is used before it is fetched again.
    let lifetime: TimeInterval

    /// The shortest time between two fetches made for a key the set does not hold.
    let minimumRefetchInterval: TimeInterval

    /// How long a failed fetch is not repeated: 5 seconds, or the refetch interval if shorter.
    let failureBackoff: TimeInterval

    /// Whether the keys can be fetched at all (`false` for a fixed set).
    let canFetch: Bool

    private(set) var keySet: JSONWebKeySet?
    private(set) var fetchedAt: Date?
    private(set) var lastFetchStarted: Date?
    private(set) var lastFailure: (at: Date, error: RemoteAuthError)?
    private(set) var isFetching = false
    /// How many times a verification joined a fetch in flight, ever (for tests and diagnostics).
    private(set) var joins = 0
    /// How many fetches started, ever: a verification's ticket is this count when it begins.
    private(set) var fetchesStarted = 0
    /// The number (1, 2, ...) of the fetch that brought ``keySet``; 0 for none or a fixed set.
    private var keySetFetchNumber = 0

    /// A cache that fetches its keys. A `lifetime` shorter than `minimumRefetchInterval` is
    /// raised to it: a set going stale sooner would start a fetch for every token naming an
    /// unknown `kid`, which the interval exists to prevent.
    init(lifetime: TimeInterval, minimumRefetchInterval: TimeInterval) {
        self.lifetime = max(lifetime, minimumRefetchInterval)
        self.minimumRefetchInterval = minimumRefetchInterval
        self.failureBackoff = min(5, minimumRefetchInterval)
        self.canFetch = true
    }

    /// A cache of a fixed set, which never fetches and never goes stale.
    init(fixed keySet: JSONWebKeySet) {
        self.lifetime = .infinity
        self.minimumRefetchInterval = .infinity
        self.failureBackoff = .infinity
        self.canFetch = false
        self.keySet = keySet
        self.fetchedAt = .distantPast
    }

    /// What to do for `token` at `now`; `hasFetched` when this verification already waited for a
    /// fetch that succeeded.
    mutating func decide(for token: JSONWebSignature, now: Date, hasFetched: Bool) -> Decision {
        let candidates = keySet?.candidates(for: token) ?? []
        if let keySet, isFresh(at: now) || hasFetched || !canFetch {
            if !candidates.isEmpty { return .verify(candidates) }
            guard canFetch, !hasFetched else { return .refuse(keySet.missingKeyError(for: token)) }
            if isFetching { return joinFetch() }
            if isWithin(minimumRefetchInterval, of: lastFetchStarted, at: now) || isBackingOff(at: now) {
                return .refuse(keySet.missingKeyError(for: token))
            }
            return startFetch(now: now)
        }
        // A stale set, or none.
        if !candidates.isEmpty {
            guard !isFetching, !isBackingOff(at: now) else { return .verify(candidates) }
            _ = startFetch(now: now)
            return .verifyWhileFetching(candidates)
        }
        if isFetching { return joinFetch() }
        if let lastFailure, isBackingOff(at: now) { return .fail(lastFailure.error) }
        return startFetch(now: now)
    }

    /// The keys ``decide(for:now:hasFetched:)`` gave did not verify `token`, and this verification
    /// has not fetched the set: the issuer may have rotated a key that the token names by no kid,
    /// or under a kid it reused. Fetch again (or join the fetch in flight) unless the throttle or
    /// the backoff holds; then the refusal is transient, as for an unknown key.
    mutating func keysFailed(for token: JSONWebSignature, now: Date) -> Decision {
        guard canFetch else { return .refuse(.invalidSignature) }
        if isFetching { return joinFetch() }
        if isWithin(minimumRefetchInterval, of: lastFetchStarted, at: now) || isBackingOff(at: now) {
            return .refuse(.unknownSigningKey(keyID: token.keyID.map { String($0.prefix(64)) }))
        }
        return startFetch(now: now)
    }

    /// Whether the set held was brought by a fetch that started after `ticket` was taken (the
    /// value of ``fetchesStarted`` when a verification began): a fetch made for that verification.
    func hasFetched(since ticket: Int) -> Bool {
        keySet != nil && keySetFetchNumber > ticket
    }

    /// The fetch in flight brought `keySet`.
    mutating func fetched(_ keySet: JSONWebKeySet, now: Date) {
        self.keySet = keySet
        keySetFetchNumber = fetchesStarted
        fetchedAt = now
        lastFailure = nil
        isFetching = false
    }

    /// The fetch in flight failed with `error`: the set stays as it was.
    mutating func fetchFailed(_ error: RemoteAuthError, now: Date) {
        lastFailure = (now, error)
        isFetching = false
    }

    private func isFresh(at now: Date) -> Bool {
        isWithin(lifetime, of: fetchedAt, at: now)
    }

    private func isBackingOff(at now: Date) -> Bool {
        isWithin(failureBackoff, of: lastFailure?.at, at: now)
    }

    /// Whether `now` is less than `interval` after `date`; never when `now` is before it.
    private func isWithin(_ interval: TimeInterval, of date: Date?, at now: Date) -> Bool {
        guard let date else { return false }
        let elapsed = now.timeIntervalSince(date)
        return elapsed >= 0 && elapsed < interval
    }

    private mutating func joinFetch() -> Decision {
        joins += 1
        return .joinFetch
    }

    private mutating func startFetch(now: Date) -> Decision {
        isFetching = true
        fetchesStarted += 1
        lastFetchStarted = now
        return .startFetch
    }
}
