import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// The cache's decisions without a thread or a fetch: each rule of the verifier's promise, one
/// input at a time.
@Suite struct KeySetCacheMachineTests {

    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let known = JWTSigner.randomES256()
    let unknown = JWTSigner.randomES256()

    private func token(_ signer: JWTSigner) -> JSONWebSignature {
        try! JSONWebSignature(compact: signer.sign(claims: someClaims()))
    }

    @Test func fetchesFirstThenJoinsThenUsesTheFreshSet() {
        var machine = KeySetCacheMachine(lifetime: 86_400, minimumRefetchInterval: 60)
        #expect(machine.decide(for: token(known), now: start, hasFetched: false) == .startFetch)
        #expect(machine.decide(for: token(known), now: start, hasFetched: false) == .joinFetch)
        machine.fetched(JSONWebKeySet(keys: [known.publicKey]), now: start)
        #expect(machine.decide(for: token(known), now: start + 86_399, hasFetched: false) == .verify([known.publicKey]))
        #expect(machine.decide(for: token(known), now: start + 86_400, hasFetched: false) == .startFetch)
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

    @Test func aFailedFetchKeepsTheSetAndIsNotThrottled() {
        var machine = KeySetCacheMachine(lifetime: 100, minimumRefetchInterval: 60)
        _ = machine.decide(for: token(known), now: start, hasFetched: false)
        machine.fetchFailed()
        #expect(machine.keySet == nil)
        #expect(machine.decide(for: token(known), now: start + 1, hasFetched: false) == .startFetch)
        machine.fetched(JSONWebKeySet(keys: [known.publicKey]), now: start + 1)
        #expect(machine.decide(for: token(known), now: start + 500, hasFetched: false) == .startFetch)
        machine.fetchFailed()
        #expect(machine.fallbackCandidates(for: token(known)) == [known.publicKey])
        #expect(machine.fallbackCandidates(for: token(unknown)).isEmpty)
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
}
