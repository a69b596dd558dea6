import Foundation

/// Checks that an ID token was signed by its issuer.
///
/// The package's own is ``JSONWebKeySetVerifier``: RS256 and ES256 with the issuer's JWK Set,
/// cached and fetched again for a key it does not know. Replace it with your own (a hardware
/// security module, a platform API, a pinned key) by conforming to this protocol; the OAuth
/// client and the Sign in with Apple service call it for every ID token before they use its
/// claims.
///
/// Conformers must be thread-safe; calls may overlap.
public protocol IDTokenSignatureVerifier: Sendable {

    /// Returns if `token`'s signature is valid; throws otherwise.
    ///
    /// - Parameter token: The token, split and decoded.
    /// - Throws: ``RemoteAuthError``: ``RemoteAuthError/Reason/invalidIDToken(_:)`` with
    ///   `IDTokenValidationError.invalidSignature`, `IDTokenValidationError.unknownSigningKey(keyID:)`,
    ///   `IDTokenValidationError.keyAlgorithmMismatch(keyID:keyAlgorithm:tokenAlgorithm:)` or
    ///   `IDTokenValidationError.unsupportedAlgorithm(_:)` when the token is not the issuer's;
    ///   a transient error (the network) when the keys cannot be had right now, which says
    ///   nothing about the token.
    func verifySignature(of token: JSONWebSignature) async throws(RemoteAuthError)
}
