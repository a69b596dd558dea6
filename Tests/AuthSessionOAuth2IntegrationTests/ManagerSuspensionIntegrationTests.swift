import AuthSession
import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Processes sharing one file store, against the real server: change notices between them, and
/// one of them suspended (`SIGSTOP`, what iOS does to a suspended app) in the middle of a refresh.
extension RealServerTests {
    @Suite struct ManagerSuspensionIntegrationTests {

        private func endpointsPath() throws -> String {
            try #require(ProcessInfo.processInfo.environment[OAuthTestServer.environmentVariable])
        }

        @Test("notices: a sign-out and a rotation in one process reach another's handle, 200 trials each")
        func noticeLatency() async throws {
            try #require(ManagerWorker.url != nil, "the SessionManagerWorker executable is built with the tests")
            let endpoints = try endpointsPath()
            let folder = try ManagerWorkFolder()
            defer { folder.remove() }
            let storeFolder = folder.path("store")
            let report = try await ManagerWorker.onOwnThread { () throws -> NoticeReport in
                let app = try ManagerWorkerProcess(["serve", endpoints, storeFolder], deadline: 900)
                let widget = try ManagerWorkerProcess(["serve", endpoints, storeFolder], deadline: 900)
                defer {
                    app.send("quit")
                    widget.send("quit")
                    _ = app.wait()
                    _ = widget.wait()
                }
                _ = try app.line { $0.hasPrefix("ready") }
                _ = try widget.line { $0.hasPrefix("ready") }
                var report = NoticeReport()

                // Rotations: the app refreshes; the widget adopts without a request.
                app.send("sign-in")
                _ = try app.line { $0.hasPrefix("signed-in") }
                widget.send("relaunch")
                guard holdsSession(try widget.line(where: { $0.hasPrefix("ready") })) else {
                    throw WorkerFailure(lines: ["the widget did not restore the app's session"])
                }
                for _ in 0..<200 {
                    app.send("refresh")
                    let answer = try app.line { $0.hasPrefix("refresh") }
                    guard answer.hasPrefix("refreshed "), let digest = answer.split(separator: " ").last else {
                        throw WorkerFailure(lines: [answer])
                    }
                    let written = try modificationTime(of: storeFolder + "/session.json")
                    let heard = try widget.line { $0.hasPrefix("event updated") && $0.hasSuffix(" \(digest)") }
                    report.rotation.append(try time(in: heard, field: 2) - written)
                }

                // Sign-outs: the app signs out; the widget's handle hears it.
                for _ in 0..<200 {
                    app.send("sign-in")
                    _ = try app.line { $0.hasPrefix("signed-in") }
                    widget.send("relaunch")
                    guard holdsSession(try widget.line(where: { $0.hasPrefix("ready") })) else {
                        throw WorkerFailure(lines: ["the widget did not restore the app's session"])
                    }
                    app.send("sign-out")
                    let done = try app.line { $0.hasPrefix("signed-out-done") }
                    let heard = try widget.line { $0.hasPrefix("event signed-out") }
                    #expect(heard.contains("signedOutElsewhere"), "\(heard)")
                    report.signOut.append(try time(in: heard, field: 2) - (try time(in: done, field: 1)))
                }
                return report
            }
            print(report.summary)
            try NoticeReport.write(report.summary)
            #expect(report.signOut.count == 200 && report.rotation.count == 200)
            let signOutP99 = report.percentile(99, of: report.signOut)
            let rotationP99 = report.percentile(99, of: report.rotation)
            #expect(signOutP99 < 0.25, "\(report.summary)")
            #expect(rotationP99 < 0.25, "\(report.summary)")
        }

        @Test("suspension: 4 processes, one stopped with SIGSTOP (or killed) mid-refresh 50 times")
        func suspendedMidRefresh() async throws {
            try #require(ManagerWorker.url != nil, "the SessionManagerWorker executable is built with the tests")
            let endpoints = try endpointsPath()
            let folder = try ManagerWorkFolder()
            defer { folder.remove() }
            let storeFolder = folder.path("store")
            let leaseSeconds = 4.0
            let report = try await ManagerWorker.onOwnThread { () throws -> SuspensionReport in
                try SuspensionReport.measure(
                    endpoints: endpoints,
                    storeFolder: storeFolder,
                    leaseSeconds: leaseSeconds
                )
            }
            print(report.details)
            try SuspensionReport.write(report.summary)
            #expect(report.rounds == 50)
            #expect(report.problems.isEmpty, "\(report.problems.prefix(5))")
            #expect(report.longestSynchronousCall < 0.05, "a synchronous call blocked: \(report.summary)")
            #expect(report.longestTokenRead < 0.05, "a valid-token read blocked: \(report.summary)")
            #expect(report.presentedTwiceWhileLeaseLive == 0, "\(report.summary)")
            #expect(report.stoppedLost == 0, "a process stopped within its lease lost the session: \(report.summary)")
            #expect(report.waitedForStoppedOwner > 0, "no round stopped the owner while it held its lease")
        }
    }
}

// MARK: - Reports

struct NoticeReport: Sendable {
    var signOut: [TimeInterval] = []
    var rotation: [TimeInterval] = []

    func percentile(_ p: Double, of values: [TimeInterval]) -> TimeInterval {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .infinity }
        let index = min(sorted.count - 1, max(0, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1))
        return sorted[index]
    }

    var summary: String {
        func ms(_ value: TimeInterval) -> String { String(format: "%.1f ms", value * 1000) }
        return "notices between processes (\(signOut.count) sign-outs, \(rotation.count) rotations): "
            + "sign-out p50 \(ms(percentile(50, of: signOut))), p99 \(ms(percentile(99, of: signOut))); "
            + "rotation adopted p50 \(ms(percentile(50, of: rotation))), p99 \(ms(percentile(99, of: rotation)))"
    }

    static func write(_ summary: String) throws {
        try writeResult(summary, to: "notice-latency.txt")
    }
}

/// 50 rounds: a process refreshes and is stopped (`SIGSTOP`) at a random moment of it, or killed
/// (`SIGKILL`, every tenth round); the three others meanwhile answer synchronous calls and token
/// reads, and one of them refreshes too; then the stopped one is continued (`SIGCONT`) within its
/// lease, or the killed one relaunched.
struct SuspensionReport: Sendable {
    var rounds = 0
    var stoppedRounds = 0
    var killedRounds = 0
    /// Rounds where the stopped process held a lease (recorded, not yet cleared) when it stopped.
    var stoppedHoldingLease = 0
    /// Rounds where another process's refresh waited for the stopped owner and ended after it
    /// was continued.
    var waitedForStoppedOwner = 0
    var stoppedLost = 0
    var killedLost = 0
    var presentedTwiceWhileLeaseLive = 0
    var presentedTwiceAfterKill = 0
    var longestSynchronousCall: TimeInterval = 0
    var longestTokenRead: TimeInterval = 0
    var synchronousCalls = 0
    var problems: [String] = []
    var window: Double = 0

    var summary: String {
        func ms(_ value: TimeInterval) -> String { String(format: "%.1f ms", value * 1000) }
        return "suspension (4 processes, lease 4 s): SIGSTOP \(stoppedRounds) rounds "
            + "(\(stoppedHoldingLease) while holding the lease, \(waitedForStoppedOwner) with another process's "
            + "refresh waiting for it), lost \(stoppedLost), refresh tokens presented twice while a lease was live "
            + "\(presentedTwiceWhileLeaseLive); SIGKILL \(killedRounds) rounds, lost \(killedLost), presented twice "
            + "after the kill \(presentedTwiceAfterKill); \(synchronousCalls) synchronous calls and token reads "
            + "during the stops, longest \(ms(longestSynchronousCall)) (sync) and \(ms(longestTokenRead)) (token)"
    }

    var details: String { summary + "; kill window 0-\(String(format: "%.1f", window * 1000)) ms" }

    static func write(_ summary: String) throws {
        try writeResult(summary, to: "suspension.txt")
    }

    static func measure(endpoints: String, storeFolder: String, leaseSeconds: Double) throws -> SuspensionReport {
        var report = SuspensionReport()
        let arguments = ["serve", endpoints, storeFolder, "--lease", "\(leaseSeconds)"]
        var workers = try (0..<4).map { _ in try ManagerWorkerProcess(arguments, deadline: 1200) }
        defer {
            for worker in workers {
                worker.send("quit")
                _ = worker.wait()
            }
        }
        for worker in workers { _ = try worker.line { $0.hasPrefix("ready") } }

        func signInEveryone() throws {
            workers[0].send("sign-in")
            let answer = try workers[0].line { $0.hasPrefix("sign") }
            guard answer.hasPrefix("signed-in") else { throw WorkerFailure(lines: [answer]) }
            for worker in workers.dropFirst() {
                worker.send("relaunch")
                let ready = try worker.line { $0.hasPrefix("ready") }
                guard holdsSession(ready) else { throw WorkerFailure(lines: [ready]) }
            }
        }
        try signInEveryone()

        // The refresh's duration, for the window the stops are drawn from.
        var measured: [TimeInterval] = []
        for _ in 0..<6 {
            let start = Date()
            workers[0].send("refresh")
            _ = try workers[0].line { $0.hasPrefix("refresh") }
            measured.append(Date().timeIntervalSince(start))
        }
        report.window = (measured.dropFirst().max() ?? 0.05) * 1.2
        let leasePath = storeFolder + "/session.json.lease"

        var random = SystemRandomNumberGenerator()
        for round in 0..<50 {
            let victimIndex = round % 4
            let victim = workers[victimIndex]
            let others = workers.indices.filter { $0 != victimIndex }.map { workers[$0] }
            let kills = round % 10 == 9
            let logStart = try RealServer.tokenRequests().count

            victim.send("refresh")
            // The stop moment is the random variable: a time into the refresh, not a wait for anything.
            usleep(UInt32(Double.random(in: 0...report.window, using: &random) * 1_000_000))
            let pid = victim.process.processIdentifier
            _ = kill(pid, kills ? SIGKILL : SIGSTOP)
            let leaseAtStop = FileManager.default.fileExists(atPath: leasePath)
            if kills {
                // Reaped at once: a killed process that is not yet waited for still has its pid.
                _ = victim.wait()
            }

            // The others keep answering, at once.
            for other in others {
                other.send("sync")
                let sync = try other.line { $0.hasPrefix("sync") }
                report.longestSynchronousCall = max(report.longestSynchronousCall, try milliseconds(in: sync) / 1000)
                other.send("token")
                let token = try other.line { $0.hasPrefix("token") }
                if token.hasPrefix("token-failed") {
                    report.problems.append("round \(round): a token read failed while a process was stopped: \(token)")
                } else {
                    report.longestTokenRead = max(report.longestTokenRead, try milliseconds(in: token) / 1000)
                }
                report.synchronousCalls += 2
            }
            // One of them refreshes: it waits for the stopped owner's lease, or adopts its commit.
            let refresher = others[0]
            refresher.send("refresh")

            report.rounds += 1
            if kills {
                report.killedRounds += 1
                let answer = try refresher.line { $0.hasPrefix("refresh") }
                let relaunched = try ManagerWorkerProcess(arguments, deadline: 1200)
                workers[victimIndex] = relaunched
                let ready = try relaunched.line { $0.hasPrefix("ready") }
                let lost = !answer.hasPrefix("refreshed") || !holdsSession(ready)
                if lost { report.killedLost += 1 }
                report.presentedTwiceAfterKill += try presentedTwice(since: logStart)
                if lost { try signInEveryone() }
                continue
            }
            report.stoppedRounds += 1
            if leaseAtStop { report.stoppedHoldingLease += 1 }
            // Stopped for less than the lease: a live owner never loses it.
            let stoppedFor = Double.random(in: 0.3...1.5, using: &random)
            usleep(UInt32(stoppedFor * 1_000_000))
            let refresherAnsweredWhileStopped = refresher.hasLine { $0.hasPrefix("refresh") }
            _ = kill(pid, SIGCONT)
            let victimAnswer = try victim.line { $0.hasPrefix("refresh") }
            let refresherAnswer = try refresher.line { $0.hasPrefix("refresh") }
            if leaseAtStop && !refresherAnsweredWhileStopped { report.waitedForStoppedOwner += 1 }
            report.presentedTwiceWhileLeaseLive += try presentedTwice(since: logStart)
            if !victimAnswer.hasPrefix("refreshed") || !refresherAnswer.hasPrefix("refreshed") {
                report.stoppedLost += 1
                report.problems.append(
                    "round \(round): \(victimAnswer) / \(refresherAnswer); sign-outs heard: \(signOutsHeard(by: workers))"
                )
                try signInEveryone()
            }
        }
        return report
    }

    /// The sign-outs each worker's handle reported among the lines read so far, with their
    /// causes: who signed out first, and why, when a round lost the session.
    private static func signOutsHeard(by workers: [ManagerWorkerProcess]) -> String {
        let heard = workers.enumerated().flatMap { index, worker in
            (worker.transcript + worker.peekBufferedLines())
                .filter { $0.hasPrefix("event signed-out") }
                .map { "worker \(index): \($0)" }
        }
        return heard.isEmpty ? "none" : heard.joined(separator: "; ")
    }

    /// Refresh tokens the server saw more than once since `start` in its log.
    private static func presentedTwice(since start: Int) throws -> Int {
        let requests = try RealServer.tokenRequests().dropFirst(start).filter { $0.grantType == "refresh_token" }
        let digests = requests.compactMap(\.refreshTokenSHA256)
        return Dictionary(grouping: digests) { $0 }.values.filter { $0.count > 1 }.count
    }
}

// MARK: - Helpers

/// Writes `line` to `.build/<name>`, where `.ci/run` prints it.
private func writeResult(_ line: String, to name: String) throws {
    let url = URL(fileURLWithPath: KillReport.resultsPath).deletingLastPathComponent().appendingPathComponent(name)
    try Data((line + "\n").utf8).write(to: url)
}

/// The modification time of `path`, in seconds since 1970.
private func modificationTime(of path: String) throws -> TimeInterval {
    var info = stat()
    guard stat(path, &info) == 0 else { throw WorkerFailure(lines: ["stat \(path) failed"]) }
    #if canImport(Darwin)
    let time = info.st_mtimespec
    #else
    let time = info.st_mtim
    #endif
    return TimeInterval(time.tv_sec) + TimeInterval(time.tv_nsec) / 1e9
}

/// The number in space-separated `field` of `line`.
private func time(in line: String, field: Int) throws -> TimeInterval {
    let fields = line.split(separator: " ")
    guard field < fields.count, let value = TimeInterval(fields[field]) else { throw WorkerFailure(lines: [line]) }
    return value
}

/// The milliseconds a worker reported (`sync <ms>`, `token <ms> <digest>`).
private func milliseconds(in line: String) throws -> Double {
    try time(in: line, field: 1)
}

extension ManagerWorkerProcess {
    /// The next line that satisfies `predicate`, skipping others; fails at the end of the output.
    func line(where predicate: (String) -> Bool) throws -> String {
        while let next = readLine() {
            if predicate(next) { return next }
        }
        throw WorkerFailure(lines: ["the worker's output ended"])
    }

    /// Whether a line satisfying `predicate` is already waiting, without waiting for one; a line
    /// found is kept for the next read.
    func hasLine(where predicate: (String) -> Bool) -> Bool {
        peekBufferedLines().contains(where: predicate)
    }
}

/// Whether a worker's "ready <status>" line says it launched with a session: signed in, or gated
/// by biometrics with the prompt up (the workers' "sync" command toggles the setting, a sign-in by
/// the same user keeps it, and the workers' prompts succeed).
private func holdsSession(_ ready: String) -> Bool {
    ready == "ready signedIn" || ready == "ready biometricAuthentication"
}
