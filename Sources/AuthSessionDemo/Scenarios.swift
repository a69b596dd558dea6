import AuthSession
import AuthSessionInterface
import AuthSessionMocks
import Foundation

extension Scenario {

    /// A provider holding a session that expires `seconds` from the clock's start.
    static func storedSession(
        expiresIn seconds: TimeInterval,
        biometric: Bool = false
    ) -> @Sendable (MockSessionProvider, ManualClock) -> Void {
        { provider, clock in
            provider.session = MockSession(expiresIn: seconds, from: clock.now)
            provider.isBioMetricAuthenticationEnabled = biometric
        }
    }

    /// Every scenario, in the order the demo runs them.
    static let all: [Scenario] = [
        launchValidSession, launchExpiredSession, launchMissingSession, launchFetchFailure, biometricUnlock,
        biometricFailureSignsOut, biometricFailureKeptThenManual, autoRefreshProvider, foregroundRevalidation,
        signInThenSignOut, revokedDuringPrompt, commandLineRevalidation,
    ]

    static let launchValidSession = Scenario(
        name: "launch-valid-session",
        summary: "A stored session with an hour left: straight to signed in, no sign-in screen flash.",
        expectation: Expectation(status: .signedIn, path: [.validating, .signedIn]),
        configure: storedSession(expiresIn: 3600),
        run: { await $0.launch() }
    )

    static let launchExpiredSession = Scenario(
        name: "launch-expired-session",
        summary:
            "A provider you write, without refresh, holds a session with 90 s left (under the spec's 180 s threshold): the handle signs out and tells it why. (The session manager refreshes such a session instead: part 2.)",
        expectation: Expectation(status: .signedOut, path: [.validating, .signedOut], signOutCount: 1),
        configure: storedSession(expiresIn: 90),
        run: { await $0.launch() }
    )

    static let launchMissingSession = Scenario(
        name: "launch-missing-session",
        summary: "No stored session: signed out, nothing to sign out of.",
        expectation: Expectation(status: .signedOut, path: [.signedOut]),
        configure: { _, _ in },
        run: { await $0.launch() }
    )

    static let launchFetchFailure = Scenario(
        name: "launch-fetch-failure",
        summary: "The launch fetch fails (offline) but the cached session is valid: the user stays signed in.",
        expectation: Expectation(status: .signedIn, path: [.signedIn]),
        configure: storedSession(expiresIn: 3600),
        run: { harness in
            await harness.publish(.fetchingSession)
            await harness.publish(.sessionFetchFailed(URLError(.notConnectedToInternet)))
        }
    )

    static let biometricUnlock = Scenario(
        name: "biometric-unlock",
        summary: "Biometrics on: one prompt at launch; passing it signs in.",
        expectation: Expectation(
            status: .signedIn,
            path: [.validating, .biometricAuthentication, .signedIn],
            promptCount: 1
        ),
        configure: storedSession(expiresIn: 3600, biometric: true),
        run: { harness in
            await harness.launch()
            await harness.activate()
            try await harness.answerPrompt(.success, callbacks: 1)
        }
    )

    static let biometricFailureSignsOut = Scenario(
        name: "biometric-failure-signs-out",
        summary: "The prompt fails and the provider's policy signs out: signed out at once, provider asked.",
        expectation: Expectation(
            status: .signedOut,
            path: [.validating, .biometricAuthentication, .signedOut],
            signOutCount: 1,
            promptCount: 1
        ),
        configure: storedSession(expiresIn: 3600, biometric: true),
        run: { harness in
            await harness.launch()
            try await harness.answerPrompt(.failure(.biometryLockedout), callbacks: 2)
        }
    )

    static let biometricFailureKeptThenManual = Scenario(
        name: "biometric-failure-manual-reauth",
        summary: "The user cancels; the provider keeps the session. Activations wait; \"Try again\" prompts once more.",
        expectation: Expectation(
            status: .signedIn,
            path: [.validating, .biometricAuthentication, .signedIn, .validating, .biometricAuthentication, .signedIn],
            promptCount: 2
        ),
        configure: { provider, clock in
            provider.session = MockSession(expiresIn: 3600, from: clock.now)
            provider.isBioMetricAuthenticationEnabled = true
            provider.biometricErrorsThatKeepSession = [.canceledByUser]
        },
        run: { harness in
            await harness.launch()
            try await harness.answerPrompt(.failure(.canceledByUser), callbacks: 2)
            await harness.activate()
            await harness.activate()
            await harness.requestManualAuthentication()
            try await harness.answerPrompt(.success, callbacks: 1)
        }
    )

    static let autoRefreshProvider = Scenario(
        name: "auto-refresh-provider",
        summary: "The provider refreshes tokens itself: the handle trusts its refreshes and never checks expiry.",
        expectation: Expectation(status: .signedIn, path: [.signedIn, .syncing, .signedIn]),
        configure: { provider, clock in
            provider.session = MockSession(expiresIn: 100, from: clock.now)
            provider.allowsLocalSessionValidation = false
            provider.isSessionAutoRefreshEnabled = true
        },
        run: { harness in
            await harness.launch()
            harness.advanceClock(by: 90)
            await harness.publish(.fetchingSession)
            harness.provider.session = MockSession(expiresIn: 3600, from: harness.clock.now)
            await harness.publish(.sessionFetched(isInitialFetch: false))
            await harness.activate()
            await harness.activate()
        }
    )

    static let foregroundRevalidation = Scenario(
        name: "foreground-revalidation-expired",
        summary: "Back from the background after the session lapsed: revalidation signs out.",
        expectation: Expectation(
            status: .signedOut,
            path: [.validating, .signedIn, .validating, .signedOut],
            signOutCount: 1
        ),
        configure: storedSession(expiresIn: 1800),
        run: { harness in
            await harness.launch()
            await harness.activate()
            harness.advanceClock(by: 1700)
            await harness.activate()
        }
    )

    static let signInThenSignOut = Scenario(
        name: "sign-in-then-sign-out",
        summary: "A new user signs in, then signs out voluntarily.",
        expectation: Expectation(status: .signedOut, path: [.signedOut, .signedIn, .signedOut], signOutCount: 1),
        configure: { _, _ in },
        run: { harness in
            await harness.launch()
            harness.provider.session = MockSession(
                expiresIn: 3600,
                from: harness.clock.now,
                user: MockUser(identifier: "ada@example.com")
            )
            await harness.publish(.sessionSignIn)
            await harness.input("user taps \"Sign out\" (provider.signout())") { try? harness.provider.signout() }
        }
    )

    static let revokedDuringPrompt = Scenario(
        name: "revoked-during-prompt",
        summary: "Revoked while the prompt is up: the prompt is taken down; the next session gets its own.",
        expectation: Expectation(
            status: .signedIn,
            path: [.validating, .biometricAuthentication, .signedOut, .biometricAuthentication, .signedIn],
            promptCount: 2
        ),
        configure: storedSession(expiresIn: 3600, biometric: true),
        run: { harness in
            await harness.launch()
            try await harness.authenticator.waitForPendingPrompt()
            await harness.publish(.sessionSignedOut(error: AuthSessionError.sessionMalformed))
            await harness.waitForPromptToSettle()
            harness.provider.session = MockSession(
                expiresIn: 3600,
                from: harness.clock.now,
                user: MockUser(identifier: "next@example.com")
            )
            await harness.publish(.sessionFetched(isInitialFetch: false))
            try await harness.answerPrompt(.success, callbacks: 1)
        }
    )

    static let commandLineRevalidation = Scenario(
        name: "command-line-revalidation",
        summary: "A client without an app lifecycle: the launch counts, so its first activation revalidates.",
        expectation: Expectation(
            status: .signedOut,
            path: [.validating, .signedIn, .validating, .signedOut],
            signOutCount: 1
        ),
        hasApplicationLifecycle: false,
        configure: storedSession(expiresIn: 1800),
        run: { harness in
            await harness.launch()
            harness.advanceClock(by: 1700)
            await harness.activate()
        }
    )
}
