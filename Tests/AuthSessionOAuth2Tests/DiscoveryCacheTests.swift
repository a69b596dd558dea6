import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

@testable import AuthSessionOAuth2

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 27, item 1: discovery kept beside the session, so that a launch with a stored session
/// needs no network.
@Suite struct DiscoveryCacheTests {

    static let issuer = URL(string: "https://auth.example.com/o")!

    static func document(
        token: String = "https://auth.example.com/o/token/",
        issuer: String = issuer.absoluteString
    )
        -> String
    {
        """
        {"issuer": "\(issuer)", "token_endpoint": "\(token)",
         "authorization_endpoint": "https://auth.example.com/o/authorize/",
         "revocation_endpoint": "https://auth.example.com/o/revoke_token/",
         "userinfo_endpoint": "https://auth.example.com/o/userinfo/",
         "grant_types_supported": ["authorization_code", "refresh_token", "password"],
         "code_challenge_methods_supported": ["S256"],
         "authorization_response_iss_parameter_supported": true}
        """
    }

    /// The server: its discovery document at OpenID Connect's URL, tokens at the token endpoint.
    static func server(document: String = document()) -> StubTransport {
        StubTransport { request in
            switch request.url.absoluteString {
            case "https://auth.example.com/o/.well-known/openid-configuration":
                return .success(Fixture.json(200, document))
            case "https://auth.example.com/o/token/", "https://auth.example.com/o/token2/":
                return .success(Fixture.json(200, Fixture.tokenJSON()))
            case "https://auth.example.com/o/userinfo/": return .success(Fixture.json(200, #"{"sub": "user-42"}"#))
            default: return .success(OAuth2HTTPResponse(statusCode: 404))
            }
        }
    }

    /// The server down: every connection refused.
    static func down() -> StubTransport {
        StubTransport { _ in .failure(RemoteAuthError(.network(code: URLError.Code.cannotConnectToHost.rawValue))) }
    }

    static let metadata = OAuth2ServerMetadata(
        issuer: issuer.absoluteString,
        tokenEndpoint: URL(string: "https://auth.example.com/o/token/")!,
        authorizationEndpoint: URL(string: "https://auth.example.com/o/authorize/")!,
        revocationEndpoint: URL(string: "https://auth.example.com/o/revoke_token/")!,
        userInfoEndpoint: URL(string: "https://auth.example.com/o/userinfo/")!,
        grantTypesSupported: ["authorization_code", "refresh_token", "password"],
        codeChallengeMethodsSupported: ["S256"],
        authorizationResponseIssParameterSupported: true
    )

    /// A folder for one test, not created: the store and the cache create it private.
    private static func folder() -> URL {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("discovery-cache-\(UUID().uuidString)/store", isDirectory: true)
    }

    private static func remove(_ folder: URL) {
        try? FileManager.default.removeItem(at: folder.deletingLastPathComponent())
    }

    // MARK: The metadata in JSON

    @Test func metadataIsCodableWithTheServersMemberNames() throws {
        let decoded = try JSONDecoder().decode(OAuth2ServerMetadata.self, from: Data(Self.document().utf8))
        #expect(decoded == Self.metadata)
        let full = OAuth2ServerMetadata(
            issuer: "https://a.example",
            tokenEndpoint: URL(string: "https://a.example/token")!,
            authorizationEndpoint: URL(string: "https://a.example/authorize")!,
            revocationEndpoint: URL(string: "https://a.example/revoke")!,
            introspectionEndpoint: URL(string: "https://a.example/introspect")!,
            userInfoEndpoint: URL(string: "https://a.example/userinfo")!,
            deviceAuthorizationEndpoint: URL(string: "https://a.example/device")!,
            jwksURI: URL(string: "https://a.example/jwks")!,
            grantTypesSupported: ["refresh_token"],
            codeChallengeMethodsSupported: ["S256"],
            scopesSupported: ["openid"],
            authorizationResponseIssParameterSupported: true
        )
        let encoded = try JSONEncoder().encode(full)
        #expect(try JSONDecoder().decode(OAuth2ServerMetadata.self, from: encoded) == full)
        let object = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        #expect(object["token_endpoint"] as? String == "https://a.example/token")
        #expect(object["device_authorization_endpoint"] as? String == "https://a.example/device")
        let minimal = OAuth2ServerMetadata(issuer: "https://a.example", tokenEndpoint: full.tokenEndpoint)
        #expect(try JSONDecoder().decode(OAuth2ServerMetadata.self, from: JSONEncoder().encode(minimal)) == minimal)
    }

    // MARK: Launches

    @Test func theFirstLaunchDiscoversAndKeepsTheMetadata() async throws {
        let clock = ManualClock()
        let cache = InMemoryDiscoveryCache()
        let transport = Self.server()
        let metadata = try await OAuth2ServerMetadata.discover(
            issuer: Self.issuer,
            cache: cache,
            transport: transport,
            clock: clock
        )
        #expect(metadata == Self.metadata)
        #expect(cache.entry == DiscoveryCacheEntry(metadata: Self.metadata, fetchedAt: clock.now))
        #expect(!transport.requests.isEmpty)
    }

    @Test func aLaunchWithAFreshCopySendsNothing() async throws {
        let clock = ManualClock()
        let cache = InMemoryDiscoveryCache(
            DiscoveryCacheEntry(metadata: Self.metadata, fetchedAt: clock.now.addingTimeInterval(-3600))
        )
        let transport = Self.down()
        let (metadata, refresh) = try await OAuth2ServerMetadata.discoverRefreshing(
            issuer: URL(string: "https://auth.example.com/o/")!,
            cache: cache,
            maximumAge: 86_400,
            transport: transport,
            timeout: 30,
            allowsInsecureHTTP: false,
            clock: clock
        )
        #expect(metadata == Self.metadata)
        #expect(refresh == nil)
        #expect(transport.requests.isEmpty)
    }

    /// The issue's scenario: signed in once; the next launch, with the server down, builds its
    /// service from the file beside the session and serves the stored token.
    @Test func aRelaunchWithTheServerDownServesTheStoredToken() async throws {
        let folder = Self.folder()
        defer { Self.remove(folder) }
        let clock = ManualClock()

        // First launch: discovery, then a sign-in.
        do {
            let store = FileSessionStore(directory: folder)
            let service = try await OAuth2Service.discover(
                issuer: Self.issuer,
                client: OAuth2Client(id: Fixture.clientID),
                cache: FileDiscoveryCache(beside: store),
                transport: Self.server(),
                clock: clock
            )
            let provider = ManagedSessionProvider(
                store: store,
                remote: service,
                clock: clock,
                configuration: .init(activationSignal: ManualActivationSignal())
            )
            try await provider.signIn(with: .password(username: "ada", password: "pw"))
            await provider.waitUntilIdle()
        }
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("oauth-discovery.json").path))

        // Second launch, the server down.
        let transport = Self.down()
        let store = FileSessionStore(directory: folder)
        let service = try await OAuth2Service.discover(
            issuer: Self.issuer,
            client: OAuth2Client(id: Fixture.clientID),
            cache: FileDiscoveryCache(beside: store),
            transport: transport,
            clock: clock
        )
        #expect(service.configuration.endpoints.token == Self.metadata.tokenEndpoint)
        #expect(service.configuration.requiresIssuerInAuthorizationResponse)
        let provider = ManagedSessionProvider(
            store: store,
            remote: service,
            clock: clock,
            configuration: .init(checksCredentialState: false, activationSignal: ManualActivationSignal())
        )
        let handle = AuthSessionHandle(
            sessionProvider: provider,
            biometricAuthenticator: MockBiometricAuthenticator(),
            activationSignal: ManualActivationSignal(),
            clock: clock
        )
        #expect(handle.sessionStatus.isSignedIn)
        #expect(try await provider.validAccessToken() == Fixture.accessToken)
        #expect(transport.requests.isEmpty, "\(transport.requests.map(\.url))")
        await provider.waitUntilIdle()
    }

    @Test func aStaleCopyIsServedAndRefreshedInTheBackground() async throws {
        let clock = ManualClock()
        let old = DiscoveryCacheEntry(metadata: Self.metadata, fetchedAt: clock.now.addingTimeInterval(-2 * 86_400))
        let cache = InMemoryDiscoveryCache(old)
        let transport = Self.server(document: Self.document(token: "https://auth.example.com/o/token2/"))
        let (metadata, refresh) = try await OAuth2ServerMetadata.discoverRefreshing(
            issuer: Self.issuer,
            cache: cache,
            maximumAge: 86_400,
            transport: transport,
            timeout: 30,
            allowsInsecureHTTP: false,
            clock: clock
        )
        #expect(metadata == Self.metadata, "the copy, at once")
        try await #require(refresh).value
        #expect(cache.entry?.metadata.tokenEndpoint.absoluteString == "https://auth.example.com/o/token2/")
        #expect(cache.entry?.fetchedAt == clock.now)
    }

    @Test func aCopyDatedInTheFutureIsRefreshed() async throws {
        let clock = ManualClock()
        let cache = InMemoryDiscoveryCache(
            DiscoveryCacheEntry(metadata: Self.metadata, fetchedAt: clock.now.addingTimeInterval(30 * 86_400))
        )
        let (_, refresh) = try await OAuth2ServerMetadata.discoverRefreshing(
            issuer: Self.issuer,
            cache: cache,
            maximumAge: 86_400,
            transport: Self.server(),
            timeout: 30,
            allowsInsecureHTTP: false,
            clock: clock
        )
        try await #require(refresh).value
        #expect(cache.entry?.fetchedAt == clock.now)
    }

    @Test func aStaleCopyStaysWhenTheRefreshFails() async throws {
        let clock = ManualClock()
        let old = DiscoveryCacheEntry(metadata: Self.metadata, fetchedAt: clock.now.addingTimeInterval(-2 * 86_400))
        for transport in [
            Self.down(),
            Self.server(document: Self.document(issuer: "https://evil.example/o")),
        ] {
            let cache = InMemoryDiscoveryCache(old)
            let metadata = try await OAuth2ServerMetadata.discover(
                issuer: Self.issuer,
                cache: cache,
                transport: transport,
                clock: clock
            )
            #expect(metadata == Self.metadata)
            await OAuth2ServerMetadata.waitForBackgroundRefreshes()
            #expect(!transport.requests.isEmpty, "a refresh was tried")
            #expect(cache.entry == old)
        }
    }

    @Test func aCopyForAnotherIssuerIsIgnored() async throws {
        let clock = ManualClock()
        var other = Self.metadata
        other.issuer = "https://evil.example/o"
        other.tokenEndpoint = URL(string: "https://evil.example/o/token/")!
        let cache = InMemoryDiscoveryCache(DiscoveryCacheEntry(metadata: other, fetchedAt: clock.now))
        let metadata = try await OAuth2ServerMetadata.discover(
            issuer: Self.issuer,
            cache: cache,
            transport: Self.server(),
            clock: clock
        )
        #expect(metadata == Self.metadata)
        #expect(cache.entry?.metadata == Self.metadata, "replaced by the server's")

        let down = await #expect(throws: RemoteAuthError.self) {
            try await OAuth2ServerMetadata.discover(
                issuer: Self.issuer,
                cache: InMemoryDiscoveryCache(DiscoveryCacheEntry(metadata: other, fetchedAt: clock.now)),
                transport: Self.down(),
                clock: clock
            )
        }
        #expect(down?.kind == .transient, "without a copy of its own, discovery fails as without a cache")
    }

    // MARK: The file

    @Test func theFileIsPrivateAndRoundTrips() throws {
        let folder = Self.folder()
        defer { Self.remove(folder) }
        let cache = FileDiscoveryCache(directory: folder)
        #expect(try cache.load() == nil)
        let entry = DiscoveryCacheEntry(
            metadata: Self.metadata,
            fetchedAt: Date(timeIntervalSince1970: 1_700_000_000.5)
        )
        try cache.save(entry)
        #expect(try cache.load() == entry)
        var info = stat()
        #expect(lstat(cache.fileURL.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(lstat(folder.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(leftovers == ["oauth-discovery.json"])
    }

    /// What a corrupt or hostile file can be: each is a typed error from `load()`, never a crash;
    /// discovery then asks the server and the save replaces it.
    @Test(arguments: [
        "garbage", "wrongTypes", "anotherVersion", "notAURL", "huge", "worldWritable", "symbolicLink", "directory",
    ])
    func anUnusableFileIsIgnoredAndReplaced(kind: String) async throws {
        let folder = Self.folder()
        defer { Self.remove(folder) }
        let cache = FileDiscoveryCache(directory: folder)
        try cache.save(DiscoveryCacheEntry(metadata: Self.metadata, fetchedAt: Date()))
        let path = cache.fileURL.path
        let secretish = "hunter2-not-to-be-logged"
        func write(_ text: String) throws {
            try FileManager.default.removeItem(atPath: path)
            #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: nil))
            chmod(path, 0o600)
        }
        let fresh = #"{"version": 1, "fetched_at": 1, "metadata": \#(Self.document())}"#
        switch kind {
        case "garbage": try write("\(secretish) {{{")
        case "wrongTypes":
            try write(fresh.replacingOccurrences(of: #""fetched_at": 1"#, with: #""fetched_at": "\#(secretish)""#))
        case "anotherVersion": try write(fresh.replacingOccurrences(of: #""version": 1"#, with: #""version": 2"#))
        case "notAURL":
            try write(
                fresh.replacingOccurrences(of: "https://auth.example.com/o/token/", with: "http://[\(secretish)")
            )
        case "huge": try write(String(repeating: " ", count: FileDiscoveryCache.maximumFileSize + 1) + fresh)
        case "worldWritable":
            try write(fresh)
            chmod(path, 0o666)
        case "symbolicLink":
            try FileManager.default.removeItem(atPath: path)
            let target = folder.appendingPathComponent("elsewhere.json").path
            #expect(FileManager.default.createFile(atPath: target, contents: Data(fresh.utf8)))
            chmod(target, 0o600)
            #expect(symlink(target, path) == 0)
        default:
            try FileManager.default.removeItem(atPath: path)
            #expect(mkdir(path, 0o700) == 0)
        }

        let error = #expect(throws: DiscoveryCacheError.self) { try cache.load() }
        #expect(error.map { !"\($0)".contains(secretish) } ?? false, "\(String(describing: error))")
        switch error {
        case .corrupt?: #expect(["garbage", "wrongTypes", "anotherVersion", "notAURL", "huge"].contains(kind))
        case .file(.insecurePermissions)?: #expect(kind == "worldWritable")
        case .file(.symbolicLink)?: #expect(kind == "symbolicLink")
        case .file(.notARegularFile)?: #expect(kind == "directory")
        default: Issue.record("\(kind): \(String(describing: error))")
        }
        if kind == "directory" { return }  // not replaced by a rename: asked for again at each launch

        let transport = Self.server()
        let metadata = try await OAuth2ServerMetadata.discover(issuer: Self.issuer, cache: cache, transport: transport)
        #expect(metadata == Self.metadata)
        #expect(!transport.requests.isEmpty, "fetched")
        #expect(try cache.load()?.metadata == Self.metadata, "replaced")
    }
}
