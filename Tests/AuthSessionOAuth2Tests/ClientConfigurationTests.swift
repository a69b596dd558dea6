import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

@testable import AuthSessionOAuth2

/// What a configuration accepts: hostile values are clamped to sane ones.
@Suite struct ClientConfigurationTests {

    @Test func hostileTimeoutsAreClamped() {
        let endpoints = OAuth2Endpoints(token: URL(string: "https://a.example/token")!)
        for (timeout, expected) in [
            (TimeInterval.infinity, 30.0), (.nan, 30), (-1, 30), (0, 30), (1e20, 86_400), (12, 12),
        ] {
            let configuration = OAuth2Configuration(
                issuer: nil,
                endpoints: endpoints,
                client: OAuth2Client(id: "c"),
                requestTimeout: timeout
            )
            #expect(configuration.requestTimeout == expected, "\(timeout)")
        }
        #expect(URLSessionTransport.clampedTimeout(.infinity) == 60)
    }
}
