import AuthSessionInterface
import Foundation
import Testing

/// Implements nothing: every callback falls to the protocol's empty default.
private final class SilentDelegate: AuthSessionDelegate {}

/// Implements only the logout callback.
private final class LogoutOnlyDelegate: AuthSessionDelegate, @unchecked Sendable {
    // @unchecked: `logouts` is only touched from the test's own thread.
    var logouts = 0
    func authentication(_ sessionHandle: (any AuthSessionHandleProtocol)?, didLogoutWith error: (any Error)?) {
        logouts += 1
    }
}

private struct AnyStatus: AuthSessionStatusProtocol {
    var isSyncing = false
    var isSignedIn = true
    var isSignedOut = false
    var isValidating = false
    var isBiometricAuthentication = false
}

@Suite("AuthSessionDelegate defaults")
struct AuthSessionDelegateTests {

    @Test("every callback has a no-op default")
    func everyCallbackHasDefault() {
        let delegate: any AuthSessionDelegate = SilentDelegate()
        let session = ContractSession(accessToken: "t", expiresAt: 0, user: ContractUser(identifier: "u"))
        delegate.authentication(nil, didCompleteFetchWith: session, isInitialFetch: true)
        delegate.authentication(nil, didUpdateStatus: AnyStatus(), from: AnyStatus(), for: nil)
        delegate.authentication(nil, didLoginWith: session.user, for: session)
        delegate.authentication(nil, didLogoutWith: nil)
        delegate.authentication(nil, didUpdate: nil, for: nil)
        delegate.authentication(nil, didFailWith: .sessionExpired, for: nil)
    }

    @Test("an observer implements only what it needs, and its implementation is the one called")
    func partialImplementationIsCalled() {
        let concrete = LogoutOnlyDelegate()
        let delegate: any AuthSessionDelegate = concrete
        delegate.authentication(nil, didLogoutWith: AuthSessionError.sessionExpired)
        delegate.authentication(nil, didFailWith: .sessionExpired, for: nil)
        #expect(concrete.logouts == 1)
    }
}

@Suite("AuthSessionDelegateEvent")
struct AuthSessionDelegateEventTests {

    @Test("each case carries its payload")
    func payloads() {
        if case .sessionFetch(let isInitial) = AuthSessionDelegateEvent.sessionFetch(isInitial: true) {
            #expect(isInitial)
        } else {
            Issue.record("expected .sessionFetch")
        }
        if case .logout(let error) = AuthSessionDelegateEvent.logout(error: NSError(domain: "d", code: 7)) {
            #expect((error as? NSError)?.code == 7)
        } else {
            Issue.record("expected .logout")
        }
        let changed = AuthSessionDelegateEvent.sessionStatusChanged(
            oldValue: AnyStatus(isSyncing: true, isSignedIn: false),
            newValue: AnyStatus()
        )
        if case .sessionStatusChanged(let old, let new) = changed {
            #expect(old.isSyncing && old.isLoadingStatus)
            #expect(new.isSignedIn && !new.isLoadingStatus)
        } else {
            Issue.record("expected .sessionStatusChanged")
        }
        if case .failure(let error) = AuthSessionDelegateEvent.failure(error: .sessionMalformed),
            case .sessionMalformed = error
        {
        } else {
            Issue.record("expected .failure(.sessionMalformed)")
        }
    }
}
