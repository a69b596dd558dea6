import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// The cache's decisions without a thread or a fetch: each rule of the verifier's promise, one
/// input at a time.
@Suite struct KeySetCacheMachineTests {

    let start = Date(timeIntervalSince1970: 1_800_000_000)
    // Made once for the suite: the machine decides by the token's key id, and each P-256 key and
    // signature is a scalar multiplication that, in a debug build, held a thread of the test
    // process's cooperative pool for long enough to starve the suites beside it.
    var known: JWTSigner { Self.signers.known }
    var unknown: JWTSigner { Self.signers.unknown }
    private static let signers = (known: JWTSigner.randomES256(), unknown: JWTSigner.randomES256())
    private static let tokens = (
        known: try! JSONWebSignature(compact: signers.known.sign(claims: someClaims())),
        unknown: try! JSONWebSignature(compact: signers.unknown.sign(claims: someClaims()))
    )

    private func token(_ signer: JWTSigner) -> JSONWebSignature {
        signer.keyID == Self.signers.known.keyID ? Self.tokens.known : Self.tokens.unknown
    }

    @Test func fetchesFirstThenJoinsThenUsesTheFreshSet() {
        var machine = KeySetCacheMachine(lifetime: 86_400, minimumRefetchInterval: 60)
        #expect(machine.decide(for: token(known), now: start, hasFetched: false) == .startFetch)
        #expect(machine.decide(for: token(known), now: start, hasFetched: false) == .joinFetch)
        machine.fetched(JSONWebKeySet(keys: [known.publicKey]), now: start)
        #expect(machine.decide(for: token(known), now: start + 86_399, hasFetched: false) == .verify([known.publicKey]))
        // A day old: the held key verifies at once while the set is fetched again.
        #expect(
            machine.decide(for: token(known), now: start + 86_400, hasFetched: false)
                == .verifyWhileFetching([known.publicKey])
        )
        #expect(machine.decide(for: token(known), now: start + 86_400, hasFetched: false) == .verify([known.publicKey]))
        #expect(machine.decide(for: token(unknown), now: start + 86_400, hasFetched: false) == .joinFetch)
    }

    @Test func refetchesForAnUnknownKidOncePerInterval() {
        var machine = KeySetCacheMachine(lifetime: 86_400, minimumRefetchInterval: 60)
        _ = machine.decide(for: token(known), now: start, hasFetched: false)
        machine.fetched(JSONWebKeySet(keys: [known.publicKey]), now: start + 5)
        let missing = IDTokenValidationError.unknownSigningKey(keyID: unknown.keyID)
        #expect(machine.decide(for: token(unknown), now: start + 59, hasFetched: false) == .refuse(missing))
        #expect(machine.decide(for: token(unknown), now: start + 60, hasFetched: false) == .startFetch)
        #expect(machine.decide(for: token(unknown), now: start + 60, hasFetched: false) == .joinFetch)
        machine.fetched(JSONWebKeySet(keys: [known.publicKey]), now: start + 61)
        #expect(machine.decide(for: token(unknown), now: start + 61, hasFetched: true) == .refuse(missing))
        #expect(machine.decide(for: token(unknown), now: start + 119, hasFetched: false) == .refuse(missing))
    }

    @Test func aFailedFetchKeepsTheSetAndIsRepeatedOnlyAfterFiveSeconds() {
        let outage = RemoteAuthError(.network(code: -1009))
        var machine = KeySetCacheMachine(lifetime: 100, minimumRefetchInterval: 60)
        _ = machine.decide(for: token(known), now: start, hasFetched: false)
        machine.fetchFailed(outage, now: start)
        #expect(machine.keySet == nil)
        #expect(machine.decide(for: token(known), now: start + 4.9, hasFetched: false) == .fail(outage))
        #expect(machine.decide(for: token(known), now: start + 5, hasFetched: false) == .startFetch)
        machine.fetched(JSONWebKeySet(keys: [known.publicKey]), now: start + 5)
        // A day later the set is stale and its refetch fails: its keys still serve, at once.
        #expect(
            machine.decide(for: token(known), now: start + 500, hasFetched: false)
                == .verifyWhileFetching([known.publicKey])
        )
        machine.fetchFailed(outage, now: start + 500)
        #expect(machine.decide(for: token(known), now: start + 501, hasFetched: false) == .verify([known.publicKey]))
        #expect(machine.decide(for: token(unknown), now: start + 501, hasFetched: false) == .fail(outage))
        #expect(
            machine.decide(for: token(known), now: start + 505, hasFetched: false)
                == .verifyWhileFetching([known.publicKey])
        )
    }

    @Test func aClockSetBackCountsAsTimePassed() {
        var machine = KeySetCacheMachine(lifetime: 86_400, minimumRefetchInterval: 60)
        _ = machine.decide(for: token(known), now: start, hasFetched: false)
        machine.fetched(JSONWebKeySet(keys: [known.publicKey]), now: start)
        // The clock goes back an hour: the set was fetched "in the future", so it is stale, and
        // the throttle for an unknown kid does not hold.
        #expect(machine.decide(for: token(unknown), now: start - 3_600, hasFetched: false) == .startFetch)
        machine.fetchFailed(RemoteAuthError(.timedOut), now: start)
        #expect(
            machine.decide(for: token(known), now: start - 3_600, hasFetched: false)
                == .verifyWhileFetching([known.publicKey]),
            "a failure 'in the future' is no backoff either"
        )
    }

    @Test func afterItsFetchAVerificationUsesWhatItHasEvenWhenStale() {
        var machine = KeySetCacheMachine(lifetime: 0, minimumRefetchInterval: 0)
        _ = machine.decide(for: token(known), now: start, hasFetched: false)
        machine.fetched(JSONWebKeySet(keys: [known.publicKey]), now: start)
        #expect(machine.decide(for: token(known), now: start + 1, hasFetched: true) == .verify([known.publicKey]))
    }

    @Test func aFixedSetNeverFetches() {
        var machine = KeySetCacheMachine(fixed: JSONWebKeySet(keys: [known.publicKey]))
        #expect(machine.decide(for: token(known), now: .distantFuture, hasFetched: false) == .verify([known.publicKey]))
        #expect(
            machine.decide(for: token(unknown), now: .distantFuture, hasFetched: false)
                == .refuse(.unknownSigningKey(keyID: unknown.keyID))
        )
    }

    @Test func keysThatFailATokenAreNoVerdictUntilTheSetWasFetchedForIt() {
        var machine = KeySetCacheMachine(lifetime: 86_400, minimumRefetchInterval: 60)
        _ = machine.decide(for: token(known), now: start, hasFetched: false)
        machine.fetched(JSONWebKeySet(keys: [known.publicKey]), now: start)
        // Inside the minute since the fetch: refused, transiently, as unknown.
        #expect(
            machine.keysFailed(for: token(known), now: start + 30) == .refuse(.unknownSigningKey(keyID: known.keyID))
        )
        // After it: fetched again (or joined), once.
        #expect(machine.keysFailed(for: token(known), now: start + 60) == .startFetch)
        #expect(machine.keysFailed(for: token(known), now: start + 60) == .joinFetch)
        machine.fetchFailed(RemoteAuthError(.timedOut), now: start + 61)
        #expect(
            machine.keysFailed(for: token(known), now: start + 64) == .refuse(.unknownSigningKey(keyID: known.keyID)),
            "and not within 5 s of a failed fetch"
        )
        var fixed = KeySetCacheMachine(fixed: JSONWebKeySet(keys: [known.publicKey]))
        #expect(
            fixed.keysFailed(for: token(known), now: start) == .refuse(.invalidSignature),
            "a fixed set is the verdict"
        )
    }

    /// A fetch in flight when a verification began may bring the keys from before the rotation its
    /// token comes from: a verification that only joined it takes no verdict from its keys.
    @Test func aFetchInFlightWhenAVerificationBeganIsNoVerdictOnIt() {
        var machine = KeySetCacheMachine(lifetime: 86_400, minimumRefetchInterval: 60)
        _ = machine.decide(for: token(known), now: start, hasFetched: false)
        machine.fetched(JSONWebKeySet(keys: [known.publicKey]), now: start)
        #expect(machine.hasFetched(since: 0) && !machine.hasFetched(since: 1))
        // A day later a token of the held key starts a fetch in the background.
        let day = start + 86_400
        let first = machine.fetchesStarted
        #expect(
            machine.decide(for: token(known), now: day, hasFetched: false) == .verifyWhileFetching([known.publicKey])
        )
        // A verification begins while it is in flight; the held keys fail its token; it joins.
        let ticket = machine.fetchesStarted
        #expect(machine.keysFailed(for: token(known), now: day) == .joinFetch)
        machine.fetched(JSONWebKeySet(keys: [known.publicKey]), now: day + 1)
        #expect(machine.hasFetched(since: first), "the background fetch was made for the first token")
        #expect(!machine.hasFetched(since: ticket), "but not for the one that only joined it")
        // So the joiner fetches again once the throttle allows, and until then is refused, transiently.
        #expect(
            machine.keysFailed(for: token(known), now: day + 59) == .refuse(.unknownSigningKey(keyID: known.keyID))
        )
        #expect(machine.keysFailed(for: token(known), now: day + 60) == .startFetch)
        machine.fetched(JSONWebKeySet(keys: [known.publicKey]), now: day + 61)
        #expect(machine.hasFetched(since: ticket))
    }

    /// A lifetime shorter than the refetch interval would make every token naming an unknown kid
    /// start a fetch (its set always stale): it is raised to the interval.
    @Test func aLifetimeShorterThanTheRefetchIntervalIsRaisedToIt() {
        var machine = KeySetCacheMachine(lifetime: 10, minimumRefetchInterval: 60)
        #expect(machine.lifetime == 60)
        _ = machine.decide(for: token(known), now: start, hasFetched: false)
        machine.fetched(JSONWebKeySet(keys: [known.publicKey]), now: start)
        #expect(
            machine.decide(for: token(unknown), now: start + 11, hasFetched: false)
                == .refuse(.unknownSigningKey(keyID: unknown.keyID))
        )
        #expect(machine.decide(for: token(unknown), now: start + 60, hasFetched: false) == .startFetch)
    }
}
