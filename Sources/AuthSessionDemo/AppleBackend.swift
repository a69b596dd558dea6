import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation

/// The app's own backend in the Sign in with Apple scenarios, in process: it redeems the checked
/// authorization's code at the simulated Apple, keeps one account per Apple user, and issues its
/// own tokens (an access token for an hour, a refresh token it rotates).
///
/// - A refresh asks Apple whether the user still authorizes the app first, standing in for the
///   check a real backend makes by validating Apple's refresh token at `/auth/token`: after
///   "Stop Using Apple ID" it refuses with `invalid_grant`. (The manager does not wait for that:
///   Apple's credential state is final, and it signs out at the check.)
/// - Deleting the account finds the user by the request's access token, deletes the account and
///   revokes the user's tokens at Apple (`/auth/revoke`).
///
/// The user it names is its account identifier only: the name and email come from Apple's first
/// authorization, and the session manager keeps them.
final class AppleDemoBackend: Sendable {

    /// Apple, as the backend reaches it.
    let apple: SimulatedAppleIDProvider

    private let state = ConcurrencySafeContainer(State())

    private struct State {
        /// Account identifiers, by Apple user identifier.
        var accounts: [String: String] = [:]
        var accountsCreated = 0
        /// The Apple user of every live token.
        var accessTokens: [String: String] = [:]
        var refreshTokens: [String: String] = [:]
        var exchangeCount = 0
        var refreshCount = 0
        var refusedRefreshCount = 0
        var revocationCount = 0
        var deletedAccounts: [String] = []
    }

    init(apple: SimulatedAppleIDProvider) {
        self.apple = apple
    }

    /// The backend as a `SignInWithAppleService` calls it.
    var signInWithApple: SignInWithAppleBackend {
        .exchange(
            { [self] authorization in try exchange(authorization) },
            refresh: { [self] refreshToken in try await refresh(refreshToken) },
            revoke: { [self] token, _ in revoke(token) },
            deleteAccount: { [self] session in try deleteAccount(of: session) }
        )
    }

    // MARK: - Endpoints

    private func exchange(_ authorization: AppleIDAuthorization) throws -> IssuedTokens {
        // A real backend verifies the identity token again; the code is single-use either way.
        let appleUser = try apple.redeem(authorizationCode: authorization.authorizationCode)
        guard appleUser == authorization.claims.subject else { throw Self.invalidGrant }
        return state.withLock { state in
            state.exchangeCount += 1
            let account =
                state.accounts[appleUser]
                ?? {
                    state.accountsCreated += 1
                    return "account-\(state.accountsCreated)"
                }()
            state.accounts[appleUser] = account
            return Self.issue(to: appleUser, account: account, in: &state)
        }
    }

    private func refresh(_ refreshToken: String) async throws -> IssuedTokens {
        let appleUser = state.withLock { state -> String? in
            state.refreshCount += 1
            return state.refreshTokens[refreshToken]
        }
        guard let appleUser else { throw Self.invalidGrant }
        let appleSays = try await apple.credentialState(forUserID: appleUser)
        return try state.withLock { state in
            state.refreshTokens[refreshToken] = nil
            guard appleSays == .authorized, let account = state.accounts[appleUser] else {
                state.refusedRefreshCount += 1
                throw Self.invalidGrant
            }
            var tokens = Self.issue(to: appleUser, account: account, in: &state)
            tokens.user = nil
            return tokens
        }
    }

    private func revoke(_ token: String) {
        state.withLock { state in
            state.revocationCount += 1
            state.accessTokens[token] = nil
            state.refreshTokens[token] = nil
        }
    }

    private func deleteAccount(of session: ManagedSession) throws {
        let appleUser = try state.withLock { state -> String in
            guard let appleUser = state.accessTokens[session.accessToken], let account = state.accounts[appleUser]
            else {
                throw RemoteAuthError(.server(code: "invalid_token"), statusCode: 401)
            }
            state.accounts[appleUser] = nil
            state.accessTokens = state.accessTokens.filter { $0.value != appleUser }
            state.refreshTokens = state.refreshTokens.filter { $0.value != appleUser }
            state.deletedAccounts.append(account)
            return appleUser
        }
        apple.revokeTokens(userID: appleUser)
    }

    private static func issue(to appleUser: String, account: String, in state: inout State) -> IssuedTokens {
        let accessToken = "at-\(UUID().uuidString)"
        let refreshToken = "rt-\(UUID().uuidString)"
        state.accessTokens[accessToken] = appleUser
        state.refreshTokens[refreshToken] = appleUser
        return IssuedTokens(
            accessToken: accessToken,
            refreshToken: refreshToken,
            expiresIn: 3600,
            user: ManagedUser(identifier: account)
        )
    }

    private static let invalidGrant = RemoteAuthError(.server(code: "invalid_grant"), statusCode: 400)

    // MARK: - History

    /// Authorizations exchanged for the backend's tokens.
    var exchangeCount: Int { state.withLock { $0.exchangeCount } }

    /// Refresh requests received.
    var refreshCount: Int { state.withLock { $0.refreshCount } }

    /// Refresh requests refused because Apple no longer authorizes the user.
    var refusedRefreshCount: Int { state.withLock { $0.refusedRefreshCount } }

    /// Tokens revoked at sign-out.
    var revocationCount: Int { state.withLock { $0.revocationCount } }

    /// The accounts deleted, in order.
    var deletedAccounts: [String] { state.withLock { $0.deletedAccounts } }
}
