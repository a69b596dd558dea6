import AuthSessionInterface
import Foundation
import Testing

@testable import AuthSessionProviders

/// A session whose tokens are easy to look for in any rendering.
func sampleSession(counter: Int = 1, expiresAt: TimeInterval = 1_800_003_600) -> ManagedSession {
    ManagedSession(
        accessToken: "secret-access-\(counter)",
        refreshToken: "secret-refresh-\(counter)",
        idToken: "secret-id-\(counter)",
        scope: "openid profile",
        expiresAt: expiresAt,
        issuedAt: 1_800_000_000,
        user: ManagedUser(
            identifier: "user-\(counter)",
            name: "Ada",
            email: "ada@example.com",
            profile: ["n": "\(counter)"]
        )
    )
}

@Suite("ManagedSession and its stored format")
struct ManagedSessionTests {

    @Test("description, debugDescription and dump never show a token")
    func renderingsHideTokens() {
        let session = sampleSession()
        var dumped = ""
        dump(session, to: &dumped)
        for text in [session.description, session.debugDescription, String(describing: session), dumped] {
            #expect(!text.contains("secret-"), "\(text)")
            #expect(text.contains("user-1"))
        }
    }

    @Test("a session round-trips through the current format")
    func roundTrip() {
        let session = sampleSession()
        guard case .session(let decoded) = SessionFormat.decode(SessionFormat.encode(session)) else {
            Issue.record("did not decode")
            return
        }
        #expect(decoded == session)
    }

    @Test("the version 1 fixture loads in this version, field for field")
    func versionOneFixtureLoads() throws {
        let url = try #require(
            Bundle.module.url(forResource: "session-format-v1", withExtension: "json", subdirectory: "Fixtures")
        )
        let data = try Data(contentsOf: url)
        guard case .session(let session) = SessionFormat.decode(data) else {
            Issue.record("the version 1 fixture does not load")
            return
        }
        #expect(session.accessToken == "fixture-access-token-v1")
        #expect(session.refreshToken == "fixture-refresh-token-v1")
        #expect(session.idToken == "fixture-id-token-v1")
        #expect(session.tokenType == "Bearer")
        #expect(session.scope == "openid profile email")
        #expect(session.expiresAt == 1_800_003_600 && session.issuedAt == 1_800_000_000)
        #expect(
            session.user
                == ManagedUser(
                    identifier: "user-1815",
                    name: "Ada Lovelace",
                    email: "ada@example.com",
                    profile: ["locale": "en-GB"]
                )
        )
        #expect(session.isBiometricAuthenticationEnabled)
    }

    @Test(
        "bytes that are not a session are corrupt, with a reason that names no value",
        arguments: [
            ("", "the file is empty"),
            ("{", "not JSON"),
            ("[1, 2]", "has the wrong type"),
            (#"{"format":"AuthSessionKit.session"}"#, "missing field version"),
            (#"{"format":"something else","version":1}"#, "not a session file"),
            (
                #"{"format":"AuthSessionKit.session","version":1,"session":{"access_token":"secret-x"}}"#,
                "missing field"
            ),
            (#"{"format":"AuthSessionKit.session","version":1,"session":{"access_token":5}}"#, "wrong type"),
            (#"{"format":"AuthSessionKit.session","version":0}"#, "does not exist"),
        ]
    )
    func corruptReasons(text: String, reason: String) {
        guard case .corrupt(let found) = SessionFormat.decode(Data(text.utf8)) else {
            Issue.record("\(text) decoded")
            return
        }
        #expect(found.contains(reason), "\(found)")
        #expect(!found.contains("secret"))
    }

    @Test("a newer format version is reported as such, not as corrupt")
    func newerVersion() {
        guard
            case .unsupportedVersion(7) = SessionFormat.decode(
                Data(#"{"format":"AuthSessionKit.session","version":7}"#.utf8)
            )
        else {
            Issue.record("not reported as unsupported")
            return
        }
    }

    @Test("the user's identifier is the stable subject; its description leaves the profile out")
    func userIdentity() {
        let user = ManagedUser(identifier: "sub-1", name: "Ada", email: "ada@example.com")
        #expect(user.description == "ManagedUser(sub-1)")
        #expect(sampleSession().user.identifier == "user-1")
    }
}
