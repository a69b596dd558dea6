import AuthSession
import AuthSessionProviders
import Foundation

extension OAuth2ServerMetadata {

    /// Discovery that needs the server only once: the server's metadata comes from `cache` when it
    /// holds a copy for `issuer`, at once and without a request, and is fetched (and kept there)
    /// otherwise.
    ///
    /// - A copy fetched less than `maximumAge` ago is returned as it is.
    /// - An older copy (or one dated in the future: a clock set back) is returned as well, and a
    ///   background task fetches the metadata again and keeps it in `cache` for the next launch;
    ///   ``waitForBackgroundRefreshes()`` waits for it. A failed refresh leaves the copy as it was:
    ///   a launch with the server down still starts.
    /// - A copy for another issuer, and a cache that cannot be read (a corrupt or hostile file:
    ///   see ``DiscoveryCacheError``), count as no copy.
    /// - Without a copy, the metadata is fetched as by
    ///   ``discover(issuer:transport:timeout:allowsInsecureHTTP:)`` (each document's `issuer` must
    ///   equal `issuer`, OpenID Connect Discovery §4.3, or nothing is kept) and, once fetched, kept
    ///   in `cache`; with the server down it fails as that method does. A cache that cannot be
    ///   written fails nothing: the next launch asks the server again.
    ///
    /// - Parameters:
    ///   - issuer: The issuer URL.
    ///   - cache: Where the copy is kept; a ``FileDiscoveryCache`` beside the session store.
    ///   - maximumAge: Seconds after which a copy is refreshed in the background; a day by default.
    ///   - transport: The transport; a ``URLSessionTransport`` by default.
    ///   - timeout: The request timeout, in seconds.
    ///   - allowsInsecureHTTP: Whether plain `http` is allowed for hosts other than loopback.
    ///   - clock: The clock the copy's age is measured on.
    /// - Returns: The metadata.
    /// - Throws: `RemoteAuthError`, only when there is no copy: as
    ///   ``discover(issuer:transport:timeout:allowsInsecureHTTP:)``.
    public static func discover(
        issuer: URL,
        cache: any DiscoveryCache,
        maximumAge: TimeInterval = 86_400,
        transport: any OAuth2HTTPTransport = URLSessionTransport(),
        timeout: TimeInterval = 30,
        allowsInsecureHTTP: Bool = false,
        clock: any AuthSessionClock = SystemClock()
    ) async throws(RemoteAuthError) -> OAuth2ServerMetadata {
        try await discoverRefreshing(
            issuer: issuer,
            cache: cache,
            maximumAge: maximumAge,
            transport: transport,
            timeout: timeout,
            allowsInsecureHTTP: allowsInsecureHTTP,
            clock: clock
        ).metadata
    }

    /// Waits until every background refresh that
    /// ``discover(issuer:cache:maximumAge:transport:timeout:allowsInsecureHTTP:clock:)`` started
    /// has ended (kept its metadata, or failed). A command-line tool calls it before it exits, so
    /// that a stale copy is replaced for its next run; it waits as long as the refresh takes, at
    /// most the discovery's timeout for each request.
    public static func waitForBackgroundRefreshes() async {
        let refreshes = backgroundRefreshes.withLock { Array($0.values) }
        for refresh in refreshes {
            await refresh.value
        }
    }

    /// The background refreshes in flight, by number.
    private static let backgroundRefreshes = ConcurrencySafeContainer<[UInt64: Task<Void, Never>]>([:])
    private static let refreshCounter = ConcurrencySafeContainer<UInt64>(0)

    /// The discovery, and the background refresh it started, if any.
    static func discoverRefreshing(
        issuer: URL,
        cache: any DiscoveryCache,
        maximumAge: TimeInterval,
        transport: any OAuth2HTTPTransport,
        timeout: TimeInterval,
        allowsInsecureHTTP: Bool,
        clock: any AuthSessionClock
    ) async throws(RemoteAuthError) -> (metadata: OAuth2ServerMetadata, refresh: Task<Void, Never>?) {
        // A cache that cannot be read (corrupt, hostile, unavailable) is no copy: the server is asked.
        if let entry = try? cache.load(), normalized(entry.metadata.issuer) == normalized(issuer.absoluteString) {
            let age = clock.now.timeIntervalSince(entry.fetchedAt)
            guard age < 0 || age > maximumAge else { return (entry.metadata, nil) }
            let refresh = startBackgroundRefresh {
                guard
                    let metadata = try? await discover(
                        issuer: issuer,
                        transport: transport,
                        timeout: timeout,
                        allowsInsecureHTTP: allowsInsecureHTTP
                    )
                else { return }
                try? cache.save(DiscoveryCacheEntry(metadata: metadata, fetchedAt: clock.now))
            }
            return (entry.metadata, refresh)
        }
        let metadata = try await discover(
            issuer: issuer,
            transport: transport,
            timeout: timeout,
            allowsInsecureHTTP: allowsInsecureHTTP
        )
        // A cache that cannot be written fails nothing: the next launch asks the server again.
        try? cache.save(DiscoveryCacheEntry(metadata: metadata, fetchedAt: clock.now))
        return (metadata, nil)
    }

    /// Starts `body` in a detached task that ``waitForBackgroundRefreshes()`` waits for, and that
    /// removes itself from the list when it ends.
    private static func startBackgroundRefresh(_ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        let number = refreshCounter.withLock { counter in
            counter &+= 1
            return counter
        }
        // Under the lock: the task removes itself only after it was added.
        return backgroundRefreshes.withLock { refreshes in
            let refresh = Task.detached(priority: .utility) {
                await body()
                _ = backgroundRefreshes.withLock { $0.removeValue(forKey: number) }
            }
            refreshes[number] = refresh
            return refresh
        }
    }
}
