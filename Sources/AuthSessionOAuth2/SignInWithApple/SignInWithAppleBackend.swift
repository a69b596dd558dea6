import AuthSessionProviders
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a ``SignInWithAppleService`` does with a checked Apple credential: exchange it with the
/// app's own backend for the backend's tokens (``exchange(_:refresh:revoke:deleteAccount:)``), or,
/// without a backend, keep the session on the device (``deviceOnly``).
///
/// The closures may throw any error. A `RemoteAuthError` says itself what the manager does
/// (throw one of kind `RemoteAuthError.Kind.terminal`, such as `invalid_grant`, to end the
/// session); a `URLError` is a network failure; anything else counts as a transient failure, so
/// a backend's unclassified error never signs a user out.
///
/// All operations are thread-safe.
public struct SignInWithAppleBackend: Sendable {

    /// Exchanges a checked authorization (identity token and authorization code in) for the
    /// backend's tokens. Return `IssuedTokens.user` to name the user the backend's way; without
    /// one, the user is Apple's (`sub`, and the name and email Apple shared).
    public typealias Exchange = @Sendable (_ authorization: AppleIDAuthorization) async throws -> IssuedTokens

    /// Presents the backend's refresh token for new tokens.
    public typealias Refresh = @Sendable (_ refreshToken: String) async throws -> IssuedTokens

    /// Revokes one of the backend's tokens (a sign-out).
    public typealias Revoke = @Sendable (_ token: String, _ kind: TokenKind) async throws -> Void

    /// Deletes the account at the backend, which revokes the user's tokens at Apple
    /// (`POST https://appleid.apple.com/auth/revoke` with the app's client secret): App Store
    /// Review Guideline 5.1.1(v).
    public typealias DeleteAccount = @Sendable (_ session: ManagedSession) async throws -> Void

    let exchange: Exchange?
    let refresh: Refresh?
    let revoke: Revoke?
    let deleteAccount: DeleteAccount?

    /// Whether the backend is the device itself (``deviceOnly``).
    public var isDeviceOnly: Bool { exchange == nil }

    /// The app's backend.
    ///
    /// - Parameters:
    ///   - exchange: Exchanges a checked authorization for the backend's tokens.
    ///   - refresh: Refreshes the backend's tokens; `nil` for a backend that issues no refresh
    ///     token.
    ///   - revoke: Revokes a token at sign-out; `nil` to revoke nothing.
    ///   - deleteAccount: Deletes the account and revokes the user's tokens at Apple.
    /// - Returns: The backend.
    public static func exchange(
        _ exchange: @escaping Exchange,
        refresh: Refresh? = nil,
        revoke: Revoke? = nil,
        deleteAccount: @escaping DeleteAccount
    ) -> SignInWithAppleBackend {
        SignInWithAppleBackend(exchange: exchange, refresh: refresh, revoke: revoke, deleteAccount: deleteAccount)
    }

    /// No backend: the session the device keeps, as Apple's sample apps do. The session holds the
    /// user (Apple's `sub`, the name and email shared) and Apple's identity token as its access
    /// token (which no server accepts after its ten minutes); it has no refresh token, lasts
    /// ``SignInWithAppleService/deviceOnlySessionLifetime``, and ends sooner when Apple says the
    /// credential is no longer authorized. Nothing is revoked at sign-out, and deleting the
    /// account deletes the device's session only: revoking the user's tokens at Apple needs the
    /// app's client secret, which belongs on a server.
    public static let deviceOnly = SignInWithAppleBackend(exchange: nil, refresh: nil, revoke: nil, deleteAccount: nil)

    /// Runs one of the closures, classifying what it throws.
    static func run<Value>(_ body: () async throws -> Value) async throws(RemoteAuthError) -> Value {
        do {
            return try await body()
        } catch {
            throw remoteError(error)
        }
    }

    /// A closure's error as the manager needs it.
    package static func remoteError(_ error: any Error) -> RemoteAuthError {
        switch error {
        case let error as RemoteAuthError:
            return error
        case let error as URLError:
            switch error.code {
            case .timedOut: return RemoteAuthError(.timedOut)
            case .cancelled: return RemoteAuthError(.cancelled)
            default: return RemoteAuthError(.network(code: error.code.rawValue))
            }
        case is CancellationError:
            return RemoteAuthError(.cancelled)
        default:
            // Its text may quote anything: only its type is kept.
            return RemoteAuthError(.invalidResponse("the backend threw \(type(of: error))"))
        }
    }
}

/// A Sign in with Apple authorization whose identity token passed every check (signature,
/// issuer, audience, expiry, nonce, subject): what ``SignInWithAppleBackend/Exchange`` receives.
///
/// ``description`` shows the user identifier only.
///
/// All operations are thread-safe.
public struct AppleIDAuthorization: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{

    /// The credential as Apple returned it.
    public let credential: AppleIDCredential

    /// The identity token, checked: send it to the backend, which checks it again.
    public let identityToken: String

    /// The authorization code, for the backend to redeem at Apple's token endpoint.
    public let authorizationCode: String

    /// The identity token's checked claims.
    public let claims: IDTokenClaims

    /// The user as Apple names it: `sub`, the name and the email shared.
    public let user: ManagedUser

    /// The user identifier only.
    public var description: String { "AppleIDAuthorization(user: \(credential.user))" }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror with the user identifier only.
    public var customMirror: Mirror {
        Mirror(self, children: ["user": credential.user], displayStyle: .struct)
    }
}
