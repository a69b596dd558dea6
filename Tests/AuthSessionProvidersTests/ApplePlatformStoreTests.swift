import Foundation
import Testing

@testable import AuthSessionProviders

@Suite("Keychain statuses: each documented OSStatus and the store error it becomes")
struct KeychainStatusTests {

    /// What each status means for a session store, written from Apple's descriptions of the codes.
    static let unavailable: Set<Int32> = [-25_308, -25_291, -25_315, -25_320]

    @Test(
        "every documented status has a name, a meaning and a mapped error",
        arguments: Array(KeychainStatus.documented.keys)
    )
    func everyStatus(status: KeychainStatus) {
        let name = status.name ?? ""
        #expect(name.hasPrefix("errSec"))
        #expect(status.description.hasPrefix("\(name) (\(status.rawValue)): "))
        let error = status.sessionStoreError(operation: "SecItemCopyMatching")
        switch error {
        case .unavailable(let reason):
            #expect(Self.unavailable.contains(status.rawValue), "\(name) must not say 'unavailable'")
            #expect(reason.contains(name), "the reason names the status")
        case .missingEntitlement(let operation):
            #expect(status.rawValue == -34_018)
            #expect(operation == "SecItemCopyMatching")
        case .keychain(let operation, let raw):
            #expect(!Self.unavailable.contains(status.rawValue) && status.rawValue != -34_018)
            #expect(operation == "SecItemCopyMatching" && raw == status.rawValue)
            #expect(error.description.contains(name), "the message names the status: \(error)")
        default:
            Issue.record("\(name) became \(error)")
        }
    }

    @Test("the statuses the store acts on have Apple's values")
    func actedOn() {
        #expect(KeychainStatus.success.rawValue == 0)
        #expect(
            KeychainStatus.itemNotFound.name == "errSecItemNotFound" && KeychainStatus.itemNotFound.rawValue == -25_300
        )
        #expect(
            KeychainStatus.duplicateItem.name == "errSecDuplicateItem"
                && KeychainStatus.duplicateItem.rawValue == -25_299
        )
        #expect(KeychainStatus.interactionNotAllowed.name == "errSecInteractionNotAllowed")
        #expect(KeychainStatus.notAvailable.name == "errSecNotAvailable")
        #expect(KeychainStatus.missingEntitlement.name == "errSecMissingEntitlement")
        #expect(KeychainStatus.interactionRequired.name == "errSecInteractionRequired")
        #expect(KeychainStatus.inDarkWake.name == "errSecInDarkWake")
        #expect(
            Set(KeychainStatus.documented.values.map(\.name)).count == KeychainStatus.documented.count,
            "one name each"
        )
    }

    @Test("an undocumented status is a keychain error that shows its number")
    func undocumented() {
        let error = KeychainStatus(-67_000).sessionStoreError(operation: "SecItemAdd")
        #expect(error == .keychain(operation: "SecItemAdd", status: -67_000))
        #expect(error.description.contains("OSStatus -67000"))
    }
}

@Suite("Durable writes: F_FULLFSYNC where it exists, fsync where it is refused")
struct FileSynchronizeTests {

    /// Records each call and answers from a script.
    final class Calls: @unchecked Sendable {
        // @unchecked: used from the test's own thread only.
        var log: [String] = []
        var full: [Int32]
        var file: [Int32]

        init(full: [Int32] = [], file: [Int32] = []) {
            self.full = full
            self.file = file
        }

        func fullSynchronize(_: Int32) -> Int32 {
            log.append("F_FULLFSYNC")
            return full.isEmpty ? 0 : full.removeFirst()
        }

        func fileSynchronize(_: Int32) -> Int32 {
            log.append("fsync")
            return file.isEmpty ? 0 : file.removeFirst()
        }
    }

    @Test("F_FULLFSYNC that succeeds is enough; one interrupted is retried")
    func fullSynchronizeSucceeds() throws {
        let calls = Calls(full: [EINTR, EINTR, 0])
        try FileSystem.synchronize(
            3,
            path: "/x",
            fullSynchronize: calls.fullSynchronize,
            fileSynchronize: calls.fileSynchronize
        )
        #expect(calls.log == ["F_FULLFSYNC", "F_FULLFSYNC", "F_FULLFSYNC"])
    }

    @Test(
        "F_FULLFSYNC not supported by the file system: fsync instead",
        arguments: [ENOTSUP, EOPNOTSUPP, ENOTTY, EINVAL]
    )
    func fullSynchronizeUnsupported(code: Int32) throws {
        let calls = Calls(full: [code])
        try FileSystem.synchronize(
            3,
            path: "/x",
            fullSynchronize: calls.fullSynchronize,
            fileSynchronize: calls.fileSynchronize
        )
        #expect(calls.log == ["F_FULLFSYNC", "fsync"])
    }

    @Test(
        "F_FULLFSYNC that fails otherwise (an I/O error) is the error: an fsync after it proves nothing",
        arguments: [EIO, ENOSPC, EBADF]
    )
    func fullSynchronizeFails(code: Int32) {
        let calls = Calls(full: [code])
        #expect(throws: SessionStoreError.io(operation: "fcntl(F_FULLFSYNC)", path: "/x", code: code)) {
            try FileSystem.synchronize(
                3,
                path: "/x",
                fullSynchronize: calls.fullSynchronize,
                fileSynchronize: calls.fileSynchronize
            )
        }
        #expect(calls.log == ["F_FULLFSYNC"])
    }

    @Test("no F_FULLFSYNC (Linux): fsync, retried when interrupted; its failure is the error")
    func fsyncOnly() {
        let calls = Calls(file: [EINTR, EIO])
        #expect(throws: SessionStoreError.io(operation: "fsync", path: "/x", code: EIO)) {
            try FileSystem.synchronize(3, path: "/x", fullSynchronize: nil, fileSynchronize: calls.fileSynchronize)
        }
        #expect(calls.log == ["fsync", "fsync"])
        #if canImport(Darwin)
        #expect(FileSystem.platformFullSynchronize != nil)
        #else
        #expect(FileSystem.platformFullSynchronize == nil)
        #endif
    }
}

@Suite("Opening a store's file: data protection on Apple platforms is 'unavailable', never 'no session'")
struct FileOpenErrorTests {

    @Test("EPERM where data protection answers it: unavailable; elsewhere an I/O error")
    func dataProtection() {
        let apple = FileSystem.openError(EPERM, path: "/s/session.json", refusesProtectedFilesWithEPERM: true)
        guard case .unavailable(let reason) = apple else {
            Issue.record("EPERM on Apple platforms must be unavailable, got \(apple)")
            return
        }
        #expect(reason.contains("/s/session.json") && reason.contains("unlocked"))
        #expect(
            FileSystem.openError(EPERM, path: "/s/session.json", refusesProtectedFilesWithEPERM: false)
                == .io(operation: "open", path: "/s/session.json", code: EPERM)
        )
        #if canImport(UIKit) && !targetEnvironment(macCatalyst)
        #expect(FileSystem.refusesProtectedFilesWithEPERM, "iOS: data protection")
        #else
        #expect(!FileSystem.refusesProtectedFilesWithEPERM, "Linux and macOS: EPERM is a lasting denial")
        #endif
    }

    @Test("a symbolic link is refused; other codes are I/O errors on every platform", arguments: [true, false])
    func otherCodes(appleRules: Bool) {
        #expect(
            FileSystem.openError(ELOOP, path: "/l", refusesProtectedFilesWithEPERM: appleRules)
                == .symbolicLink(path: "/l")
        )
        for code in [EACCES, ENOSPC, EIO, EROFS] {
            #expect(
                FileSystem.openError(code, path: "/f", refusesProtectedFilesWithEPERM: appleRules)
                    == .io(operation: "open", path: "/f", code: code)
            )
        }
    }
}
