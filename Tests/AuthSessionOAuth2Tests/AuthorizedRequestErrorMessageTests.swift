import AuthSessionInterface
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The request client's errors, as a person reads them: each through its ``AuthProblem``, so an
/// app's localizer translates them too.
@Suite struct AuthorizedRequestErrorMessageTests {

    @Test(
        "every case has the message and the suggestion of its problem",
        arguments: [
            AuthorizedRequestError.insecureRequest, .cancelled, .session(.notSignedIn), .session(.superseded),
            .session(.remote(RemoteAuthError(.server(code: "invalid_grant")))),
            .network(URLError(.notConnectedToInternet)), .network(URLError(.timedOut)),
            .network(URLError(.badServerResponse)), .unsupportedTokenType("DPoP"),
        ]
    )
    func messageAndSuggestionComeFromTheProblem(error: AuthorizedRequestError) {
        #expect(error.errorDescription == error.problem.message)
        #expect(error.recoverySuggestion == error.problem.recoverySuggestion)
        #expect(error.localizedDescription == error.errorDescription)
        #expect(error.recoverySuggestion != nil)
    }

    @Test("a session error keeps the manager's problem")
    func sessionDelegates() {
        let errors: [ManagedSessionError] = [
            .notSignedIn, .superseded, .refreshUnavailable, .signedOutElsewhere,
            .remote(RemoteAuthError(.server(code: "temporarily_unavailable"))),
        ]
        for error in errors {
            #expect(AuthorizedRequestError.session(error).problem == error.problem, "\(error)")
            #expect(AuthorizedRequestError.session(error).recoverySuggestion == error.recoverySuggestion)
        }
    }

    @Test(
        "a network failure reads as the person would put it",
        arguments: [
            (URLError.Code.notConnectedToInternet, AuthProblem.offline),
            (.networkConnectionLost, .offline),
            (.dataNotAllowed, .offline),
            (.internationalRoamingOff, .offline),
            (.timedOut, .serverNotResponding),
            (.cannotConnectToHost, .serverNotResponding),
            (.cannotFindHost, .serverNotResponding),
            (.dnsLookupFailed, .serverNotResponding),
            (.badServerResponse, .serverError),
            (.cannotParseResponse, .serverError),
            (.secureConnectionFailed, .serverNotResponding),
            (.cancelled, .cancelled),
        ]
    )
    func networkProblem(code: URLError.Code, problem: AuthProblem) {
        let error = AuthorizedRequestError.network(URLError(code))
        #expect(error.problem == problem, "\(code.rawValue)")
        #expect(error.localizedDescription == problem.message)
    }

    @Test("the offline message, not Foundation's, for a request with no connection")
    func offlineMessage() {
        let error = AuthorizedRequestError.network(URLError(.notConnectedToInternet))
        #expect(error.localizedDescription == AuthProblem.offline.message)
        #expect(error.recoverySuggestion == AuthProblem.offline.recoverySuggestion)
    }
}
