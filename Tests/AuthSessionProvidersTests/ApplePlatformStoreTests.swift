import AuthSession
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

@Suite("Backups and data protection: each file a store writes is kept out of backups and readable in the background")
struct FileSafeguardTests {

    @Test("iOS: out of backups, complete until first user authentication; macOS: out of backups; Linux: nothing")
    func decision() {
        #expect(
            FileSafeguards.decide(hasBackupExclusion: true, protectsFilesWhileLocked: true)
                == FileSafeguards(excludedFromBackup: true, protection: .completeUntilFirstUserAuthentication),
            "iOS"
        )
        #expect(
            FileSafeguards.decide(hasBackupExclusion: true, protectsFilesWhileLocked: false)
                == FileSafeguards(excludedFromBackup: true, protection: nil),
            "macOS: Time Machine and Migration Assistant restore Application Support onto another Mac"
        )
        #expect(FileSafeguards.decide(hasBackupExclusion: false, protectsFilesWhileLocked: false) == .none, "Linux")
        #if canImport(Darwin)
        #expect(FileSafeguards.platform.excludedFromBackup)
        #else
        #expect(FileSafeguards.platform == .none)
        #endif
    }

    /// What each application of the safeguards saw.
    struct Application: Sendable {
        let path: String
        let size: Int?
        let sessionFileBytes: Data?
    }

    /// A store whose safeguards (those of iOS) are recorded instead of applied; `fails` makes each
    /// application fail as a file system that refuses the attribute.
    static func recordingStore(
        in folder: TemporaryFolder,
        fails: Bool = false
    ) -> (FileSessionStore, ConcurrencySafeContainer<[Application]>) {
        let applications = ConcurrencySafeContainer<[Application]>([])
        let sessionPath = folder.path("session.json")
        let safeguarding = FileSafeguarding(
            safeguards: FileSafeguards(excludedFromBackup: true, protection: .completeUntilFirstUserAuthentication)
        ) { _, path throws(SessionStoreError) in
            let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
            applications.withLock {
                $0.append(
                    Application(
                        path: path,
                        size: size,
                        sessionFileBytes: FileManager.default.contents(atPath: sessionPath)
                    )
                )
            }
            if fails { throw .io(operation: "setAttributes(protectionKey)", path: path, code: EIO) }
        }
        return (FileSessionStore(directory: folder.url, safeguarding: safeguarding), applications)
    }

    @Test("every save applies them to its new file, empty, before it takes the session file's name")
    func everySave() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (store, applications) = Self.recordingStore(in: folder)
        try store.save(sampleSession(counter: 1))
        let afterFirst = FileManager.default.contents(atPath: store.fileURL.path)
        try store.save(sampleSession(counter: 2))
        try store.save(sampleSession(counter: 3))
        #expect(try store.load() == sampleSession(counter: 3))

        let session = applications.withLock { $0 }.filter { $0.path.contains(".session.json.tmp-") }
        #expect(session.count == 3, "each save, since a rename replaces the file and what was set on it")
        #expect(Set(session.map(\.path)).count == 3, "each time the new file")
        #expect(session.allSatisfy { $0.size == 0 }, "before a byte of the session is written to it")
        #expect(session.first?.sessionFileBytes == nil, "before the first file takes the name")
        #expect(session.dropFirst().first?.sessionFileBytes == afterFirst, "the stored session still the old one")
    }

    @Test("the lock file and each lease a refresh records get them too: a background refresh needs both")
    func lockAndLease() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (store, applications) = Self.recordingStore(in: folder)
        let now = Date().timeIntervalSince1970
        let lease = RefreshLease(
            owner: .inThisProcess(),
            startedAt: now,
            deadline: now + 30,
            refreshTokenFingerprint: "f"
        )
        try store.withExclusiveAccess { try store.saveLease(lease) }
        try store.withExclusiveAccess { try store.saveLease(lease) }
        let paths = applications.withLock { $0 }.map(\.path)
        #expect(paths.filter { $0 == folder.path("session.json.lock") }.count == 1, "the lock file, when opened")
        #expect(paths.filter { $0.contains("session.json.lease.tmp-") }.count == 2, "each lease's new file")
    }

    @Test("a safeguard that cannot be applied fails the save: the stored session unchanged, no file left beside it")
    func failureFailsTheSave() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try FileSessionStore(directory: folder.url).save(sampleSession(counter: 1))
        let (store, _) = Self.recordingStore(in: folder, fails: true)
        do {
            try store.save(sampleSession(counter: 2))
            Issue.record("the save succeeded without its safeguards")
        } catch .io(let operation, _, let code) {
            #expect(operation == "setAttributes(protectionKey)" && code == EIO)
        } catch {
            Issue.record("expected the safeguard's error, got \(error)")
        }
        #expect(try FileSessionStore(directory: folder.url).load() == sampleSession(counter: 1))
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
        #expect(!names.contains { $0.contains(".tmp-") }, "\(names)")
    }

    @Test("the errno a Foundation error carries; a volume that keeps no backup attribute is no failure")
    func foundationErrors() {
        let posix = NSError(domain: NSPOSIXErrorDomain, code: Int(EACCES))
        #expect(FileSystem.errnoCode(of: posix) == EACCES)
        let wrapped = NSError(domain: NSCocoaErrorDomain, code: 512, userInfo: [NSUnderlyingErrorKey: posix])
        #expect(FileSystem.errnoCode(of: wrapped) == EACCES)
        #expect(FileSystem.errnoCode(of: NSError(domain: NSCocoaErrorDomain, code: 512)) == EIO)

        let unsupported = NSError(domain: NSPOSIXErrorDomain, code: Int(ENOTSUP))
        #expect(FileSystem.backupExclusionError(unsupported, path: "/n/s") == nil, "a network volume: not backed up")
        #expect(
            FileSystem.backupExclusionError(posix, path: "/n/s")
                == .io(operation: "setResourceValues(isExcludedFromBackup)", path: "/n/s", code: EACCES)
        )
    }
}
