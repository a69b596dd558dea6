import AuthSession
import AuthSessionInterface
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation

extension AppleScenario {

    /// Every Sign in with Apple scenario, in the order the demo runs them.
    static let all: [AppleScenario] = [signIn, credentialRevoked, deleteAccount]

    static let signIn = AppleScenario(
        name: "apple-sign-in",
        summary: "Sign in with Apple: the first sign-in's name and email survive a relaunch and a later sign-in.",
        expectation: ManagerScenario.Expectation(status: .signedIn, path: [.signedOut, .signedIn], logoutCount: 1),
        run: { harness in
            await harness.printLaunch("app launches; the session folder is empty")
            let first = try await harness.signInWithApple("first authorization: Apple shares the name and email")
            harness.check(
                "the credential carried the name and email (a first authorization)",
                first.fullName != nil && first.email != nil
            )
            let session = try require(harness.app.provider.session)
            harness.check(
                "the session's user is the backend's account, with Apple's name and email",
                session.user.identifier == "account-1" && harness.hasAdasNameAndEmail(session),
                "\(session.user.identifier), \(session.user.name ?? "no name"), \(session.user.email ?? "no email")"
            )
            harness.check(
                "the backend redeemed the authorization code at Apple once, and issued its tokens",
                harness.apple.redeemedCodeCount == 1 && harness.backend.exchangeCount == 1
            )
            harness.check(
                "the file holds that session, name and email included, mode 600",
                harness.storedSession()?.accessToken == session.accessToken
                    && harness.hasAdasNameAndEmail(harness.storedSession()) && harness.app.fileMode == 0o600,
                harness.app.fileSummary()
            )

            await harness.relaunch()
            harness.printSession()
            let app = harness.app
            harness.check(
                "no sign-in flash: signedIn when the handle's init returned, never signedOut",
                app.statusAfterInit == .signedIn && !app.recorder.statusChanges.contains { $0.to == .signedOut }
                    && app.recorder.startingStatuses == [.signedIn],
                "\(app.statusAfterInit), \(app.recorder.statusChanges)"
            )
            harness.check(
                "the same session, name and email restored from the file, with no new sign-in",
                app.provider.session?.accessToken == session.accessToken
                    && harness.hasAdasNameAndEmail(app.provider.session) && harness.backend.exchangeCount == 1
            )
            harness.check(
                "the launch asked Apple for the credential state once (authorized: nothing changes)",
                harness.apple.stateCheckCount == 1,
                "\(harness.apple.stateCheckCount) check(s)"
            )
            harness.check(
                "one observer of Apple's revocation notification: the new manager's",
                harness.apple.observerCount == 1,
                "\(harness.apple.observerCount)"
            )

            try await harness.input("user signs out: provider.signout(with: nil)") {
                try app.provider.signout(with: nil)
            }
            harness.check(
                "the backend revoked the refresh token; the file is gone",
                harness.backend.revocationCount == 1 && harness.storedSession() == nil,
                "\(harness.backend.revocationCount) revocation(s), \(harness.app.fileSummary())"
            )

            let later = try await harness.signInWithApple("a later authorization: Apple shares neither")
            let laterClaims = later.identityToken.flatMap { try? IDTokenClaims(parsing: $0) }
            harness.check(
                "the credential carried no name and no email, and its identity token no email",
                later.fullName == nil && later.email == nil && laterClaims != nil && laterClaims?.email == nil
            )
            harness.check(
                "the session still has the name and email (kept from the session of this run), same account",
                harness.app.provider.session?.user.identifier == "account-1"
                    && harness.hasAdasNameAndEmail(harness.app.provider.session)
            )
            harness.check(
                "so does the file",
                harness.hasAdasNameAndEmail(harness.storedSession()),
                harness.app.fileSummary()
            )
        }
    )

    static let credentialRevoked = AppleScenario(
        name: "apple-credential-revoked",
        summary: "\"Stop Using Apple ID\" signs out at the next activation; Apple's revocation notification at once.",
        expectation: ManagerScenario.Expectation(
            status: .signedOut,
            path: [.signedIn, .signedOut, .signedIn, .signedOut],
            logoutCount: 2
        ),
        run: { harness in
            await harness.printLaunch("app launches; the session folder is empty")
            try await harness.signInWithApple("first authorization: Apple shares the name and email")
            let apple = harness.apple
            let userID = AppleDemoHarness.ada.userID

            await harness.input(
                "user chooses Settings › Apple ID › Sign in with Apple › Stop Using Apple ID: "
                    + "apple.stopUsingAppleID(userID: \"\(userID)\")"
            ) {
                apple.stopUsingAppleID(userID: userID)
            }
            harness.check(
                "nothing tells a running app: still signedIn, the session and its file kept",
                harness.app.handle.sessionStatus == .signedIn && harness.app.provider.session != nil
                    && harness.storedSession() != nil
            )
            harness.advanceClock(
                by: 360,
                "the user stays in Settings for 6 minutes (the manager asks Apple at most every 300 s on activation)"
            )
            try await harness.inputSigningOut("app becomes active: the manager asks Apple for the credential state") {
                harness.activation.fire()
            }
            harness.check(
                "Apple said revoked, which is final: signed out without asking the backend (no refresh request)",
                harness.backend.refreshCount == 0,
                "\(harness.backend.refreshCount) refresh request(s)"
            )
            harness.check(
                "signed out once, logout error credentialRevoked(revoked); the file is gone",
                harness.logoutErrors == [.credentialRevoked(.revoked)] && harness.storedSession() == nil,
                "logout errors \(harness.logoutErrors), \(harness.app.fileSummary())"
            )

            let again = try await harness.signInWithApple("after Stop Using Apple ID, a first authorization again")
            harness.check(
                "the credential carried the name and email again; the session has them",
                again.fullName != nil && again.email != nil && harness.hasAdasNameAndEmail(harness.app.provider.session)
            )

            var signedOutAtOnce = false
            try await harness.inputSigningOut(
                "the user stops using Apple ID while the app runs; Apple posts credentialRevokedNotification: "
                    + "apple.stopUsingAppleID(userID: \"\(userID)\", notifies: true)"
            ) {
                apple.stopUsingAppleID(userID: userID, notifies: true)
                signedOutAtOnce = harness.app.provider.session == nil
            }
            harness.check(
                "signed out at once: the manager had no session when the post returned, no activation needed",
                signedOutAtOnce && harness.activation.fireCount == 1,
                "\(harness.activation.fireCount) activation(s)"
            )
            harness.check(
                "logout error credentialRevoked(revoked); the file is gone; no further backend call",
                harness.logoutErrors == [.credentialRevoked(.revoked), .credentialRevoked(.revoked)]
                    && harness.storedSession() == nil && harness.backend.refreshCount == 0
                    && harness.backend.revocationCount == 0,
                "logout errors \(harness.logoutErrors), \(harness.app.fileSummary()), "
                    + "\(harness.backend.refreshCount) refresh(es), \(harness.backend.revocationCount) revocation(s)"
            )
        }
    )

    static let deleteAccount = AppleScenario(
        name: "apple-delete-account",
        summary: "Account deletion: the backend revokes the user's tokens at Apple, then the manager signs out.",
        expectation: ManagerScenario.Expectation(status: .signedOut, path: [.signedIn, .signedOut], logoutCount: 1),
        run: { harness in
            await harness.printLaunch("app launches; the session folder is empty")
            try await harness.signInWithApple("first authorization: Apple shares the name and email")
            let apple = harness.apple
            let userID = AppleDemoHarness.ada.userID
            let provider = harness.app.provider
            let revocationsBefore = apple.tokenRevocationCount

            // The session stream, read from here on: its first element is the session as it is.
            let stream = ConcurrencySafeContainer<[String]>([])
            let iterator = provider.sessionChanges.makeAsyncIterator()
            let reader = Task {
                var changes = iterator
                while let change = await changes.next() {
                    stream.withLock { $0.append("\(change.event)") }
                }
            }
            defer { reader.cancel() }

            try await harness.inputSigningOut(
                "user taps Delete Account: provider.deleteAccount() (the backend deletes it and revokes at Apple)"
            ) {
                try await provider.deleteAccount()
            }
            try await harness.waitUntil("the session stream's sign-out") { stream.withLock { $0.count } >= 2 }
            let changes = stream.withLock { $0 }
            harness.note("stream   sessionChanges: \(changes.joined(separator: ", "))")
            let appleState = try await apple.credentialState(forUserID: userID)
            harness.note(
                "apple    token revocations \(revocationsBefore) → \(apple.tokenRevocationCount); "
                    + "credential state of \(userID): \(appleState)"
            )
            harness.check(
                "the backend deleted account-1 and revoked the user's tokens at Apple (its credential state is revoked)",
                harness.backend.deletedAccounts == ["account-1"] && apple.tokenRevocationCount == revocationsBefore + 1
                    && appleState == .revoked,
                "deleted \(harness.backend.deletedAccounts), state \(appleState)"
            )
            harness.check(
                "signed out because of the deletion: stream signedOut(accountDeleted), logout error accountDeleted",
                changes == ["initialSession", "signedOut(accountDeleted)"] && harness.logoutErrors == [.accountDeleted],
                "stream \(changes), logout errors \(harness.logoutErrors)"
            )
            harness.check(
                "nothing revoked again at the backend; the session file is gone",
                harness.backend.revocationCount == 0 && harness.storedSession() == nil,
                "\(harness.backend.revocationCount) revocation(s), \(harness.app.fileSummary())"
            )
        }
    )
}
