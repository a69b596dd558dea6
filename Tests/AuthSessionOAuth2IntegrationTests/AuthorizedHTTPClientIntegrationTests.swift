import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The request authorizer against the real server's protected userinfo endpoint: a token the
/// server no longer accepts, 100 concurrent requests, one refresh.
extension RealServerTests {
    @Suite struct AuthorizedHTTPClientIntegrationTests {

        static let concurrentRequests = 100

        /// A manager signed in to the real server with `openid` (userinfo needs it), on a manual
        /// clock that never moves: its tokens look fresh to it, so nothing but a 401 refreshes.
        private func signedInManager() async throws -> (
            ManagedSessionProvider, AuthSessionHandle<ManagedSessionProvider>
        ) {
            let server = try RealServer.require()
            let service = try RealServer.service(role: "password", scope: ["openid", "profile", "email", "read"])
            return try await makeSignedInManager(
                remote: service,
                username: server.user.username,
                password: server.user.password
            )
        }

        /// Sends `concurrentRequests` userinfo requests at once through `client`.
        private func userInfoBurst(
            _ client: AuthorizedHTTPClient
        ) async throws -> [Result<(Data, HTTPURLResponse), AuthorizedRequestError>] {
            let url = try RealServer.require().endpoints.userinfo
            return await withTaskGroup(of: Result<(Data, HTTPURLResponse), AuthorizedRequestError>.self) { group in
                for _ in 0..<Self.concurrentRequests {
                    group.addTask {
                        do throws(AuthorizedRequestError) {
                            return .success(try await client.data(for: URLRequest(url: url)))
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                var results: [Result<(Data, HTTPURLResponse), AuthorizedRequestError>] = []
                for await result in group { results.append(result) }
                return results
            }
        }

        private func refreshRequestCount() throws -> Int {
            try RealServer.tokenRequests().filter { $0.grantType == "refresh_token" }.count
        }

        @Test("an access token expired at the server: 100 concurrent userinfo requests, one refresh, all succeed")
        func expiredAtTheServer() async throws {
            let (provider, handle) = try await signedInManager()
            defer { withExtendedLifetime(handle) {} }
            let session = URLSession(configuration: .ephemeral)
            defer { session.finishTasksAndInvalidate() }
            let client = AuthorizedHTTPClient(provider: provider, session: session)
            let old = try #require(provider.session?.accessToken)
            // Warm: the token works.
            let (_, warm) = try await client.data(for: URLRequest(url: try RealServer.require().endpoints.userinfo))
            #expect(warm.statusCode == 200)
            let refreshesBefore = try refreshRequestCount()

            // The server stops accepting the access token; the refresh token stays good. (Revoking
            // the access token at /o/revoke_token/ revokes its refresh token too on this server: see
            // revokedAtTheServer.)
            try ServerDatabase.expireAccessToken(old)

            let results = try await withSafetyNet { try await userInfoBurst(client) }

            let refreshes = try refreshRequestCount() - refreshesBefore
            let succeeded = results.filter { (try? $0.get().1.statusCode) == 200 }.count
            let subjects = Set(results.compactMap { try? Self.subject(of: $0.get().0) })
            #expect(refreshes == 1, "one refresh reached the token endpoint")
            #expect(succeeded == Self.concurrentRequests)
            #expect(subjects == ["1"])
            #expect(provider.session?.accessToken != old)
            let line =
                "authorizer: \(Self.concurrentRequests) concurrent requests to /o/userinfo/ after the access token "
                + "was expired at the server: \(refreshes) refresh request(s) reached /o/token/, \(succeeded) of "
                + "\(Self.concurrentRequests) answered 200"
            print(line)
            try ResultFile.write(line, to: "authorizer.txt")
        }

        @Test("an access token revoked at the server (its refresh token with it): one refresh, which ends the session")
        func revokedAtTheServer() async throws {
            let (provider, handle) = try await signedInManager()
            defer { withExtendedLifetime(handle) {} }
            let service = try RealServer.service(role: "password")
            let session = URLSession(configuration: .ephemeral)
            defer { session.finishTasksAndInvalidate() }
            let client = AuthorizedHTTPClient(provider: provider, session: session)
            let old = try #require(provider.session?.accessToken)
            let refreshesBefore = try refreshRequestCount()

            try await service.revoke(old, kind: .accessToken)

            let results = try await withSafetyNet { try await userInfoBurst(client) }

            let refreshes = try refreshRequestCount() - refreshesBefore
            let ended = results.filter {
                guard case .failure(.session(let error)) = $0 else { return false }
                return error.endsSession
            }
            #expect(refreshes == 1, "one refresh reached the token endpoint")
            #expect(ended.count == Self.concurrentRequests, "every request gets the session's end")
            #expect(provider.session == nil)
            let line =
                "authorizer: \(Self.concurrentRequests) concurrent requests to /o/userinfo/ after the access token "
                + "was revoked at /o/revoke_token/ (which revokes its refresh token too): \(refreshes) refresh "
                + "request(s) reached /o/token/, \(ended.count) of \(Self.concurrentRequests) failed with the "
                + "session's end"
            print(line)
            try ResultFile.write(line, to: "authorizer-revoked.txt")
        }

        private static func subject(of body: Data) throws -> String? {
            try (JSONSerialization.jsonObject(with: body) as? [String: Any])?["sub"] as? String
        }
    }
}

/// The server's database, for what no endpoint does: expire an access token while its refresh
/// token stays good (revocation and deletion end both on this server).
enum ServerDatabase {

    static func expireAccessToken(_ token: String) throws {
        let server = try RealServer.require()
        let stateDir = try #require(server.stateDir, "the endpoints file names no state folder")
        let script = """
            import hashlib, sqlite3, sys
            db = sqlite3.connect(sys.argv[1], timeout=30)
            checksum = hashlib.sha256(sys.stdin.read().encode()).hexdigest()
            rows = db.execute("UPDATE oauth2_provider_accesstoken SET expires = '2000-01-01 00:00:00' "
                              "WHERE token_checksum = ?", (checksum,)).rowcount
            db.commit()
            sys.exit(0 if rows == 1 else 3)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, stateDir + "/db.sqlite3"]
        let input = Pipe()
        process.standardInput = input
        try process.run()
        // The token goes through a pipe, never a command line another process could read.
        input.fileHandleForWriting.write(Data(token.utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "expiring the access token exited \(process.terminationStatus)")
    }
}

/// A result line for the lead to quote, in `.build/`.
enum ResultFile {
    static func write(_ line: String, to name: String) throws {
        let url = URL(fileURLWithPath: ServerScript.path)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build").appendingPathComponent(name)
        try Data((line + "\n").utf8).write(to: url)
    }
}
