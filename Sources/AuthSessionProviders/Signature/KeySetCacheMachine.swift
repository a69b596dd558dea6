import Foundation

/// The decisions of a ``JSONWebKeySetVerifier``'s cache: use the keys it holds, fetch them, join
/// the fetch in flight, or refuse. A value type without locks, I/O or clock reads; the verifier
/// holds it behind a lock and performs what it decides.
///
/// The rules:
/// - A set fetched less than `lifetime` ago is fresh: a token whose key it holds is verified
///   with it, without a fetch.
/// - No set yet, or a stale one: fetch (or join the fetch in flight).
/// - A fresh set without the token's key: fetch again, but at most once per
///   `minimumRefetchInterval` (measured from the start of the last fetch of any kind), so tokens
///   naming random keys cannot make the verifier hammer the issuer; inside that interval the key
///   is refused as unknown (a transient refusal: it may appear).
/// - One verification waits for at most one fetch; after it, it decides with what it has.
/// - A fetch that fails leaves the set as it was: a stale set's keys still serve a token they
///   can verify, so an outage at the key endpoint does not stop sign-ins.
///
/// Not thread-safe: use from one task at a time (the verifier's lock does this).
struct KeySetCacheMachine: Sendable {

    /// What a verification does next.
    enum Decision: Equatable {
        /// Verify with these keys: the candidates for the token.
        case verify([JSONWebKey])
        /// Start a fetch (the machine now counts it in flight) and wait for it.
        case startFetch
        /// Wait for the fetch in flight.
        case joinFetch
        /// Refuse the token.
        case refuse(IDTokenValidationError)
    }

    /// How long a fetched set is used before it is fetched again.
    let lifetime: TimeInterval

    /// The shortest time between two fetches made for a key the set does not hold.
    let minimumRefetchInterval: TimeInterval

    /// Whether the keys can be fetched at all (`false` for a fixed set).
    let canFetch: Bool

    private(set) var keySet: JSONWebKeySet?
    private(set) var fetchedAt: Date?
    private(set) var lastFetchStarted: Date?
    private(set) var isFetching = false

    /// A cache that fetches its keys.
    init(lifetime: TimeInterval, minimumRefetchInterval: TimeInterval) {
        self.lifetime = lifetime
        self.minimumRefetchInterval = minimumRefetchInterval
        self.canFetch = true
    }

    /// A cache of a fixed set, which never fetches and never goes stale.
    init(fixed keySet: JSONWebKeySet) {
        self.lifetime = .infinity
        self.minimumRefetchInterval = .infinity
        self.canFetch = false
        self.keySet = keySet
        self.fetchedAt = .distantPast
    }

    /// What to do for `token` at `now`; `hasFetched` when this verification already waited for a
    /// fetch that succeeded.
    mutating func decide(for token: JSONWebSignature, now: Date, hasFetched: Bool) -> Decision {
        if let keySet, isFresh(at: now) || hasFetched || !canFetch {
            let candidates = keySet.candidates(for: token)
            if !candidates.isEmpty { return .verify(candidates) }
            guard canFetch, !hasFetched else { return .refuse(keySet.missingKeyError(for: token)) }
            if isFetching { return .joinFetch }
            if let lastFetchStarted, now.timeIntervalSince(lastFetchStarted) < minimumRefetchInterval {
                return .refuse(keySet.missingKeyError(for: token))
            }
            return startFetch(now: now)
        }
        // No set yet, or a stale one: the keys must be had first.
        if isFetching { return .joinFetch }
        return startFetch(now: now)
    }

    /// The fetch in flight brought `keySet`.
    mutating func fetched(_ keySet: JSONWebKeySet, now: Date) {
        self.keySet = keySet
        fetchedAt = now
        isFetching = false
    }

    /// The fetch in flight failed: the set stays as it was.
    mutating func fetchFailed() {
        isFetching = false
    }

    /// After a failed fetch: the candidates of the set held, however old.
    func fallbackCandidates(for token: JSONWebSignature) -> [JSONWebKey] {
        keySet?.candidates(for: token) ?? []
    }

    private func isFresh(at now: Date) -> Bool {
        guard let fetchedAt else { return false }
        return now.timeIntervalSince(fetchedAt) < lifetime
    }

    private mutating func startFetch(now: Date) -> Decision {
        isFetching = true
        lastFetchStarted = now
        return .startFetch
    }
}
