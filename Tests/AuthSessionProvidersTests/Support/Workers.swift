import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fresh private folder for one test, removed by `remove()`.
struct TemporaryFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("auth-session-store-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        chmod(url.path, 0o700)
    }

    /// The path of `name` inside the folder.
    func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    func remove() {
        // A folder a test made unwritable must be writable again to be removed.
        chmod(url.path, 0o700)
        try? FileManager.default.removeItem(at: url)
    }
}

/// The `SessionStoreWorker` executable the tests start, built beside the test bundle.
enum Worker {

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
            let url = folder.appendingPathComponent("SessionStoreWorker")
            if FileManager.default.isExecutableFile(atPath: url.path) {
                return url
            }
        }
        return nil
    }()

    /// Whether this process runs as root, where file permissions do not bind: a test of an
    /// unwritable folder then runs the worker as another user.
    static var isRoot: Bool { getuid() == 0 }
}

/// A running worker whose output is read line by line.
///
/// Not thread-safe: use from one thread.
final class WorkerProcess {
    let process = Process()
    private let output = Pipe()
    private var buffer = Data()

    /// Starts the worker with `arguments`.
    init(_ arguments: [String]) throws {
        guard let url = Worker.url else { throw CocoaError(.fileNoSuchFile) }
        process.executableURL = url
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = output
        try process.run()
    }

    /// The next line the worker printed, waiting for it; `nil` at the end of its output.
    func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
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

    /// Every line left, until the worker's output ends.
    func remainingLines() -> [String] {
        var lines: [String] = []
        while let line = readLine() {
            lines.append(line)
        }
        return lines
    }

    /// Kills the worker with `SIGKILL` and waits for it to be gone.
    func kill() {
        #if canImport(Glibc)
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        #else
        _ = Darwin.kill(process.processIdentifier, SIGKILL)
        #endif
        process.waitUntilExit()
    }

    /// Waits for the worker to exit and returns its status.
    func wait() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Runs `body` on a thread of its own (it blocks: it reads pipes and waits for processes) and
/// returns its result, without holding a thread of the cooperative pool.
func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Swift.Result { try body() })
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
}
