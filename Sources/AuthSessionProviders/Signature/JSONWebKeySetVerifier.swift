import AuthSession
import Foundation

/// Verifies ID-token signatures (`RS256`, `ES256`) with an issuer's JWK Set: a fixed one, or one
/// fetched from the issuer's `jwks_uri` and kept in memory.
///
/// ```swift
/// let verifier = JSONWebKeySetVerifier(clock: SystemClock()) { () throws(RemoteAuthError) in
///     try await myKeySetDownload()  // AuthSessionOAuth2 has JSONWebKeySetVerifier(jwksURI:)
/// }
/// try await verifier.verifySignature(of: JSONWebSignature(compact: idToken))
/// ```
///
/// - The key is looked up by the token's `kid` (every key of the token's algorithm when it
///   names none). The algorithm is the key's: a token claiming another is refused, and only
///   `RS256` and `ES256` are verified (never `none`, never `HS256` with a public key as secret).
/// - A fetched set is used for ``cacheLifetime`` (24 hours by default), then fetched again; a
///   token whose key the old set holds is verified at once meanwhile.
/// - A `kid` the set lacks makes it fetch again (the issuer rotated its keys), at most once per
///   ``minimumRefetchInterval`` (a minute by default); inside that interval the key is refused as
///   unknown, a transient refusal. A verification waits for two fetches at most: one in flight
///   when it began (which may bring the keys from before a rotation, so it is no verdict), and
///   one of its own.
/// - Concurrent verifications share one fetch. No lock is held while fetching.
/// - A failed fetch keeps the set held: its keys still serve tokens they verify. It is not
///   repeated for 5 seconds: meanwhile a verification that needs it fails at once with its error.
/// - A clock set back counts as time passed (the set is fetched again), never as a reason to wait.
///
/// All operations are thread-safe.
public final class JSONWebKeySetVerifier: IDTokenSignatureVerifier, CustomStringConvertible {

    /// How long a fetched key set is used before it is fetched again; `.infinity` for a fixed set.
    public var cacheLifetime: TimeInterval { state.withLock { $0.machine.lifetime } }

    /// The shortest time between two fetches made for a `kid` the set does not hold.
    public var minimumRefetchInterval: TimeInterval { state.withLock { $0.machine.minimumRefetchInterval } }

    /// The key set held now, if one was fetched (or given).
    public var keySet: JSONWebKeySet? { state.withLock { $0.machine.keySet } }

    /// How many times a verification waited for a fetch already in flight (for tests).
    package var fetchJoins: Int { state.withLock { $0.machine.joins } }

    private let fetchKeySet: (@Sendable () async throws(RemoteAuthError) -> JSONWebKeySet)?
    private let clock: any AuthSessionClock
    private let state: ConcurrencySafeContainer<State>

    private struct State {
        var machine: KeySetCacheMachine
        var fetch: Task<Result<JSONWebKeySet, RemoteAuthError>, Never>?
    }

    /// A verifier with a fixed key set, which it never fetches.
    ///
    /// - Parameter keySet: The issuer's keys.
    public init(keySet: JSONWebKeySet) {
        fetchKeySet = nil
        clock = SystemClock()
        state = ConcurrencySafeContainer(State(machine: KeySetCacheMachine(fixed: keySet)))
    }

    /// A verifier that fetches its key set with `fetchKeySet` when it needs it.
    ///
    /// - Parameters:
    ///   - clock: The clock the cache's ages run on.
    ///   - cacheLifetime: How long a fetched set is used: 24 hours by default, and never less than
    ///     `minimumRefetchInterval`.
    ///   - minimumRefetchInterval: The shortest time between two fetches for an unknown `kid`:
    ///     60 seconds by default.
    ///   - fetchKeySet: Downloads the issuer's key set; a transient error for a network failure.
    public init(
        clock: any AuthSessionClock = SystemClock(),
        cacheLifetime: TimeInterval = 86_400,
        minimumRefetchInterval: TimeInterval = 60,
        fetchKeySet: @escaping @Sendable () async throws(RemoteAuthError) -> JSONWebKeySet
    ) {
        self.fetchKeySet = fetchKeySet
        self.clock = clock
        let machine = KeySetCacheMachine(
            lifetime: cacheLifetime.isNaN ? 86_400 : max(0, cacheLifetime),
            minimumRefetchInterval: minimumRefetchInterval.isNaN ? 60 : max(0, minimumRefetchInterval)
        )
        state = ConcurrencySafeContainer(State(machine: machine))
    }

    /// Verifies `token`'s signature with the issuer's key for its `kid`.
    ///
    /// - Parameter token: The token.
    /// - Throws: ``RemoteAuthError``: ``RemoteAuthError/Reason/invalidIDToken(_:)`` when the
    ///   signature is not the issuer's or its key is unknown (see ``IDTokenSignatureVerifier``);
    ///   the fetch's error when the keys cannot be fetched and none held verify the token.
    public func verifySignature(of token: JSONWebSignature) async throws(RemoteAuthError) {
        guard JSONWebKey.supportedAlgorithms.contains(token.algorithm) else {
            throw Self.refusal(.unsupportedAlgorithm(String(token.algorithm.prefix(32))))
        }
        // Only a fetch started after this point was made for this token (a fetch in flight may
        // bring the keys from before the rotation the token comes from).
        let ticket = state.withLock { $0.machine.fetchesStarted }
        while true {
            let (decision, fetch) = decide { machine, now in
                let hasFetched = machine.hasFetched(since: ticket)
                return machine.decide(for: token, now: now, hasFetched: hasFetched)
            }
            switch decision {
            case .verify(let keys), .verifyWhileFetching(let keys):
                if keys.contains(where: { $0.verifies(token) }) { return }
                // The keys held do not verify it. Once the set was fetched for this verification,
                // that is the verdict; before, the issuer may have rotated a key the token names
                // by no kid, or under a kid it reused: fetch once more, if the set may be fetched.
                let (next, refetch) = decide { machine, now in
                    machine.hasFetched(since: ticket)
                        ? .refuse(.invalidSignature) : machine.keysFailed(for: token, now: now)
                }
                switch next {
                case .startFetch, .joinFetch:
                    try await Self.outcome(of: refetch)
                case .refuse(let reason):
                    throw Self.refusal(reason)
                case .fail(let error):
                    throw error
                case .verify, .verifyWhileFetching:
                    throw Self.refusal(.invalidSignature)
                }
            case .refuse(let reason):
                throw Self.refusal(reason)
            case .fail(let error):
                throw error
            case .startFetch, .joinFetch:
                try await Self.outcome(of: fetch)
            }
        }
    }

    /// Runs one of the machine's inputs under the lock, with the time read there too (so times
    /// reach the machine in the order of its decisions), and starts the fetch it asks for.
    private func decide(
        _ input: (inout KeySetCacheMachine, Date) -> KeySetCacheMachine.Decision
    ) -> (KeySetCacheMachine.Decision, Task<Result<JSONWebKeySet, RemoteAuthError>, Never>?) {
        state.withLock { state in
            let decision = input(&state.machine, clock.now)
            switch decision {
            case .startFetch, .verifyWhileFetching: state.fetch = makeFetch()
            case .verify, .joinFetch, .refuse, .fail: break
            }
            return (decision, state.fetch)
        }
    }

    /// Waits for `fetch`; throws its failure.
    private static func outcome(
        of fetch: Task<Result<JSONWebKeySet, RemoteAuthError>, Never>?
    ) async throws(RemoteAuthError) {
        guard let fetch else { throw RemoteAuthError(.unsupported("no key set to fetch")) }
        if case .failure(let error) = await fetch.value {
            throw error
        }
    }

    /// The key set's state: fixed, or its lifetime and how many keys it holds.
    public var description: String {
        let (machine, isFetching) = state.withLock { ($0.machine, $0.fetch != nil) }
        let held = machine.keySet.map { "\($0.keys.count) keys" } ?? "no keys yet"
        guard machine.canFetch else { return "JSONWebKeySetVerifier(fixed, \(held))" }
        return
            "JSONWebKeySetVerifier(fetched, \(held), lifetime \(machine.lifetime) s\(isFetching ? ", fetching" : ""))"
    }

    /// A task that fetches the set and records the outcome before anyone waiting on it resumes.
    /// Detached: it belongs to no caller, so one caller's cancellation never cancels it.
    private func makeFetch() -> Task<Result<JSONWebKeySet, RemoteAuthError>, Never> {
        let fetchKeySet = fetchKeySet
        return Task.detached { [state, clock] in
            var result: Result<JSONWebKeySet, RemoteAuthError>
            if let fetchKeySet {
                do throws(RemoteAuthError) {
                    result = .success(try await fetchKeySet())
                } catch  where error.reason == .cancelled {
                    // Nobody waiting cancelled anything (the fetch is no caller's): a transport
                    // that cancelled the request (a pinning delegate, say) failed it.
                    result = .failure(RemoteAuthError(.invalidResponse("key set: the request was cancelled")))
                } catch {
                    result = .failure(error)
                }
            } else {
                result = .failure(RemoteAuthError(.unsupported("a fixed key set is never fetched")))
            }
            state.withLock { state in
                let now = clock.now
                switch result {
                case .success(let keySet): state.machine.fetched(keySet, now: now)
                case .failure(let error): state.machine.fetchFailed(error, now: now)
                }
                state.fetch = nil
            }
            return result
        }
    }

    private static func refusal(_ reason: IDTokenValidationError) -> RemoteAuthError {
        RemoteAuthError(.invalidIDToken(reason))
    }
}
