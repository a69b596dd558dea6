import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Figures between processes: the bench starts copies of itself as peers (`auth-session-bench
/// peer ...`), which share a store with it, and talks to them over pipes.
enum CrossProcessBenchmarks {

    // MARK: - Notice

    /// A store's change notice from this process to a peer, and the peer's answer back (it loads
    /// the store and prints the save's number), vs the same save seen by a bare inotify loop in a
    /// peer that answers the same way. Both peers run for the whole row; samples interleave. A
    /// peer answers every batch of notices with the newest number it finds, so a late answer to an
    /// earlier save is skipped, never mistaken for the one awaited.
    static func noticeRoundTrip(repetitions: Int) -> (result: Comparison.Result, note: String)? {
        #if os(Linux)
        let folder = temporaryFolder("notice")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = FileSessionStore(directory: URL(fileURLWithPath: folder), synchronizesWrites: false)
        do {
            try store.save(ManagerBenchmarks.session(expiresIn: 86_400))
            let notifier = try Peer(["peer", "notice-notifier", folder])
            let bare = try Peer(["peer", "notice-bare", folder])
            defer {
                notifier.stop()
                bare.stop()
            }
            let rounds = 200
            var counter = 0
            func sample(_ peer: Peer) -> Double {
                peer.discardWaitingOutput()
                return nanoseconds {
                    for _ in 0..<rounds {
                        counter += 1
                        var session = ManagerBenchmarks.session(expiresIn: 86_400)
                        session.user.profile["n"] = "\(counter)"
                        try? store.save(session)
                        peer.awaitSeen(counter)
                    }
                } / Double(rounds)
            }
            let comparison = Comparison(
                name: "notice to another process",
                subjectLabel: "save → InotifyChangeNotifier peer → answer",
                baselineLabel: "save → bare inotify peer → answer",
                unit: "ns/notice",
                operations: 1,
                goal: 2,
                subject: {},
                baseline: {}
            )
            return (
                ManagerBenchmarks.measureSamples(
                    comparison,
                    repetitions: repetitions,
                    subject: { sample(notifier) },
                    baseline: { sample(bare) }
                ),
                "\(rounds) round trips per sample; both peers watch the same folder; the save is not fsync'd"
            )
        } catch {
            FileHandle.standardError.write(Data("auth-session-bench: notice: \(error)\n".utf8))
            return nil
        }
        #else
        return nil
        #endif
    }

    // MARK: - Four processes, one refresh

    /// Four peer processes on one file store all calling `refresh()` at the same moment (an agreed
    /// wall-clock instant), vs one peer doing it alone, against a real server: the time from that
    /// instant to the last peer's answer, and how many refresh requests the server saw.
    static func fourProcessRefresh(
        server: OAuthTestServer,
        endpoints: String,
        samples: Int
    ) throws -> (
        result: Comparison.Result, note: String
    ) {
        let root = temporaryFolder("refresh")
        defer { try? FileManager.default.removeItem(atPath: root) }
        var round = 0
        var requestCounts: [Int] = []
        func sample(processes: Int) throws -> Double {
            round += 1
            let folder = "\(root)/\(round)"
            let signIn = try Peer(["peer", "sign-in", endpoints, folder])
            signIn.awaitLine("signed-in")
            signIn.stop()
            let peers = try (0..<processes).map { _ in try Peer(["peer", "refresh", endpoints, folder]) }
            defer {
                for peer in peers { peer.stop() }
            }
            for peer in peers { peer.awaitLine("ready") }
            let before = refreshRequests(in: server)
            let start = Date().timeIntervalSince1970 + 0.02
            for peer in peers { peer.send(String(format: "go %.6f", start)) }
            var finished = start
            for peer in peers {
                peer.awaitLine("refreshed")
                finished = max(finished, TimeInterval(peer.lastLine.dropFirst(10)) ?? .infinity)
            }
            if processes > 1 { requestCounts.append(refreshRequests(in: server) - before) }
            return (finished - start) * 1e9
        }
        var subjectSamples = Samples()
        var baselineSamples = Samples()
        _ = try sample(processes: 1)
        _ = try sample(processes: 4)
        requestCounts = []
        for _ in 0..<samples {
            baselineSamples.append(try sample(processes: 1))
            subjectSamples.append(try sample(processes: 4))
        }
        let comparison = Comparison(
            name: "4 processes refreshing at once",
            subjectLabel: "4 peers on one store: refresh() together",
            baselineLabel: "1 peer: refresh() alone",
            unit: "ns",
            operations: 1,
            goal: 1.2,
            subject: {},
            baseline: {}
        )
        let counts = Dictionary(grouping: requestCounts) { $0 }.mapValues(\.count)
            .sorted { $0.key < $1.key }.map { "\($0.value)× \($0.key)" }.joined(separator: ", ")
        return (
            Comparison.Result(comparison: comparison, subject: subjectSamples, baseline: baselineSamples),
            "\(samples) samples each, against \(server.issuer); refresh requests the server saw per 4-peer sample: \(counts)"
        )
    }

    private static func refreshRequests(in server: OAuthTestServer) -> Int {
        let text = server.tokenRequestLog.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
        return text.split(separator: "\n").filter { $0.contains("\"refresh_token\"") }.count
    }

    private static func temporaryFolder(_ name: String) -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("auth-session-bench-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        mkdir(path, 0o700)
        return path
    }

    // MARK: - Peers

    /// Runs `auth-session-bench peer <role> ...` in a peer process; returns when it ends.
    static func runPeer(_ arguments: [String]) -> Never {
        guard let role = arguments.first else { exit(2) }
        switch role {
        case "notice-notifier" where arguments.count == 2:
            let store = FileSessionStore(directory: URL(fileURLWithPath: arguments[1]))
            guard let notifier = store.changeNotifier else { exit(2) }
            let observation = notifier.observe { acknowledge(store) }
            say("ready")
            waitForEndOfInput()
            observation.cancel()
        case "notice-bare" where arguments.count == 2:
            #if os(Linux)
            bareInotify(folder: arguments[1])
            #endif
        case "sign-in" where arguments.count == 3:
            let provider = manager(endpoints: arguments[1], folder: arguments[2])
            let server = loadServer(arguments[1])
            let done = DispatchSemaphore(value: 0)
            Task {
                do {
                    try await provider.signIn(
                        with: .password(username: server.user.username, password: server.user.password)
                    )
                    say("signed-in")
                } catch {
                    say("failed \(error)")
                }
                done.signal()
            }
            done.wait()
        case "refresh" where arguments.count == 3:
            let provider = manager(endpoints: arguments[1], folder: arguments[2])
            let handle = AuthSessionHandle(sessionProvider: provider)
            guard handle.sessionStatus == .signedIn else {
                say("failed no session")
                exit(1)
            }
            say("ready")
            // "go <t>": refresh at wall-clock time t (seconds since 1970), the same instant for every
            // peer, then say when it was done.
            guard let go = readLine(), let start = TimeInterval(go.dropFirst(3)) else { exit(2) }
            let wait = start - Date().timeIntervalSince1970
            if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
            let done = DispatchSemaphore(value: 0)
            Task {
                do {
                    _ = try await provider.refresh()
                    say("refreshed \(String(format: "%.6f", Date().timeIntervalSince1970))")
                } catch {
                    say("failed \(error)")
                }
                done.signal()
            }
            done.wait()
            withExtendedLifetime(handle) {}
        default:
            exit(2)
        }
        exit(0)
    }

    private static func loadServer(_ endpoints: String) -> OAuthTestServer {
        guard let server = try? OAuthTestServer.load(from: endpoints) else { exit(2) }
        return server
    }

    private static func manager(endpoints: String, folder: String) -> ManagedSessionProvider {
        let server = loadServer(endpoints)
        guard let client = server.clients["password"], let secret = client.clientSecret else { exit(2) }
        let service = OAuth2Service(
            configuration: OAuth2Configuration(
                issuer: server.issuer,
                endpoints: OAuth2Endpoints(token: server.endpoints.token),
                client: OAuth2Client(id: client.clientId, authentication: .clientSecretBasic(secret: secret))
            )
        )
        var configuration = ManagerBenchmarks.configuration(checksCredentialState: false)
        configuration.revokesOnSignOut = false
        return ManagedSessionProvider(
            store: FileSessionStore(directory: URL(fileURLWithPath: folder)),
            remote: service,
            configuration: configuration
        )
    }

    private static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Prints the number of the save the store holds.
    private static func acknowledge(_ store: FileSessionStore) {
        let seen = (try? store.load())?.user.profile["n"] ?? "0"
        say("seen \(seen)")
    }

    private static func waitForEndOfInput() {
        while readLine() != nil {}
    }

    #if os(Linux)
    /// The baseline: one inotify instance on the folder, a blocking read, and an acknowledgement
    /// per batch that names the session file (as `InotifyChangeNotifier` filters).
    private static func bareInotify(folder: String) {
        let store = FileSessionStore(directory: URL(fileURLWithPath: folder))
        let descriptor = inotify_init1(Int32(IN_CLOEXEC))
        let mask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE
        guard descriptor >= 0, inotify_add_watch(descriptor, folder, UInt32(mask)) >= 0 else { exit(2) }
        let input = Thread {
            waitForEndOfInput()
            exit(0)
        }
        input.start()
        say("ready")
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { exit(1) }
            var offset = 0
            var concerned = false
            let headerSize = MemoryLayout<inotify_event>.size
            while offset + headerSize <= count {
                let length = buffer.withUnsafeBytes {
                    Int($0.loadUnaligned(fromByteOffset: offset, as: inotify_event.self).len)
                }
                let name = buffer[(offset + headerSize)..<(offset + headerSize + length)].prefix { $0 != 0 }
                if name.elementsEqual("session.json".utf8) { concerned = true }
                offset += headerSize + length
            }
            if concerned { acknowledge(store) }
        }
    }
    #endif
}

/// A peer process: its standard input and output are pipes to the bench.
final class Peer {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: Peer.executable)
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        if arguments.count > 1, arguments[1].hasPrefix("notice") {
            awaitLine("ready")
        }
    }

    static let executable: String = {
        #if os(Linux)
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
        #endif
        return CommandLine.arguments[0]
    }()

    func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Reads until a line starting with `prefix`; stops the bench if the peer fails.
    func awaitLine(_ prefix: String) {
        while true {
            let text = readLine()
            lastLine = text
            if text.hasPrefix(prefix) { return }
            if text.hasPrefix("failed") { fatalError("a peer failed: \(text)") }
        }
    }

    /// Reads until the peer says it has seen save `number` or a later one.
    func awaitSeen(_ number: Int) {
        while true {
            let line = readLine()
            if line.hasPrefix("seen "), let seen = Int(line.dropFirst(5)), seen >= number { return }
        }
    }

    /// Reads whatever the peer printed and nobody read, without waiting.
    func discardWaitingOutput() {
        let descriptor = output.fileHandleForReading.fileDescriptor
        var polled = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        var chunk = [UInt8](repeating: 0, count: 4096)
        while poll(&polled, 1, 0) > 0, polled.revents & Int16(POLLIN) != 0 {
            guard read(descriptor, &chunk, chunk.count) > 0 else { return }
        }
        pending = []
    }

    private var pending: [UInt8] = []
    private(set) var lastLine = ""

    private func readLine() -> String {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(output.fileHandleForReading.fileDescriptor, &chunk, chunk.count)
            guard count > 0 else { fatalError("a peer ended") }
            pending.append(contentsOf: chunk[0..<count])
        }
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
