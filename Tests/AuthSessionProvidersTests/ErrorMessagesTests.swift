import AuthSessionInterface
import AuthSessionMocks
import Foundation
import Testing

@testable import AuthSessionProviders

/// Every text an error can be rendered as.
func renderings(of error: any Error) -> [String] {
    var texts = ["\(error)", String(reflecting: error), error.localizedDescription]
    if let localized = error as? any LocalizedError {
        texts += [localized.errorDescription, localized.recoverySuggestion, localized.failureReason].compactMap { $0 }
    }
    var dumped = ""
    dump(error, to: &dumped)
    texts.append(dumped)
    return texts
}

@Suite("Errors for people: a message and a suggestion a person can read; the developer's detail in description")
struct ErrorMessagesTests {

    @Test("a wrong password reads \"Wrong username or password.\", with the detail kept for the developer")
    func wrongPassword() async throws {
        let harness = ManagerHarness()
        await #expect {
            try await harness.provider.signIn(with: .password(username: "alice", password: "wrong horse"))
        } throws: { error in
            guard let error = error as? ManagedSessionError else { return false }
            return error.problem == .wrongCredentials && error.localizedDescription == "Wrong username or password."
                && error.recoverySuggestion == "Check your username and password and try again."
                && "\(error)".contains("invalid_grant")
        }
    }

    @Test("a refused refresh token reads \"Your session has ended, please sign in again.\"")
    func refusedRefresh() async throws {
        let harness = ManagerHarness()
        try await harness.signIn()
        harness.server.revokeAllSessions(of: alice.identifier)
        await #expect {
            try await harness.provider.refresh()
        } throws: { error in
            (error as? ManagedSessionError)?.localizedDescription == "Your session has ended, please sign in again."
        }
    }

    @Test(
        "each failure reads as a person would put it",
        arguments: [
            (RemoteAuthError(.network(code: -1009)), AuthProblem.offline, "You are offline."),
            (RemoteAuthError(.network(code: -1004)), .serverNotResponding, "The server is not responding, try again."),
            (RemoteAuthError(.timedOut), .serverNotResponding, "The server is not responding, try again."),
            (RemoteAuthError(.httpStatus(503)), .serverNotResponding, "The server is not responding, try again."),
            (RemoteAuthError(.httpStatus(404)), .appMisconfigured, "This app cannot sign you in right now."),
            (
                RemoteAuthError(.server(code: "invalid_grant"), statusCode: 400).presenting(grantType: "password"),
                .wrongCredentials, "Wrong username or password."
            ),
            (
                RemoteAuthError(.server(code: "invalid_grant"), statusCode: 400).presenting(grantType: "refresh_token"),
                .sessionEnded, "Your session has ended, please sign in again."
            ),
            (
                RemoteAuthError(.server(code: "invalid_grant"), statusCode: 400)
                    .presenting(grantType: "authorization_code"), .signInFailed, "The sign-in was not accepted."
            ),
            (
                RemoteAuthError(.server(code: "access_denied")), .signInDeclined,
                "The sign-in was cancelled or declined."
            ),
            (RemoteAuthError(.server(code: "expired_token")), .signInExpired, "The sign-in code has expired."),
            (
                RemoteAuthError(.server(code: "invalid_client"), statusCode: 401), .appMisconfigured,
                "This app cannot sign you in right now."
            ),
            (
                RemoteAuthError(.invalidResponse("not JSON")), .serverError,
                "The server sent an answer this app cannot read."
            ),
            (
                RemoteAuthError(.invalidIDToken(.expired(at: Date()))), .deviceClockWrong,
                "Your device's date and time seem to be wrong."
            ),
        ]
    )
    func remoteMessages(error: RemoteAuthError, problem: AuthProblem, message: String) {
        #expect(error.problem == problem)
        #expect(error.errorDescription == message)
        #expect(error.localizedDescription == message, "also through NSError bridging (Linux included)")
        #expect(ManagedSessionError.remote(error).localizedDescription == message)
        #expect(error.recoverySuggestion == problem.recoverySuggestion)
        #expect(!(error.recoverySuggestion ?? "").isEmpty)
    }

    @Test(
        "every case of the manager's and the store's errors has a message, a suggestion, and the detail in description"
    )
    func everyCase() {
        let store: [SessionStoreError] = [
            .unavailable(reason: "locked"), .corrupt(reason: "not JSON", setAsideAt: "/tmp/x.corrupt"),
            .unsupportedFormatVersion(found: 9, newestSupported: 2), .insecurePermissions(path: "/tmp/s", mode: 0o644),
            .foreignOwner(path: "/tmp/s", owner: 501), .symbolicLink(path: "/tmp/s"), .notARegularFile(path: "/tmp/s"),
            .io(operation: "rename", path: "/tmp/s", code: 5), .keychain(operation: "SecItemAdd", status: -25299),
            .missingEntitlement(operation: "SecItemAdd"),
        ]
        let managed: [ManagedSessionError] =
            [
                .notSignedIn, .refreshUnavailable, .remote(RemoteAuthError(.timedOut)), .credentialRevoked(.revoked),
                .signedOutElsewhere, .superseded, .cancelled,
            ] + store.map(ManagedSessionError.storage)
        for error in managed {
            let message = error.errorDescription ?? ""
            #expect(!message.isEmpty && message == error.problem.message)
            #expect(error.localizedDescription == message, "Linux's NSError bridging gives the person's message")
            #expect(!(error.recoverySuggestion ?? "").isEmpty)
            #expect(error.description != message, "the developer's detail is not the person's message")
        }
        for error in store {
            #expect(!"\(error)".contains(error.errorDescription ?? "-"))
            #expect(!(error.errorDescription ?? "").contains("/tmp"), "no path in a person's message")
        }
        #expect("\(SessionStoreError.insecurePermissions(path: "/tmp/s", mode: 0o644))".contains("644"))
        #expect(SessionStoreError.unavailable(reason: "locked").problem == .storageUnavailable)
    }

    @Test("an app's localizer replaces every message and suggestion")
    func localizer() {
        // Only one problem is changed, which no other test reads: tests run in parallel.
        defer { AuthProblem.localizer = nil }
        AuthProblem.localizer = { problem, part, english in
            problem == .approvalPending ? "[\(problem.rawValue).\(part.rawValue)] \(english)" : english
        }
        let error = ManagedSessionError.remote(RemoteAuthError(.server(code: "authorization_pending"), statusCode: 400))
        #expect(error.localizedDescription == "[approvalPending.message] Waiting for you to approve the sign-in.")
        #expect(
            error.recoverySuggestion
                == "[approvalPending.recoverySuggestion] Approve the sign-in on your other device."
        )
        AuthProblem.localizer = nil
        #expect(error.localizedDescription == "Waiting for you to approve the sign-in.")
    }

    @Test("no rendering of any error carries a secret a server or a store put in any of its fields")
    func noSecretInAnyRendering() {
        let token = "tok_" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        let jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlc2lnbmF0dXJl"
        let password = "hunter2-" + UUID().uuidString.prefix(6)
        let registrations = [token, jwt, password].map(SecretRedactor.register)
        defer {
            for registration in registrations { registration.cancel() }
        }
        let secrets = [token, jwt, password]
        let carrying = "refresh token \(token) (\(jwt)) for password \(password)"
        var remote: [RemoteAuthError] = [
            RemoteAuthError(.server(code: "invalid_grant"), statusCode: 400, serverDescription: carrying),
            RemoteAuthError(.server(code: carrying), statusCode: 400),
            RemoteAuthError(.invalidResponse(carrying), statusCode: 200),
            RemoteAuthError(.unsupportedTokenType(carrying)),
            RemoteAuthError(.unsupported(carrying)),
            RemoteAuthError(.httpStatus(500), serverDescription: carrying, retryAfter: .seconds(3)),
        ]
        let idToken: [IDTokenValidationError] = [
            .malformed(carrying), .missingClaim(carrying), .issuerMismatch(expected: carrying, actual: carrying),
            .audienceMismatch(expected: carrying, actual: [carrying]),
            .authorizedPartyMismatch(expected: carrying, actual: carrying),
            .subjectMismatch(expected: carrying, actual: carrying),
        ]
        remote += idToken.map { RemoteAuthError(.invalidIDToken($0)) }
        remote += remote.map { $0.presenting(grantType: "password") }
        let store: [SessionStoreError] = [
            .unavailable(reason: carrying), .corrupt(reason: carrying, setAsideAt: carrying),
            .insecurePermissions(path: carrying, mode: 0o644), .foreignOwner(path: carrying, owner: 1),
            .symbolicLink(path: carrying), .notARegularFile(path: carrying),
            .io(operation: carrying, path: carrying, code: 2), .keychain(operation: carrying, status: -25300),
            .missingEntitlement(operation: carrying),
        ]
        var errors: [any Error] = remote + idToken + store
        errors += remote.map(ManagedSessionError.remote) + store.map(ManagedSessionError.storage)
        errors += [SignOutCause.requested(reason: SignOutReason(ManagedSessionError.remote(remote[0])))].compactMap(
            \.error
        )
        for error in errors {
            for text in renderings(of: error) {
                for secret in secrets {
                    #expect(!text.contains(secret), "\(type(of: error)) renders a secret: \(text)")
                }
            }
        }
        let cause = SignOutCause.endedByServer(remote[0])
        var dumped = ""
        dump(ManagedSessionEvent.signedOut(cause), to: &dumped)
        for text in ["\(cause)", String(reflecting: cause), dumped] {
            for secret in secrets { #expect(!text.contains(secret)) }
        }
    }
}

@Suite("endsSession on every typed error")
struct EndsSessionTests {

    @Test(
        "a typed RemoteAuthError, as a typed-throws call throws it, says whether the session ended; so does any Error"
    )
    func typedAndErased() {
        let refused = RemoteAuthError(.server(code: "invalid_grant"), statusCode: 400)
        let offline = RemoteAuthError(.network(code: -1009))
        #expect(refused.endsSession)
        #expect(!offline.endsSession)
        let erased: [any Error] = [refused, offline, ManagedSessionError.signedOutElsewhere, CancellationError()]
        #expect(erased.map(\.endsSession) == [true, false, true, false])
        #expect(!SessionStoreError.unavailable(reason: "locked").endsSession)
        #expect(IDTokenValidationError.subjectMismatch(expected: "a", actual: "b").endsSession)
        #expect(!IDTokenValidationError.unknownSigningKey(keyID: nil).endsSession)
    }
}

@Suite("The developer is told which file")
struct StorePathInDescriptionTests {

    @Test("a store error's description names the file (the home folder as ~), never a registered secret")
    func pathIsShown() {
        let folder = "/var/lib/app/3f9c2a7b4e1d8c6f0a5b2e9d7c4f1a8b"
        let refused = SessionStoreError.insecurePermissions(path: "\(folder)/session.json", mode: 0o100644)
        #expect(refused.description.contains("\(folder)/session.json"), "\(refused)")
        #expect(refused.description.contains("644"))
        #expect(refused.localizedDescription.contains("/") == false, "the person's message names no path")

        let home = NSHomeDirectory()
        let inHome = SessionStoreError.io(operation: "open", path: "\(home)/.config/app/session.json", code: EACCES)
        #expect(inHome.description.contains("~/.config/app/session.json"), "\(inHome)")
        #expect(!inHome.description.contains(home + "/"))

        let secret = "hunter2-folder-secret"
        let registration = SecretRedactor.register(secret)
        defer { registration.cancel() }
        let leaky = SessionStoreError.symbolicLink(path: "/tmp/\(secret)/session.json")
        #expect(!leaky.description.contains(secret))
        #expect(leaky.description.contains("/tmp/"))
    }
}
