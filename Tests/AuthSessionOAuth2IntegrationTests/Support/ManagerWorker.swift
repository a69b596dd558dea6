import AuthSession
import AuthSessionMocks
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `SessionManagerWorker` executable (`Tests/SessionManagerWorker`), built beside the test
/// bundle, and what the tests do with it.
enum ManagerWorker {

    static let url: URL? = {
        var candidates: [URL] = []
        #if os(Linux)
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: executable).deletingLastPathComponent())
        }
        #endif
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        for folder in candidates {
            let url = folder.appendingPathComponent("SessionManagerWorker")
            if FileManager.default.isExecutableFile(atPath: url.path) {
                return url
            }
        }
        return nil
    }()

    /// Runs a worker to its end and returns its exit status and every line it printed.
    static func run(_ arguments: [String]) throws -> (status: Int32, lines: [String]) {
        let worker = try ManagerWorkerProcess(arguments)
        let lines = worker.remainingLines()
        return (worker.wait(), lines)
    }

    /// Runs `body` on a thread of its own (it blocks: it reads pipes, sleeps until a kill moment
    /// and waits for processes), without holding a thread of the cooperative pool.
    static func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Swift.Result { try body() })
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }
}

/// A running `SessionManagerWorker`: its output is read line by line, a line can be sent to its
/// standard input, and it can be killed.
///
/// A watchdog kills a worker still running after `deadline` seconds, so a hung worker fails its
/// test instead of hanging the suite.
///
/// Not thread-safe: use from one thread.
final class ManagerWorkerProcess {
    let process = Process()
    private let output = Pipe()
    private let input = Pipe()
    private var buffer = Data()
    /// The last lines read, oldest first, for a failure's report.
    private(set) var transcript: [String] = []

    /// Starts the worker with `arguments`.
    init(_ arguments: [String], deadline: TimeInterval = 120) throws {
        guard let url = ManagerWorker.url else { throw CocoaError(.fileNoSuchFile) }
        process.executableURL = url
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = output
        process.standardInput = input
        let exited = ConcurrencySafeContainer(false)
        process.terminationHandler = { _ in exited.withLock { $0 = true } }
        try process.run()
        let pid = process.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + deadline) {
            if !exited.withLock({ $0 }) {
                sendKill(to: pid)
            }
        }
    }

    /// The next line the worker printed, waiting for it; `nil` at the end of its output.
    func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                transcript.append(line)
                if transcript.count > 30 { transcript.removeFirst() }
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty {
                guard !buffer.isEmpty else { return nil }
                defer { buffer.removeAll() }
                return String(decoding: buffer, as: UTF8.self)
            }
            buffer.append(chunk)
        }
    }

    /// The complete lines the worker has printed and this reader has not consumed, read without
    /// waiting; they stay for the next reads.
    func peekBufferedLines() -> [String] {
        let descriptor = output.fileHandleForReading.fileDescriptor
        var polled = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        var chunk = [UInt8](repeating: 0, count: 4096)
        while poll(&polled, 1, 0) > 0, polled.revents & Int16(POLLIN) != 0 {
            let count = read(descriptor, &chunk, chunk.count)
            guard count > 0 else { break }
            buffer.append(contentsOf: chunk[0..<count])
        }
        guard let last = buffer.lastIndex(of: UInt8(ascii: "\n")) else { return [] }
        return String(decoding: buffer[buffer.startIndex..<last], as: UTF8.self)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// The lines up to and including the first that is `line` or a result; all of them if the
    /// output ends first.
    func lines(through line: String) -> [String] {
        var lines: [String] = []
        while let next = readLine() {
            lines.append(next)
            if next == line || next.hasPrefix("result ") { break }
        }
        return lines
    }

    /// Every line left, until the worker's output ends.
    func remainingLines() -> [String] {
        var lines: [String] = []
        while let line = readLine() {
            lines.append(line)
        }
        return lines
    }

    /// Writes `line` to the worker's standard input.
    func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Kills the worker with `SIGKILL` and waits for it to be gone.
    func kill() {
        sendKill(to: process.processIdentifier)
        process.waitUntilExit()
    }

    /// Waits for the worker to exit and returns its status (the signal's number if it was killed).
    func wait() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Sends `SIGKILL` to `pid`.
private func sendKill(to pid: pid_t) {
    #if canImport(Glibc)
    _ = Glibc.kill(pid, SIGKILL)
    #else
    _ = Darwin.kill(pid, SIGKILL)
    #endif
}

/// A private folder for one test's stores, removed by `remove()`.
struct ManagerWorkFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("auth-session-manager-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        chmod(url.path, 0o700)
    }

    /// The path of `name` inside the folder (not created: a store creates its folder, private).
    func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// A server of the project's script other than the one the suite runs against, with settings
/// of its own (a refresh grace period), in a state folder of its own; `stop()` ends it.
final class SecondServer: Sendable {
    let endpointsPath: String
    let description: OAuthTestServer
    let stateDir: String
    /// How long `scripts/oauth-test-server start` took.
    let startDuration: Duration

    /// Starts a server with `--grace-period gracePeriod` in a new state folder inside `folder`.
    init(gracePeriod: Int, in folder: ManagerWorkFolder) throws {
        stateDir = folder.path("server-grace-\(gracePeriod)")
        let logPath = folder.path("server-grace-\(gracePeriod)-start.log")
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        defer { try? log.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ServerScript.path)
        process.arguments = ["start", "--state-dir", stateDir, "--grace-period", "\(gracePeriod)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = log
        let clock = ContinuousClock()
        let started = clock.now
        try process.run()
        process.waitUntilExit()
        startDuration = started.duration(to: clock.now)
        guard process.terminationStatus == 0 else {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            Self.stop(stateDir: stateDir)
            throw ServerStartFailure(status: process.terminationStatus, log: String(text.suffix(2000)))
        }
        endpointsPath = stateDir + "/endpoints.json"
        do {
            description = try OAuthTestServer.load(from: endpointsPath)
        } catch {
            Self.stop(stateDir: stateDir)
            throw error
        }
    }

    /// Stops the server; nothing happens if it is not running.
    func stop() {
        Self.stop(stateDir: stateDir)
    }

    private static func stop(stateDir: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ServerScript.path)
        process.arguments = ["stop", "--state-dir", stateDir]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return }
        process.waitUntilExit()
    }
}

/// `scripts/oauth-test-server start` failed.
struct ServerStartFailure: Error, CustomStringConvertible {
    let status: Int32
    let log: String

    var description: String { "oauth-test-server start exited \(status):\n\(log)" }
}
