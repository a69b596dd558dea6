import AuthSessionInterface
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

/// The OAuth 2.0 client's errors, as a person reads them.
@Suite("Errors for people, from the OAuth 2.0 client: a wrong password, a declined or broken redirect")
struct ErrorMessageTests {

    @Test("a password sign-in the server refuses reads \"Wrong username or password.\", never the server's text")
    func wrongPasswordThroughTheManager() async throws {
        let password = "hunter2-" + UUID().uuidString
        let transport = StubTransport(
            Fixture.json(400, #"{"error":"invalid_grant","error_description":"bad password \#(password)"}"#)
        )
        let clock = ManualClock()
        let oauth = OAuth2Service(configuration: Fixture.configuration, transport: transport, clock: clock)
        let provider = ManagedSessionProvider(store: InMemorySessionStore(), remote: oauth, clock: clock)
        await #expect {
            try await provider.signIn(with: .password(username: "alice", password: password))
        } throws: { error in
            guard let error = error as? ManagedSessionError else { return false }
            let texts = [
                error.localizedDescription, error.recoverySuggestion ?? "", "\(error)", String(reflecting: error),
            ]
            return error.localizedDescription == "Wrong username or password."
                && "\(error)".contains("invalid_grant") && !texts.contains { $0.contains(password) }
        }
    }

    @Test("a redirect: declined, or not answering the request; the server's text never in a message")
    func redirectErrors() {
        let token = "tok_" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        let registration = SecretRedactor.register(token)
        defer { registration.cancel() }
        let declined = AuthorizationRedirectError.server(code: "access_denied", description: "user said no \(token)")
        #expect(declined.localizedDescription == "The sign-in was cancelled or declined.")
        #expect(declined.problem == .signInDeclined)
        #expect(AuthorizationRedirectError.stateMismatch.localizedDescription == "The sign-in was not accepted.")
        #expect(
            AuthorizationRedirectError.server(code: "temporarily_unavailable", description: nil).problem
                == .serverNotResponding
        )
        var dumped = ""
        dump(declined, to: &dumped)
        let texts = [declined.localizedDescription, declined.recoverySuggestion ?? "", dumped, "\(declined)"]
        for text in texts + [String(reflecting: declined)] {
            #expect(!text.contains(token), "a secret in \(text)")
        }
    }
}
