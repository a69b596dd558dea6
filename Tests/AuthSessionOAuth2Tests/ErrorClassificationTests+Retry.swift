import AuthSession
import AuthSessionMocks
import AuthSessionProviders
import Foundation
import Testing

@testable import AuthSessionOAuth2

extension ErrorClassificationTests {

    @Test(arguments: [
        (520, true), (524, true), (599, true), (501, false), (503, false), (505, false), (521, false), (522, false),
    ])
    func gatewayStatuses(status: Int, isUncertain: Bool) {
        #expect(RemoteAuthError(.httpStatus(status), statusCode: status).isOutcomeUncertain == isUncertain)
    }

    @Test func aRejectedAccessTokenIsNotRetriedAsItIs() {
        let error = RemoteAuthError(.accessTokenRejected, statusCode: 401)
        #expect(error.kind == .transient)
        #expect(!error.isRetryable, "the same token would be refused again: refresh first")
    }
}
