import AuthSessionInterface
import Testing

/// A status whose five answers are chosen freely, to test the protocol's derived query alone.
private struct FlagStatus: AuthSessionStatusProtocol {
    var isSyncing: Bool
    var isSignedIn: Bool
    var isSignedOut: Bool
    var isValidating: Bool
    var isBiometricAuthentication: Bool
}

@Suite("AuthSessionStatusProtocol")
struct AuthSessionStatusProtocolTests {

    /// All 32 combinations of the five queries.
    static let combinations: [FlagStatusArguments] = (0..<32).map { FlagStatusArguments(bits: $0) }

    @Test("isLoadingStatus is syncing OR validating OR biometric, for every combination", arguments: combinations)
    func isLoadingStatusForEveryCombination(_ arguments: FlagStatusArguments) {
        let status = arguments.status
        let expected = status.isSyncing || status.isValidating || status.isBiometricAuthentication
        #expect(status.isLoadingStatus == expected)
    }

    @Test("signed in and signed out alone are not loading")
    func settledStatusesAreNotLoading() {
        #expect(FlagStatusArguments(bits: 0b00010).status.isLoadingStatus == false)
        #expect(FlagStatusArguments(bits: 0b00100).status.isLoadingStatus == false)
        #expect(FlagStatusArguments(bits: 0).status.isLoadingStatus == false)
    }
}

/// One combination of the five Boolean queries, named by its bits (syncing is bit 0).
struct FlagStatusArguments: Sendable, CustomTestStringConvertible {
    let bits: Int

    fileprivate var status: FlagStatus {
        FlagStatus(
            isSyncing: bits & 1 != 0,
            isSignedIn: bits & 2 != 0,
            isSignedOut: bits & 4 != 0,
            isValidating: bits & 8 != 0,
            isBiometricAuthentication: bits & 16 != 0
        )
    }

    var testDescription: String {
        let names = ["syncing", "signedIn", "signedOut", "validating", "biometric"]
        let set = names.indices.filter { bits & (1 << $0) != 0 }.map { names[$0] }
        return set.isEmpty ? "none" : set.joined(separator: "+")
    }
}
