import AuthSessionMocks
import Testing

/// Every test that needs the real authorization server, one at a time (a fault test stops and
/// restarts the server). Skipped, with the command that runs them, when no server is running.
@Suite(.serialized, .enabled(if: RealServer.isRunning, RealServer.skipNote))
struct RealServerTests {}

/// Says, in plain `swift test` output, that the real-server suite was skipped and how to run it.
@Test(.enabled(if: !RealServer.isRunning))
func realServerSuiteSkipped() {
    print("AuthSessionOAuth2IntegrationTests: the real-server suite was skipped (no server).")
    print("Run it with: \(OAuthTestServer.integrationCommand)")
}
