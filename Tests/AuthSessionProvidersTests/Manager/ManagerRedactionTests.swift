import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// No token in what the manager renders: its errors, its events, their dumps, and its own dump.
@Suite("No token in the manager's renderings")
struct ManagerRedactionTests {

    // the documentation: "No token in any rendering. Error and event descriptions, localizedDescription,
    // dump and the test kit's own types never show a token".
    @Test("dump(provider) shows no live token (SecretRegistration keeps none in a plain field)")
    func dumpOfTheProviderShowsNoToken() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let rig = advRig(store: InMemorySessionStore(), server: server, clock: clock)
        let session = try await rig.provider.signIn(with: advGrant(advAda))
        var dumped = ""
        dump(rig.provider, to: &dumped)
        let showsAccessToken = dumped.contains(session.accessToken)
        let showsRefreshToken = dumped.contains(session.refreshToken ?? "-")
        #expect(!showsAccessToken, "dump(provider) shows the access token")
        #expect(!showsRefreshToken, "dump(provider) shows the refresh token")
        try? rig.provider.signout()
    }

    @Test("no token in errors, events or their dumps")
    func noTokenInErrorsOrEvents() async throws {
        let clock = ManualClock()
        let server = advServer(clock)
        let store = MockSessionStore(session: try await advIssued(server, advAda, clock))
        let rig = advRig(store: store, server: server, clock: clock)
        let session = try #require(rig.provider.session)
        store.failsWrites = true
        let refreshed = try await rig.provider.refresh()
        let secrets = [
            session.accessToken, session.refreshToken ?? "", refreshed.accessToken, refreshed.refreshToken ?? "",
        ]
        var text = ""
        for event in rig.log.events {
            text += "\(event) \(String(reflecting: event))"
            dump(event, to: &text)
            if case .sessionUpdated(let updated) = event {
                text += "\(String(describing: updated))"
                dump(updated, to: &text)
            }
        }
        let errors: [any Error] = [
            ManagedSessionError.storage(.io(operation: "write", path: "p", code: 5)), ManagedSessionError.superseded,
        ]
        for error in errors {
            text += "\(error) \(error.localizedDescription)"
            dump(error, to: &text)
        }
        dump(session, to: &text)
        dump(server, to: &text)
        dump(store, to: &text)
        for secret in secrets where !secret.isEmpty {
            #expect(!text.contains(secret))
        }
    }
}
