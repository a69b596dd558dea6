import AuthSessionOAuth2
import Foundation
import Testing

@testable import AuthSessionOAuth2

/// The portable decisions of the `ASWebAuthenticationSession` adapter: the callback for a
/// redirect URI, the error for each code, one answer per session whatever cancels it.
@Suite(.timeLimit(.minutes(1))) @MainActor struct WebAuthenticationSessionTests {

    static let domain = "com.apple.AuthenticationServices.WebAuthenticationSession"

    /// A session that records what it is asked and answers when the test says.
    final class FakeSession: WebAuthenticationSessionDriving {
        var starts = 0
        var cancels = 0
        var startSucceeds = true
        var completion: ((URL?, (any Error)?) -> Void)?
        var onStart: (() -> Void)?

        func start() -> Bool {
            starts += 1
            onStart?()
            return startSucceeds
        }

        func cancel() {
            cancels += 1
        }
    }

    @Test func theCallbackFollowsTheRedirectURI() throws {
        #expect(
            try WebAuthenticationCallback(redirectURI: URL(string: "com.example.app:/oauth")!)
                == .customScheme("com.example.app")
        )
        #expect(try WebAuthenticationCallback(redirectURI: URL(string: "MyApp://cb")!) == .customScheme("myapp"))
        #expect(
            try WebAuthenticationCallback(redirectURI: URL(string: "https://app.example.com/auth/done?x=1")!)
                == .https(host: "app.example.com", path: "/auth/done")
        )
        #expect(
            try WebAuthenticationCallback(redirectURI: URL(string: "https://app.example.com")!)
                == .https(host: "app.example.com", path: "/")
        )
        #expect(throws: BrowserSignInError.self, "a loopback redirect is the listener's") {
            try WebAuthenticationCallback(redirectURI: URL(string: "http://127.0.0.1:8000/callback")!)
        }
        #expect(throws: BrowserSignInError.self) {
            try WebAuthenticationCallback(redirectURI: URL(string: "/relative/only")!)
        }
    }

    @Test func errorsAreMappedByDomainAndCode() {
        func map(_ code: Int, domain: String = Self.domain) -> Result<URL, BrowserSignInError> {
            WebAuthenticationOutcome.map(url: nil, error: (domain, code), sessionErrorDomain: Self.domain)
        }
        #expect(map(1) == .failure(.cancelled), "canceledLogin: the person closed the sheet")
        #expect(map(2) == .failure(.presentationFailed("no presentation context")))
        #expect(map(3) == .failure(.presentationFailed("the presentation context is invalid")))
        guard case .failure(.presentationFailed) = map(99) else {
            Issue.record("an unknown code is a presentation failure")
            return
        }
        guard case .failure(.presentationFailed) = map(1, domain: NSURLErrorDomain) else {
            Issue.record("code 1 of another domain is not a cancellation")
            return
        }
        let url = URL(string: "com.example.app:/oauth?code=a&state=b")!
        #expect(WebAuthenticationOutcome.map(url: url, error: nil, sessionErrorDomain: Self.domain) == .success(url))
        guard
            case .failure(.presentationFailed) = WebAuthenticationOutcome.map(
                url: nil,
                error: nil,
                sessionErrorDomain: Self.domain
            )
        else {
            Issue.record("no URL and no error is a failure")
            return
        }
    }

    @Test func theSessionsRedirectIsReturned() async throws {
        let fake = FakeSession()
        let url = URL(string: "com.example.app:/oauth?code=a&state=b")!
        fake.onStart = { [unowned fake] in fake.completion?(url, nil) }
        let redirect = try await WebAuthenticationRun.run(sessionErrorDomain: Self.domain) { completion in
            fake.completion = completion
            return fake
        }
        #expect(redirect == url)
        #expect(fake.starts == 1 && fake.cancels == 0)
    }

    @Test func closingTheSheetIsCancelled() async throws {
        let fake = FakeSession()
        fake.onStart = { [unowned fake] in
            fake.completion?(nil, NSError(domain: Self.domain, code: 1))
        }
        await #expect(throws: BrowserSignInError.cancelled) {
            try await WebAuthenticationRun.run(sessionErrorDomain: Self.domain) { completion in
                fake.completion = completion
                return fake
            }
        }
    }

    @Test func aSessionThatDoesNotStartFails() async throws {
        let fake = FakeSession()
        fake.startSucceeds = false
        let error = await #expect(throws: BrowserSignInError.self) {
            try await WebAuthenticationRun.run(sessionErrorDomain: Self.domain) { _ in fake }
        }
        #expect(error == .presentationFailed("the browser session did not start"))
    }

    @Test func cancellingTheTaskCancelsTheSessionAndAnswersOnce() async throws {
        let fake = FakeSession()
        var started: CheckedContinuation<Void, Never>?
        let running = Task { @MainActor in
            try await WebAuthenticationRun.run(sessionErrorDomain: Self.domain) { completion in
                fake.completion = completion
                return fake
            }
        }
        // Started: the session is presented.
        await withCheckedContinuation { continuation in
            if fake.starts > 0 { continuation.resume() } else { started = continuation }
            fake.onStart = { started?.resume() }
        }
        running.cancel()
        await #expect(throws: BrowserSignInError.cancelled) { try await running.value }
        // The cancel reaches the session on the main actor, a hop later (bounded: fails, never hangs).
        for _ in 0..<10_000 where fake.cancels == 0 {
            await Task.yield()
        }
        #expect(fake.cancels == 1)
        // The session's own late answer (canceledLogin after `cancel()`) is ignored.
        fake.completion?(nil, NSError(domain: Self.domain, code: 1))
    }

    @Test func aTaskCancelledBeforeNeverPresents() async throws {
        let fake = FakeSession()
        let running = Task { @MainActor in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await WebAuthenticationRun.run(sessionErrorDomain: Self.domain) { _ in fake }
        }
        await #expect(throws: BrowserSignInError.cancelled) { try await running.value }
        #expect(fake.starts == 0)
    }
}
