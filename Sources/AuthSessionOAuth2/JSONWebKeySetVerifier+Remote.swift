import AuthSession
import AuthSessionProviders
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension JSONWebKeySetVerifier {

    /// A verifier that fetches the issuer's key set from `jwksURI` (its `jwks_uri`) with
    /// `transport`, and keeps it as `JSONWebKeySetVerifier` describes: 24 hours, fetched again
    /// for an unknown `kid` at most once a minute.
    ///
    /// ```swift
    /// let apple = JSONWebKeySetVerifier(jwksURI: URL(string: "https://appleid.apple.com/auth/keys")!)
    /// ```
    ///
    /// The answer must be a 2xx JSON document (`application/json` or `application/jwk-set+json`)
    /// within `maximumResponseSize` bytes. Every failure of the fetch is transient: a network error as it is,
    /// anything else (a 403 from a firewall, a 404, an error object, a document that is no key set)
    /// as `RemoteAuthError.Reason.invalidResponse(_:)` naming it. The key set's URL says nothing
    /// about the user's session, so nothing it answers may read as "the session is over". (A URL
    /// that is neither `https` nor allowed `http` is refused before any request, as a
    /// misconfiguration.)
    ///
    /// - Parameters:
    ///   - jwksURI: The key set's URL: `https`, or `http` to loopback (or anywhere with
    ///     `allowsInsecureHTTP`).
    ///   - transport: The HTTP transport; a ``URLSessionTransport`` by default.
    ///   - clock: The clock the cache's ages run on.
    ///   - requestTimeout: Seconds the fetch may take; 30 by default.
    ///   - maximumResponseSize: The largest key set accepted, in bytes; 256 KiB by default.
    ///   - allowsInsecureHTTP: Whether plain `http` to other hosts than loopback is allowed.
    ///   - cacheLifetime: How long a fetched set is used; 24 hours by default, and never less than
    ///     `minimumRefetchInterval`.
    ///   - minimumRefetchInterval: The shortest time between two fetches for an unknown `kid`.
    public convenience init(
        jwksURI: URL,
        transport: any OAuth2HTTPTransport = URLSessionTransport(),
        clock: any AuthSessionClock = SystemClock(),
        requestTimeout: TimeInterval = 30,
        maximumResponseSize: Int = 256 * 1024,
        allowsInsecureHTTP: Bool = false,
        cacheLifetime: TimeInterval = 86_400,
        minimumRefetchInterval: TimeInterval = 60
    ) {
        self.init(clock: clock, cacheLifetime: cacheLifetime, minimumRefetchInterval: minimumRefetchInterval) {
            () throws(RemoteAuthError) -> JSONWebKeySet in
            try HTTPExchange.checkScheme(of: jwksURI, allowsInsecureHTTP: allowsInsecureHTTP)
            var request = URLRequest(
                url: jwksURI,
                cachePolicy: .reloadIgnoringLocalCacheData,
                timeoutInterval: requestTimeout > 0 && requestTimeout.isFinite ? requestTimeout : 30
            )
            request.setValue("application/jwk-set+json, application/json", forHTTPHeaderField: "Accept")
            let object: [String: JSONValue]
            do throws(RemoteAuthError) {
                object = try HTTPExchange.jsonObject(
                    from: try await transport.send(request, maximumResponseSize: maximumResponseSize)
                )
            } catch  where error.kind == .transient {
                throw error
            } catch {
                throw RemoteAuthError(.invalidResponse("key set: \(error)"), statusCode: error.statusCode)
            }
            do throws(JSONWebKeySetError) {
                return try JSONWebKeySet(jsonObject: object)
            } catch {
                throw RemoteAuthError(.invalidResponse("key set: \(error)"))
            }
        }
    }
}
