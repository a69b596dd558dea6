import AuthSession
import AuthSessionInterface
import AuthSessionProviders
import Foundation

extension ManagerScenario {

    /// Every session-manager scenario, in the order the demo runs them.
    static let all: [ManagerScenario] = [
        signIn, relaunch, proactiveRefresh, thousandCallers, networkBlip, revokedElsewhere,
    ]

    static let signIn = ManagerScenario(
        name: "manager-sign-in",
        summary: "Password grant through the manager: the session is stored in the file, then signed in.",
        expectation: Expectation(status: .signedIn, path: [.signedIn]),
        run: { harness in
            await harness.printLaunch("app launches; the session folder is empty")
            try await harness.signIn()
            let session = harness.app.provider.session
            harness.check(
                "the file holds the session the handle signed in with, mode 600",
                session != nil && harness.storedSession()?.accessToken == session?.accessToken
                    && harness.fileMode == 0o600,
                harness.fileSummary()
            )
            let token = try await harness.app.provider.validAccessToken()
            harness.check(
                "validAccessToken() returns it at once, no refresh",
                token == session?.accessToken && harness.backend.refreshCount == 0
            )
            harness.check(
                "the server saw 1 sign-in",
                harness.backend.signInCount == 1,
                "\(harness.backend.signInCount)"
            )
        }
    )

    static let relaunch = ManagerScenario(
        name: "manager-relaunch",
        summary: "Relaunch on the same file: the session is restored inside the handle's init, no sign-in flash.",
        expectation: Expectation(status: .signedIn, path: []),
        run: { harness in
            await harness.printLaunch("app launches; the session folder is empty")
            try await harness.signIn()
            let before = harness.app.provider.session
            await harness.relaunch()
            let app = harness.app
            harness.check(
                "inside the handle's init the manager published fetchingSession, sessionFetched(launch), no sign-out",
                app.eventsDuringInit.map(harness.describe) == ["fetchingSession", "sessionFetched(launch)"]
            )
            harness.check(
                "status chain syncing → signedIn: signedIn when the init returned, never signedOut",
                app.statusAfterInit == .signedIn && !app.recorder.statusChanges.contains { $0.to == .signedOut }
            )
            harness.check(
                "the delegate's first callback starts observing at signedIn",
                app.recorder.startingStatuses == [.signedIn],
                "\(app.recorder.startingStatuses)"
            )
            harness.check(
                "the same session was restored, with no new sign-in",
                before != nil && app.provider.session?.accessToken == before?.accessToken
                    && harness.backend.signInCount == 1
            )
        }
    )

    static let proactiveRefresh = ManagerScenario(
        name: "manager-proactive-refresh",
        summary: "The manager refreshes before expiry on its own: silently, with no syncing status.",
        expectation: Expectation(status: .signedIn, path: [.signedIn]),
        run: { harness in
            await harness.printLaunch("app launches; the session folder is empty")
            try await harness.signIn()
            let first = try require(harness.app.provider.session)
            let mark = harness.app.recorder.statusChanges.count
            let eventMark = harness.app.traced.events.count
            try await harness.jumpToScheduledRefresh()
            try await harness.waitUntil("the proactive refresh") {
                harness.app.provider.session?.accessToken != first.accessToken
            }
            await harness.app.settle()
            harness.printNew()
            let refreshed = try require(harness.app.provider.session)
            harness.note(
                "session  access token \(harness.label(refreshed.accessToken)), expires in \(harness.expiresIn(refreshed))"
            )
            let published = harness.app.traced.events.dropFirst(eventMark).map(harness.describe)
            harness.check(
                "silent: no fetchingSession published, no status change (no syncing)",
                !published.contains("fetchingSession") && harness.app.recorder.statusChanges.count == mark,
                "events \(published), statuses \(harness.app.recorder.statusChanges.dropFirst(mark))"
            )
            harness.check(
                "1 refresh request; the rotated refresh token is in the file",
                harness.backend.refreshCount == 1 && harness.storedSession()?.refreshToken == refreshed.refreshToken
                    && refreshed.refreshToken != first.refreshToken,
                "\(harness.backend.refreshCount) request(s)"
            )
            try await harness.clock.waitForSleepers(1)
            harness.check(
                "the next refresh is scheduled before the new token expires",
                harness.clock.nextDeadline.map { $0.timeIntervalSince1970 < refreshed.expiresAt } ?? false
            )
        }
    )

    static let thousandCallers = ManagerScenario(
        name: "manager-1000-callers",
        summary: "1,000 concurrent validAccessToken() calls on an expired token share one refresh.",
        expectation: Expectation(status: .signedIn, path: [.signedIn]),
        run: { harness in
            await harness.printLaunch("app launches; the session folder is empty")
            try await harness.signIn()
            let first = try require(harness.app.provider.session)
            let mark = harness.app.recorder.statusChanges.count
            harness.advanceClock(
                by: first.expiresAt - harness.clock.now.timeIntervalSince1970 + 1,
                "the app was suspended past the access token's expiry"
            )
            let provider = harness.app.provider
            var results: [Result<String, ManagedSessionError>] = []
            let started = Date()
            await harness.input("1,000 tasks call validAccessToken() at once (the manager's timer wakes too)") {
                results = await withTaskGroup(of: Result<String, ManagedSessionError>.self) { group in
                    for _ in 0..<1_000 {
                        group.addTask {
                            do throws(ManagedSessionError) {
                                return .success(try await provider.validAccessToken())
                            } catch {
                                return .failure(error)
                            }
                        }
                    }
                    var collected: [Result<String, ManagedSessionError>] = []
                    for await result in group {
                        collected.append(result)
                    }
                    return collected
                }
            }
            let elapsed = Date().timeIntervalSince(started)
            let tokens = Set(results.compactMap { try? $0.get() })
            let failures = results.count { (try? $0.get()) == nil }
            harness.note(
                "result   \(results.count - failures) token(s), \(failures) failure(s), in \(Int(elapsed * 1_000)) ms; "
                    + "distinct tokens: \(tokens.map(harness.label).sorted())"
            )
            harness.check(
                "all 1,000 got the same new token",
                failures == 0 && tokens.count == 1 && !tokens.contains(first.accessToken)
            )
            harness.check(
                "the server received exactly 1 refresh request",
                harness.backend.refreshCount == 1,
                "\(harness.backend.refreshCount)"
            )
            harness.check(
                "no refresh token was presented twice",
                harness.backend.refreshTokensPresentedTwice == 0,
                "\(harness.backend.refreshTokensPresentedTwice)"
            )
            harness.check(
                "silent: no status change (no syncing)",
                harness.app.recorder.statusChanges.count == mark,
                "\(harness.app.recorder.statusChanges.dropFirst(mark))"
            )
        }
    )

    static let networkBlip = ManagerScenario(
        name: "manager-network-blip",
        summary: "The proactive refresh meets a network blip: the retry policy succeeds, nobody is signed out.",
        expectation: Expectation(status: .signedIn, path: [.signedIn]),
        run: { harness in
            await harness.printLaunch("app launches; the session folder is empty")
            try await harness.signIn()
            let first = try require(harness.app.provider.session)
            let mark = harness.app.recorder.statusChanges.count
            let eventMark = harness.app.traced.events.count
            let blip = harness.backend.injectBlip(failing: 2)
            line("  ▶ network blip: \(blip)")
            try await harness.jumpToScheduledRefresh()
            var retries = 0
            while true {
                // While the refresh is out, one sleeper is its lease's cutoff (the exchange is
                // abandoned before the lease lapses); a second is the retry policy's back-off.
                try await harness.waitUntil("a retry's back-off or the refreshed session") {
                    harness.clock.sleeperCount > 1 || harness.app.provider.session?.accessToken != first.accessToken
                }
                // The next refresh is scheduled only after the session changed: a second sleeper
                // seen while the session is unchanged is the retry policy's back-off, the earlier.
                if harness.app.provider.session?.accessToken != first.accessToken { break }
                retries += 1
                guard retries <= 5 else { throw DemoError("more retries than the policy allows") }
                let moved = harness.clock.advanceToNextDeadline() ?? 0
                line(
                    "  ⏱  try \(retries) failed; the retry policy backs off \(String(format: "%.2f", moved)) s "
                        + "(full jitter, cap \(Int(RetryPolicy.standard.delayCap(forRetry: retries))) s): clock jumps"
                )
            }
            await harness.app.settle()
            harness.printNew()
            let published = harness.app.traced.events.dropFirst(eventMark).map(harness.describe)
            harness.check(
                "the retry policy succeeded after \(retries) failed tries, inside the one refresh",
                retries == 2 && published.count == 1 && published.first?.hasPrefix("sessionUpdated") == true,
                "retries \(retries), events \(published)"
            )
            harness.check(
                "status stayed signedIn (no syncing, no signedOut, no logout)",
                harness.app.recorder.statusChanges.count == mark && harness.app.logoutCount == 0
            )
            let expected = harness.backend.isRealServer ? 1 : 3
            harness.check(
                "the server received \(expected) refresh request(s)"
                    + (harness.backend.isRealServer ? " (the dropped ones never left)" : " (503, 503, then rotated)"),
                harness.backend.refreshCount == expected,
                "\(harness.backend.refreshCount)"
            )
        }
    )

    static let revokedElsewhere = ManagerScenario(
        name: "manager-revoked-elsewhere",
        summary: "The session is revoked on another device: the next refresh signs out, exactly once.",
        expectation: Expectation(status: .signedOut, path: [.signedIn, .signedOut], logoutCount: 1),
        run: { harness in
            await harness.printLaunch("app launches; the session folder is empty")
            try await harness.signIn()
            let session = try require(harness.app.provider.session)
            let revocation = try await harness.backend.revokeElsewhere(session)
            line("  ▶ the user signs out everywhere from another device: \(revocation)")
            try await harness.jumpToScheduledRefresh()
            try await harness.waitUntil("the sign-out") { harness.app.handle.sessionStatus == .signedOut }
            await harness.app.settle()
            harness.printNew()
            harness.check(
                "signed out once, with the server's terminal answer as the cause",
                harness.app.logoutCount == 1
                    && harness.app.traced.events.contains {
                        if case .sessionSignedOut(let error as ManagedSessionError) = $0 { return error.endsSession }
                        return false
                    }
            )
            harness.check("the session file is gone", harness.storedSession() == nil, harness.fileSummary())
            var answers: [String] = []
            await harness.input("3 API calls: validAccessToken()") {
                for _ in 0..<3 {
                    do throws(ManagedSessionError) {
                        answers.append("token \(harness.label(try await harness.app.provider.validAccessToken()))")
                    } catch {
                        answers.append("\(error)")
                    }
                }
            }
            harness.note("answers  \(answers.joined(separator: ", "))")
            await harness.input("app becomes active, twice") {
                harness.activation.fire()
                harness.activation.fire()
            }
            harness.check(
                "no second sign-out, no further refresh request",
                answers == Array(repeating: "notSignedIn", count: 3) && harness.app.logoutCount == 1
                    && harness.backend.refreshCount == 1,
                "\(harness.app.logoutCount) logout(s), \(harness.backend.refreshCount) refresh request(s)"
            )
        }
    )
}

/// `value`, or a thrown ``DemoError`` when it is `nil`.
func require<Value>(_ value: Value?, _ what: String = "a session") throws -> Value {
    guard let value else { throw DemoError("expected \(what), found none") }
    return value
}
