import AuthSession
import AuthSessionInterface
import Foundation

extension ManagedSessionProvider {

    /// The tunable parts of a ``ManagedSessionProvider``; the defaults suit an app.
    ///
    /// All operations are thread-safe.
    public struct Configuration: Sendable {

        /// How long before an access token expires the manager refreshes it: 60 seconds.
        ///
        /// For tokens that live less than twice as long, half their lifetime is used instead, so a
        /// short-lived token is not due the moment it is issued.
        public var refreshMargin: TimeInterval

        /// Whether the manager asks the backend for the credential's state at launch and on
        /// activation (at most once per ``credentialCheckInterval``). `true`.
        public var checksCredentialState: Bool

        /// The shortest time between two credential-state checks on activation: 5 minutes.
        public var credentialCheckInterval: TimeInterval

        /// The first wait before loading again when the store is unavailable at launch (a locked
        /// device): 2 seconds, doubling up to ``maximumStorageRetryInterval``. An activation also
        /// loads again.
        public var storageRetryInterval: TimeInterval

        /// The longest wait between two loads while the store is unavailable: 60 seconds.
        public var maximumStorageRetryInterval: TimeInterval

        /// The lifetime assumed for an access token whose server did not say (`expires_in` is
        /// optional in RFC 6749): one hour.
        public var assumedTokenLifetime: TimeInterval

        /// The scopes a refresh asks for, or `nil` for those granted before.
        public var refreshScope: [String]?

        /// Whether a sign-out revokes the refresh token at the backend (best effort, after the
        /// local sign-out). `true`.
        public var revokesOnSignOut: Bool

        /// What tells the manager the app became active, to refresh a due token, check the
        /// credential, and retry a store that was unavailable. Use the one the handle uses.
        public var activationSignal: any AppActivationSignal

        /// What tells the manager the backend revoked the credential (Sign in with Apple posts a
        /// notification), or `nil`.
        public var revocationSignal: (any CredentialRevocationSignal)?

        /// How long a refresh's lease lasts (see ``RefreshLease``): processes sharing the store
        /// wait this long at most for a refresh another process started and did not finish (one
        /// suspended mid-call, say), unless its owner is found gone. A refresh abandons its
        /// exchange with the server a little before the lease lapses (and reports a timeout), so a
        /// running owner never loses its lease mid-call. 120 seconds by default: longer than
        /// ``RetryPolicy/standard``'s attempts with a 30-second transport timeout need; raise it with
        /// a longer transport timeout. At least 2 seconds, at most ``RefreshLease/maximumDuration``
        /// (15 minutes). Other processes honour the duration this one records in its lease,
        /// whatever theirs is.
        public var refreshLeaseDuration: TimeInterval {
            get { leaseDuration }
            set { leaseDuration = min(RefreshLease.maximumDuration, max(2, newValue)) }
        }

        private var leaseDuration: TimeInterval = 120

        /// How long a refresh token's revocation that could not reach the server is kept and
        /// made again (``PendingRevocation``), in seconds: 30 days by default, longer than most
        /// servers keep an unused refresh token valid. At least one minute.
        public var pendingRevocationLifetime: TimeInterval {
            get { revocationLifetime }
            set { revocationLifetime = newValue.isFinite ? max(60, newValue) : revocationLifetime }
        }

        private var revocationLifetime: TimeInterval = 30 * 86_400

        /// What asks the operating system for time to finish a refresh (and the writes of the
        /// biometric setting, a sign-out, a retried write) the process started before it was sent
        /// to the background, or `nil`: ``ExpiringActivityAssertion`` by default
        /// (`ProcessInfo.performExpiringActivity` on Apple platforms, which app extensions can use
        /// too; nothing elsewhere); `UIKitBackgroundTaskAssertion` in an app that prefers
        /// UIKit's background tasks.
        ///
        /// When the time runs out, the work takes the store's exclusive access no more (a process
        /// suspended while it holds a file lock in a shared container is killed): a refresh not
        /// yet sent fails and is retried at the next activation, rotated tokens that arrive after
        /// the expiry stay unsaved in memory and are written at the next activation, and the lease
        /// is left to lapse. Nothing is held meanwhile: a process suspended mid-refresh blocks no
        /// other process beyond its lease.
        public var backgroundTask: (any BackgroundTaskAssertion)?

        /// What this process does with the session: ``Role/full`` (refreshes it, checks the
        /// credential) by default; ``Role/readOnly`` in a widget or an extension that only reads
        /// it.
        public var role: Role

        /// What a process does with the session it shares with others.
        ///
        /// All operations are thread-safe.
        public enum Role: Sendable, Hashable, CaseIterable {

            /// Restores, refreshes (at launch, before expiry, on demand), checks the credential
            /// and retries failed writes: the app.
            case full

            /// Restores the session and follows the shared store's change notices (the app's
            /// refreshes reach it at once, its sign-out too), and never talks to the server by
            /// itself: no refresh (at launch, before expiry, on demand), no credential check. A token that
            /// needs a refresh fails with ``ManagedSessionError/readOnly`` (the session stands)
            /// until the app renews it. Sign-in, sign-out and the biometric setting, which a
            /// person asks for, work as in the app. For a widget, a notification service, or any
            /// extension that has seconds to run and may be suspended at any time: a refresh
            /// there could spend a rotating refresh token whose successor it has no time to save.
            case readOnly
        }

        /// The biometric failures that end the session: `[.failed]`, the one that says the person
        /// at the device is not its owner (the face or finger did not match, to the end of the
        /// system's attempts).
        ///
        /// Every other failure says nothing about the person, and keeps the session: the handle
        /// then requires manual authentication (the spec's policy answer `false`), and the app
        /// offers an "Unlock" button that calls `requestManualAuthentication()`. A sign-out here
        /// would end the session for every process sharing the store and revoke its refresh token,
        /// for something the person did not do:
        ///
        /// | Failure | Why it keeps the session |
        /// | --- | --- |
        /// | `.canceledByUser` | a tap on Cancel |
        /// | `.canceledBySystem` | a call, the app sent to the background, a launch in the background, an extension that cannot prompt |
        /// | `.fallback` | the person chose another way to prove who they are |
        /// | `.biometryNotAvailable`, `.biometryNotEnrolled`, `.passcodeNotSet` | the device cannot ask, whoever holds it |
        /// | `.biometryLockedout` | earlier failed attempts, anywhere on the device; the passcode unlocks biometry |
        /// | `.other` | a reason Apple may add, which says nothing |
        ///
        /// Add `.biometryLockedout` for an app that treats a locked-out device as a stranger's.
        /// The handle asks ``ManagedSessionProvider/allowsSessionSigningOutOnBiometricAuthenticationFailure(with:)``,
        /// which answers from this set.
        public var biometricFailuresEndingSession: Set<BiometricAuthenticationError>

        /// What the manager tells about its sign-ins, sign-outs, refreshes, store failures and
        /// credential checks, for logs and metrics (see ``ManagedSessionObserver``), or `nil`.
        /// Delivered on a queue of its own, in order: a slow observer never stalls the manager.
        public var observer: (any ManagedSessionObserver)?

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - refreshMargin: How long before expiry to refresh.
        ///   - checksCredentialState: Whether to check the credential at launch and on activation.
        ///   - credentialCheckInterval: The shortest time between two activation checks.
        ///   - storageRetryInterval: The first wait before loading an unavailable store again.
        ///   - maximumStorageRetryInterval: The longest such wait.
        ///   - assumedTokenLifetime: The lifetime of a token whose server did not say.
        ///   - refreshScope: The scopes a refresh asks for.
        ///   - revokesOnSignOut: Whether a sign-out revokes the refresh token.
        ///   - activationSignal: What reports activations.
        ///   - revocationSignal: What reports a pushed revocation.
        ///   - refreshLeaseDuration: How long a refresh's lease lasts.
        ///   - backgroundTask: What asks for time to finish a refresh in the background.
        ///   - observer: What hears about sign-ins, refreshes and failures, for logs and metrics.
        ///   - role: What this process does with the session: ``Role/full``, or
        ///     ``Role/readOnly`` in a widget or an extension.
        ///   - biometricFailuresEndingSession: The biometric failures that end the session:
        ///     `[.failed]`.
        public init(
            refreshMargin: TimeInterval = 60,
            checksCredentialState: Bool = true,
            credentialCheckInterval: TimeInterval = 300,
            storageRetryInterval: TimeInterval = 2,
            maximumStorageRetryInterval: TimeInterval = 60,
            assumedTokenLifetime: TimeInterval = 3600,
            refreshScope: [String]? = nil,
            revokesOnSignOut: Bool = true,
            activationSignal: any AppActivationSignal = NotificationCenterActivationSignal(),
            revocationSignal: (any CredentialRevocationSignal)? = nil,
            refreshLeaseDuration: TimeInterval = 120,
            backgroundTask: (any BackgroundTaskAssertion)? = ExpiringActivityAssertion(),
            observer: (any ManagedSessionObserver)? = nil,
            role: Role = .full,
            biometricFailuresEndingSession: Set<BiometricAuthenticationError> = [.failed]
        ) {
            self.refreshMargin = refreshMargin
            self.checksCredentialState = checksCredentialState
            self.credentialCheckInterval = credentialCheckInterval
            self.storageRetryInterval = storageRetryInterval
            self.maximumStorageRetryInterval = maximumStorageRetryInterval
            self.assumedTokenLifetime = assumedTokenLifetime
            self.refreshScope = refreshScope
            self.revokesOnSignOut = revokesOnSignOut
            self.activationSignal = activationSignal
            self.revocationSignal = revocationSignal
            self.backgroundTask = backgroundTask
            self.observer = observer
            self.role = role
            self.biometricFailuresEndingSession = biometricFailuresEndingSession
            self.refreshLeaseDuration = refreshLeaseDuration
        }

        /// When a refresh abandons its exchange: a little before its lease lapses.
        func exchangeCutoff(of lease: RefreshLease) -> Date {
            Date(timeIntervalSince1970: lease.deadline - exchangeMargin)
        }

        /// How long before its lease lapses an exchange is abandoned.
        var exchangeMargin: TimeInterval { min(5, refreshLeaseDuration / 10) }

        /// The window in which the refresh under `lease`, claimed when `clock`'s uptime was
        /// `claimedAtUptime`, may send its request: until the cutoff on the wall clock, and until
        /// the same margin before the lease's recorded duration has passed on the uptime (which a
        /// clock set back does not stretch: every other process counts the lease from when it
        /// first saw it, no earlier than the claim).
        func sendingWindow(
            of lease: RefreshLease,
            claimedAtUptime: TimeInterval,
            clock: any AuthSessionClock
        ) -> RefreshSendingWindow {
            let duration = min(max(0, lease.deadline - lease.startedAt), RefreshLease.maximumDuration)
            return RefreshSendingWindow(
                clock: clock,
                closesAt: exchangeCutoff(of: lease),
                closesAtUptime: claimedAtUptime + duration - exchangeMargin
            )
        }

        /// The margin for `session`: ``refreshMargin``, or half the token's lifetime when that is
        /// shorter.
        func margin(for session: ManagedSession) -> TimeInterval {
            let lifetime = session.expiresAt - session.issuedAt
            guard lifetime.isFinite, lifetime > 0 else { return refreshMargin }
            return min(refreshMargin, lifetime / 2)
        }
    }
}
