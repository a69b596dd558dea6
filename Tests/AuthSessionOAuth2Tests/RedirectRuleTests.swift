import Foundation
import Testing

@testable import AuthSessionOAuth2

/// Which redirects a signed request may follow with its token: within its origin only.
@Suite struct RedirectRuleTests {

    private func mayFollow(_ original: String, _ target: String) -> Bool {
        OriginBoundLoader.mayFollowRedirect(from: URL(string: original), to: URL(string: target))
    }

    @Test("within the origin: another path, the default port spelled or not, any letter case")
    func sameOriginIsFollowed() {
        #expect(mayFollow("https://api.example.com/v1/me", "https://api.example.com/v2/me"))
        #expect(mayFollow("https://api.example.com/v1/me", "https://api.example.com:443/v2/me"))
        #expect(mayFollow("https://API.example.com:443/v1/me", "HTTPS://api.EXAMPLE.com/v2/me"))
        #expect(mayFollow("http://127.0.0.1:8080/a", "http://127.0.0.1:8080/b"))
    }

    @Test("https to http on the same host: a downgrade, never followed with the token")
    func downgradeIsNotFollowed() {
        #expect(!mayFollow("https://api.example.com/v1/me", "http://api.example.com/v1/me"))
        #expect(!mayFollow("https://api.example.com:8443/v1/me", "http://api.example.com:8443/v1/me"))
    }

    @Test("another host, another port, another scheme or no URL: not followed")
    func otherOriginsAreNotFollowed() {
        #expect(!mayFollow("https://api.example.com/me", "https://collector.example.net/me"))
        #expect(!mayFollow("https://api.example.com/me", "https://api.example.com.evil.test/me"))
        #expect(!mayFollow("https://api.example.com/me", "https://api.example.com:8443/me"))
        #expect(!mayFollow("http://127.0.0.1:8080/a", "http://localhost:8080/a"))
        #expect(!mayFollow("https://api.example.com/me", "ftp://api.example.com/me"))
        #expect(!OriginBoundLoader.mayFollowRedirect(from: URL(string: "https://api.example.com/me"), to: nil))
    }
}
