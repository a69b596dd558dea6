import AuthSession
import AuthSessionInterface
import Foundation

// Sessions from the tokens the backend issued.
extension ManagedSessionProvider {

    // MARK: - Sessions from tokens

    /// A session from issued tokens: a refresh keeps what the server did not send again (the
    /// refresh token of a non-rotating server, the ID token, the scope, profile fields); a
    /// sign-in merges profile fields from the last known user with the same subject (rule 7).
    func makeSession(
        from tokens: IssuedTokens,
        now: Date,
        previous: ManagedSession?,
        knownUser: ManagedUser?
    ) -> ManagedSession {
        let issued = tokens.user ?? previous?.user ?? ManagedUser(identifier: "")
        let user = knownUser.map { Self.merge(issued, over: $0) } ?? issued
        let lifetime = tokens.expiresIn ?? configuration.assumedTokenLifetime
        return ManagedSession(
            accessToken: tokens.accessToken,
            refreshToken: tokens.refreshToken ?? previous?.refreshToken,
            idToken: tokens.idToken ?? previous?.idToken,
            tokenType: tokens.tokenType,
            scope: tokens.scope?.joined(separator: " ") ?? previous?.scope,
            expiresAt: now.timeIntervalSince1970 + lifetime,
            issuedAt: now.timeIntervalSince1970,
            user: user,
            isBiometricAuthenticationEnabled: previous?.isBiometricAuthenticationEnabled ?? false,
            // A sign-in starts a lineage; a refresh keeps its session's.
            lineage: previous == nil ? ManagedSession.newLineage() : previous?.lineage,
            // Where the tokens came from: this backend's (a session stored before the package
            // recorded it gains it with its first refresh here).
            origin: previous?.origin ?? remote.sessionOrigin
        )
    }

    /// `new` with the fields it lacks taken from `known`, when both are the same subject.
    static func merge(_ new: ManagedUser, over known: ManagedUser) -> ManagedUser {
        guard new.identifier == known.identifier else { return new }
        return ManagedUser(
            identifier: new.identifier,
            name: new.name ?? known.name,
            email: new.email ?? known.email,
            profile: known.profile.merging(new.profile) { _, newer in newer }
        )
    }
}
