import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

/// The device flow through the session manager against the real server, approved as a person
/// would at the verification page.
extension RealServerTests {
    @Suite struct DeviceFlowManagerIntegrationTests {

        /// One `POST /o/token/` of the server's log, with its time.
        private struct LoggedRequest: Decodable {
            var grantType: String?
            var clientID: String?
            var time: Double

            private enum CodingKeys: String, CodingKey {
                case grantType = "grant_type"
                case clientID = "client_id"
                case time
            }
        }

        /// The device polls the server logged, in order, after the first `skipping` lines.
        private func devicePolls(skipping: Int) throws -> [LoggedRequest] {
            let server = try RealServer.require()
            let text = server.tokenRequestLog.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
            return text.split(separator: "\n").dropFirst(skipping).compactMap { line in
                try? JSONDecoder().decode(LoggedRequest.self, from: Data(line.utf8))
            }.filter { $0.grantType == "urn:ietf:params:oauth:grant-type:device_code" && $0.clientID == "test-device" }
        }

        private func logLineCount() throws -> Int {
            let server = try RealServer.require()
            let text = server.tokenRequestLog.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
            return text.split(separator: "\n").count
        }

        @Test func theManagerSignsInWithTheDeviceFlowPollingNoFasterThanTheInterval() async throws {
            let server = try RealServer.require()
            let service = try RealServer.service(role: "device", scope: ["openid", "read"])
            let folder = FileManager.default.temporaryDirectory
                .appendingPathComponent("device-flow-\(UUID().uuidString)", isDirectory: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let store = FileSessionStore(directory: folder)
            let provider = ManagedSessionProvider(
                store: store,
                remote: service,
                // Retries at once: if polling ran through it, polls would come back to back.
                retryPolicy: RetryPolicy(maximumRetries: 3, initialDelay: 0),
                configuration: .init(checksCredentialState: false)
            )
            let handle = AuthSessionHandle(sessionProvider: provider)
            await handle.waitUntilIdle()

            let skipped = try logLineCount()
            let authorization = try await service.startDeviceAuthorization()
            #expect(authorization.interval >= 1)
            let signIn = Task { try await provider.signIn(with: authorization) }

            // The person takes a while: three polls go unanswered first.
            let deadline = Date().addingTimeInterval(60)
            while try devicePolls(skipping: skipped).count < 3 {
                try #require(Date() < deadline, "the manager did not poll three times within 60 s")
                try await Task.sleep(nanoseconds: 50_000_000)
            }
            let browser = ScriptedBrowser(server: server)
            try await browser.signIn()
            try await browser.decide(userCode: authorization.userCode)

            let session = try await signIn.value
            #expect(session.user.identifier == "1", "the user came from userinfo")
            #expect(try store.load()?.accessToken == session.accessToken, "the session was stored")
            #expect(try await provider.validAccessToken() == session.accessToken)

            let polls = try devicePolls(skipping: skipped)
            #expect(polls.count >= 4)
            let gaps = zip(polls.dropFirst(), polls).map { $0.time - $1.time }
            // The log's times are when each answer was ready: allow a little for the server's
            // own jitter; back-to-back polls would be milliseconds apart.
            #expect(gaps.allSatisfy { $0 >= authorization.interval - 0.1 }, "poll gaps: \(gaps)")
            print(
                "Device flow through the manager: \(polls.count) polls, gaps \(gaps.map { String(format: "%.3f", $0) })"
            )
            try provider.signout(with: nil)
            _ = handle
        }
    }
}
