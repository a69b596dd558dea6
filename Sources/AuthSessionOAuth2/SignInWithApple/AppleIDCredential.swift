import AuthSessionProviders
import Foundation

/// What a Sign in with Apple authorization returns, as a portable value: the fields of
/// `ASAuthorizationAppleIDCredential` (`init(_:)` makes one from it on Apple platforms), which
/// ``SignInWithAppleService`` checks and exchanges for a session.
///
/// Apple sends ``fullName`` and ``email`` on the first authorization of a user for the app only;
/// later ones carry neither. The session manager keeps them from the first (see
/// ``SignInWithAppleService``).
///
/// ``description`` shows the user identifier and which fields are present; never the identity
/// token, the authorization code, the name or the email.
///
/// All operations are thread-safe.
public struct AppleIDCredential: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{

    /// Whether Apple thinks the user is a real person (`ASUserDetectionStatus`).
    ///
    /// All operations are thread-safe.
    public enum RealUserStatus: Int, Sendable, Hashable, CaseIterable {

        /// Not supported on this platform or for this request (`unsupported`, 0).
        case unsupported = 0

        /// Apple cannot tell (`unknown`, 1).
        case unknown = 1

        /// Very likely a real person (`likelyReal`, 2).
        case likelyReal = 2

        /// The status of `ASUserDetectionStatus`'s raw value; ``unknown`` for a value Apple may add.
        ///
        /// - Parameter rawValue: `ASUserDetectionStatus.rawValue`.
        public init(detectionStatusRawValue rawValue: Int) {
            self = RealUserStatus(rawValue: rawValue) ?? .unknown
        }
    }

    /// The stable user identifier Apple gives this app (the identity token's `sub`).
    public var user: String

    /// The identity token, a JWT Apple signed (`ASAuthorizationAppleIDCredential.identityToken`,
    /// as UTF-8 text).
    public var identityToken: String?

    /// The short-lived, single-use authorization code, for the app's backend to redeem at Apple.
    public var authorizationCode: String?

    /// The name the user shared, on the first authorization only.
    public var fullName: PersonNameComponents?

    /// The email the user shared (perhaps a private relay address), on the first authorization
    /// only.
    public var email: String?

    /// Whether Apple thinks the user is real.
    public var realUserStatus: RealUserStatus

    /// The `state` the request carried, returned as it was.
    public var state: String?

    /// Creates a credential.
    ///
    /// - Parameters:
    ///   - user: The stable user identifier.
    ///   - identityToken: The identity token.
    ///   - authorizationCode: The authorization code.
    ///   - fullName: The name, if shared.
    ///   - email: The email, if shared.
    ///   - realUserStatus: Whether Apple thinks the user is real.
    ///   - state: The request's `state`.
    public init(
        user: String,
        identityToken: String?,
        authorizationCode: String?,
        fullName: PersonNameComponents? = nil,
        email: String? = nil,
        realUserStatus: RealUserStatus = .unsupported,
        state: String? = nil
    ) {
        self.user = user
        self.identityToken = identityToken
        self.authorizationCode = authorizationCode
        self.fullName = fullName
        self.email = email
        self.realUserStatus = realUserStatus
        self.state = state
    }

    /// A credential from the raw fields of `ASAuthorizationAppleIDCredential`, as Apple gives
    /// them: what `init(_:)` passes on Apple platforms, and what tests drive on any.
    ///
    /// - The identity token and the authorization code are UTF-8 `Data`: bytes that are not UTF-8,
    ///   or none, give `nil`.
    /// - Apple hands later sign-ins a `fullName` whose parts are all `nil` (or empty): that is no
    ///   name, `nil`, so it never hides the one the first sign-in shared. An empty email is none
    ///   too.
    ///
    /// - Parameters:
    ///   - user: `user`.
    ///   - identityTokenData: `identityToken`.
    ///   - authorizationCodeData: `authorizationCode`.
    ///   - fullName: `fullName`.
    ///   - email: `email`.
    ///   - realUserStatusRawValue: `realUserStatus.rawValue`.
    ///   - state: `state`.
    public init(
        user: String,
        identityTokenData: Data?,
        authorizationCodeData: Data?,
        fullName: PersonNameComponents?,
        email: String?,
        realUserStatusRawValue: Int,
        state: String?
    ) {
        func text(_ data: Data?) -> String? {
            guard let data, !data.isEmpty else { return nil }
            return String(bytes: data, encoding: .utf8)
        }
        self.init(
            user: user,
            identityToken: text(identityTokenData),
            authorizationCode: text(authorizationCodeData),
            fullName: fullName.flatMap(Self.sharedName),
            email: email.flatMap { $0.isEmpty ? nil : $0 },
            realUserStatus: RealUserStatus(detectionStatusRawValue: realUserStatusRawValue),
            state: state
        )
    }

    /// `name` with its empty parts removed, or `nil` when no part is left.
    static func sharedName(_ name: PersonNameComponents) -> PersonNameComponents? {
        var shared = PersonNameComponents()
        var hasPart = false
        for (_, path) in nameParameters {
            if let part = name[keyPath: path], !part.isEmpty {
                shared[keyPath: path] = part
                hasPart = true
            }
        }
        return hasPart ? shared : nil
    }

    /// The user identifier and which fields are present.
    public var description: String {
        var present: [String] = []
        if identityToken != nil { present.append("identityToken") }
        if authorizationCode != nil { present.append("authorizationCode") }
        if fullName != nil { present.append("fullName") }
        if email != nil { present.append("email") }
        return "AppleIDCredential(user: \(user), \(present.joined(separator: "+")), \(realUserStatus))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror with ``description``'s fields only.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "user": user, "hasIdentityToken": identityToken != nil,
                "hasAuthorizationCode": authorizationCode != nil,
                "hasFullName": fullName != nil, "hasEmail": email != nil, "realUserStatus": realUserStatus,
            ],
            displayStyle: .struct
        )
    }
}
