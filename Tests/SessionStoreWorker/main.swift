// A process for the file store's crash and cross-process tests. Not a product: the tests start
// it, read what it prints, and kill it.
//
//   SessionStoreWorker save-loop <folder>                 saves sessions 1, 2, 3, ... until killed,
//                                                          printing "writing n" before each save
//                                                          and "saved n" after it
//   SessionStoreWorker increment <folder> <count>         <count> exclusive read-modify-write
//                                                          increments of the stored counter
//   SessionStoreWorker save <folder> <n>                  one save of session n
//   SessionStoreWorker load <folder>                      prints the loaded counter, "none", or
//                                                          the error
//   SessionStoreWorker hold-and-stop <folder>             takes the exclusive access, prints
//                                                          "holding" and stops itself (SIGSTOP)
//   SessionStoreWorker gated-launch <folder>              launches a session manager and a handle
//                                                          over the stored session with this
//                                                          platform's default biometric gate (on
//                                                          Linux one that cannot prompt, as a
//                                                          widget cannot), prints the handle's
//                                                          status, whether it requires manual
//                                                          authentication, and what the store holds
//   SessionStoreWorker as-user <uid> <gid> <command ...>  drops to that user first (the tests run
//                                                          as root on CI, where permissions do
//                                                          not bind)

import AuthSession
import AuthSessionProviders
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Session number `n`: its counter in the profile, its tokens padded to a realistic size.
func session(_ n: Int) -> ManagedSession {
    let padding = String(repeating: "x", count: 900)
    return ManagedSession(
        accessToken: "access-\(n)-\(padding)",
        refreshToken: "refresh-\(n)-\(padding)",
        idToken: "id-\(n)",
        scope: "openid profile",
        expiresAt: 1_800_003_600,
        issuedAt: 1_800_000_000,
        user: ManagedUser(identifier: "worker", name: "Worker", profile: ["counter": "\(n)"])
    )
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func counter(of session: ManagedSession?) -> Int {
    session.flatMap { Int($0.user.profile["counter"] ?? "") } ?? 0
}

func run(_ arguments: [String]) throws {
    guard arguments.count >= 2 else { throw CocoaError(.featureUnsupported) }
    let command = arguments[0]
    let store = FileSessionStore(directory: URL(fileURLWithPath: arguments[1], isDirectory: true))
    switch command {
    case "save-loop":
        var n = counter(of: try store.load())
        while true {
            n += 1
            say("writing \(n)")
            try store.save(session(n))
            say("saved \(n)")
        }
    case "increment":
        let count = Int(arguments[2]) ?? 0
        for _ in 0..<count {
            try store.withExclusiveAccess {
                let current = try store.load()
                var next = current ?? session(0)
                next.user.profile["counter"] = "\(counter(of: current) + 1)"
                try store.save(next)
            }
        }
        say("done")
    case "save":
        try store.save(session(Int(arguments[2]) ?? 0))
        say("saved")
    case "load":
        do {
            say(try store.load().map { "\(counter(of: $0))" } ?? "none")
        } catch {
            say("error: \(error)")
        }
    case "hold-and-stop":
        // Stops itself inside the store's exclusive access, as a process the system suspends or a
        // debugger stops there would be; the test sends SIGCONT or SIGKILL.
        try store.withExclusiveAccess {
            say("holding")
            raise(SIGSTOP)
        }
        say("released")
    case "gated-launch":
        try gatedLaunch(store)
    default:
        throw CocoaError(.featureUnsupported)
    }
}

/// A backend this process never reaches: the stored session is valid, so nothing is asked of it.
struct UnreachableRemote: RemoteAuthService {
    func obtainTokens(with grant: AuthGrant) async throws(RemoteAuthError) -> IssuedTokens {
        throw RemoteAuthError(.network(code: -1009))
    }
    func refresh(_ refreshToken: String, scope: [String]?) async throws(RemoteAuthError) -> IssuedTokens {
        throw RemoteAuthError(.network(code: -1009))
    }
    func revoke(_ token: String, kind: TokenKind) async throws(RemoteAuthError) {
        say("revoked \(kind)")
        throw RemoteAuthError(.network(code: -1009))
    }
    func credentialState(for session: ManagedSession) async throws(RemoteAuthError) -> CredentialState {
        .authorized
    }
}

/// A launch as an extension that cannot prompt makes it: the default handle of this platform.
func gatedLaunch(_ store: FileSessionStore) throws {
    let provider = ManagedSessionProvider(
        store: store,
        remote: UnreachableRemote(),
        configuration: .init(checksCredentialState: false, revokesOnSignOut: true)
    )
    let handle = AuthSessionHandle(sessionProvider: provider)
    let done = DispatchSemaphore(value: 0)
    Task {
        await handle.waitUntilIdle()
        await handle.waitForBiometricPrompt()
        await provider.waitUntilIdle()
        await handle.waitUntilIdle()
        done.signal()
    }
    done.wait()
    say("status \(handle.sessionStatus) manual \(handle.isManualAuthenticationRequired)")
    say("stored \(try store.load().map { "\(counter(of: $0))" } ?? "none")")
}

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "as-user", arguments.count >= 4, let uid = UInt32(arguments[1]), let gid = UInt32(arguments[2]) {
    guard setgroups(0, nil) == 0, setgid(gid) == 0, setuid(uid) == 0 else {
        say("error: cannot drop to user \(uid): errno \(errno)")
        exit(2)
    }
    arguments = Array(arguments.dropFirst(3))
}
do {
    try run(arguments)
} catch {
    say("error: \(error)")
    exit(1)
}
