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

/// The session manager across processes, against the real server: `SessionManagerWorker`
/// processes share one `FileSessionStore`, and are killed in the middle of a refresh.
extension RealServerTests {
    @Suite struct ManagerCrossProcessIntegrationTests {

        /// The endpoints JSON of the server the suite runs against.
        private func endpointsPath() throws -> String {
            try #require(ProcessInfo.processInfo.environment[OAuthTestServer.environmentVariable])
        }

        @Test("4 processes sharing one file store, each forcing 50 refreshes")
        func fourProcessesShareOneRefreshChain() async throws {
            try #require(ManagerWorker.url != nil, "the SessionManagerWorker executable is built with the tests")
            let endpoints = try endpointsPath()
            let folder = try ManagerWorkFolder()
            defer { folder.remove() }
            let storeFolder = folder.path("store")
            let store = FileSessionStore(directory: URL(fileURLWithPath: storeFolder, isDirectory: true))

            let signIn = try await ManagerWorker.onOwnThread {
                try ManagerWorker.run(["sign-in", endpoints, storeFolder])
            }
            try #require(signIn.status == 0, "sign-in: \(signIn.lines)")
            let seeded = try #require(try store.load()?.refreshToken)
            let logStart = try RealServer.tokenRequests().count

            let clock = ContinuousClock()
            let started = clock.now
            let results = try await ManagerWorker.onOwnThread { () -> [(status: Int32, lines: [String])] in
                let workers = try (0..<4).map { _ in
                    try ManagerWorkerProcess(["refresh", endpoints, storeFolder, "50", "--wait-for-go"])
                }
                // Every worker has launched (loaded the store) before any of them refreshes.
                let launches = workers.map { $0.lines(through: "ready") }
                // (A worker that ended at its launch has no reader on its input left to write to.)
                for (worker, launch) in zip(workers, launches) where launch.last == "ready" {
                    worker.send("go")
                }
                return zip(workers, launches).map { worker, launch in
                    let lines = launch + worker.remainingLines()
                    return (worker.wait(), lines)
                }
            }
            let elapsed = started.duration(to: clock.now)

            for (index, result) in results.enumerated() {
                #expect(result.status == 0, "worker \(index) exited \(result.status): \(result.lines.suffix(3))")
                #expect(result.lines.last == "result ok", "worker \(index): \(result.lines.suffix(3))")
                #expect(
                    !result.lines.contains { $0.hasPrefix("result signed-out") },
                    "worker \(index) was signed out: \(result.lines.suffix(3))"
                )
                #expect(result.lines.filter { $0.hasPrefix("refreshed ") }.count == 50, "worker \(index)")
            }

            // What the server saw: each refresh token presented once, each accepted.
            let requests = try RealServer.tokenRequests().dropFirst(logStart).filter { $0.grantType == "refresh_token" }
            let digests = requests.map { $0.refreshTokenSHA256 ?? "" }
            let presentedTwice = Dictionary(grouping: digests) { $0 }.filter { $0.value.count > 1 }
            print(
                "4 processes x 50 refresh() on one file store: \(requests.count) refresh requests reached the server, "
                    + "\(presentedTwice.count) refresh tokens presented twice, in \(elapsed)"
            )
            #expect(requests.count >= 50, "each refresh() presents the token or adopts another process's rotation")
            #expect(requests.count <= 200)
            #expect(presentedTwice.isEmpty, "refresh tokens presented more than once: \(presentedTwice.count)")
            #expect(
                requests.allSatisfy { $0.status == 200 },
                "statuses: \(Dictionary(grouping: requests) { $0.status ?? 0 }.mapValues(\.count))"
            )
            #expect(digests.contains(logDigest(seeded)), "the chain starts at the signed-in refresh token")

            // The store holds the end of the chain: a refresh token never presented, a live access token.
            let final = try #require(try store.load())
            #expect(!digests.contains(logDigest(try #require(final.refreshToken))))
            let service = try RealServer.service(role: "password")
            let introspection = try await service.introspect(final.accessToken, kind: .accessToken)
            #expect(introspection.isActive)
            #expect(introspection.username == (try RealServer.require()).user.username)
            #expect(try await service.userInfo(accessToken: final.accessToken).identifier == "1")
        }

        @Test("killed with SIGKILL at random points of a refresh, 50 times")
        func killedMidRefresh() async throws {
            try #require(ManagerWorker.url != nil, "the SessionManagerWorker executable is built with the tests")
            let results = KillReport.resultsPath
            try? FileManager.default.removeItem(atPath: results)
            let folder = try ManagerWorkFolder()
            defer { folder.remove() }
            var lines: [String] = []

            // Grace off: the server the suite runs against, unless it was started with a grace period.
            let withoutGrace = try await server(gracePeriod: 0, in: folder)
            let off: KillReport
            do {
                defer { withoutGrace.second?.stop() }
                off = try await KillReport.measure(endpoints: withoutGrace.endpoints, in: folder, label: "grace off")
            }
            lines.append(off.summary)
            try KillReport.write(lines)
            print(off.details)
            #expect(off.rounds == 50)
            #expect(off.lost <= 50)
            #expect(off.problems.isEmpty, "\(off.problems.prefix(5))")
            #expect(
                off.lossesOutsideTheWindow == 0,
                "a kill before the request or after the store's write lost the session"
            )

            // Grace on: a second server whose refresh tokens may be presented again for 60 s.
            let withGrace = try await server(gracePeriod: 60, in: folder)
            let on: KillReport
            do {
                defer { withGrace.second?.stop() }
                on = try await KillReport.measure(endpoints: withGrace.endpoints, in: folder, label: "grace on")
            }
            lines.append(on.summary)
            try KillReport.write(lines)
            print(on.details)
            #expect(on.rounds == 50)
            #expect(on.lost == 0, "with a grace period a refresh killed at any moment loses nothing")
            #expect(on.problems.isEmpty, "\(on.problems.prefix(5))")
            #expect(on.lossesOutsideTheWindow == 0)
            print(lines.joined(separator: "\n"))
        }

        /// A server with `gracePeriod`: the suite's own if it has it, else a second one, started
        /// here (the caller stops it).
        private func server(
            gracePeriod: Int,
            in folder: ManagerWorkFolder
        ) async throws -> (endpoints: String, second: SecondServer?) {
            let running = try RealServer.require()
            if Int(running.refreshGracePeriodSeconds) == gracePeriod {
                return (try endpointsPath(), nil)
            }
            let second = try await ManagerWorker.onOwnThread {
                try SecondServer(gracePeriod: gracePeriod, in: folder)
            }
            print("a second server (grace period \(gracePeriod) s) started in \(second.startDuration)")
            #expect(Int(second.description.refreshGracePeriodSeconds) == gracePeriod)
            return (second.endpointsPath, second)
        }
    }
}

/// The outcome of 50 refreshes killed at random moments, each followed by a relaunch on the same
/// store that refreshes again.
struct KillReport: Sendable {
    /// Where a kill landed.
    enum Moment: Sendable {
        /// The killed refresh's request never reached the server: its refresh token is unspent.
        case beforeServer
        /// The request was sent and the server rotated the tokens after the kill.
        case duringServer
        /// The server had answered, but the store still held the spent refresh token.
        case answeredNotStored
        /// The store holds the rotated tokens.
        case stored
    }

    var label: String
    var rounds = 0
    /// Relaunches that ended signed out: the session was lost.
    var lost = 0
    /// The refresh's duration as measured before the kills, and the kill window drawn from it.
    var measured: [Duration] = []
    var window: Double = 0
    /// The kill delays, in milliseconds, by where the kill landed and whether the session was lost.
    var kills: [(delay: Double, moment: Moment, isLost: Bool)] = []
    /// Relaunches that neither refreshed nor ended signed out, and other surprises.
    var problems: [String] = []
    var elapsed: Duration = .zero

    var summary: String { "\(label): lost \(lost) of \(rounds)" }

    /// Losses outside the one window no client can close (from sending the request to writing
    /// the store): a kill before the request or after the write must never lose the session.
    var lossesOutsideTheWindow: Int {
        kills.filter { $0.isLost && ($0.moment == .beforeServer || $0.moment == .stored) }.count
    }

    var details: String {
        func format(_ value: Double) -> String { String(format: "%.1f", value) }
        func describe(_ moment: Moment, _ name: String) -> String {
            let delays = kills.filter { $0.moment == moment }.map(\.delay)
            guard let low = delays.min(), let high = delays.max() else { return "\(name) 0" }
            let lost = kills.filter { $0.moment == moment && $0.isLost }.count
            return "\(name) \(delays.count) (at \(format(low))-\(format(high)) ms, \(lost) lost)"
        }
        return
            "\(label): refresh measured at [\(measured.map { format($0.milliseconds) }.joined(separator: ", "))] ms, "
            + "kills uniform in 0-\(format(window)) ms after it starts; "
            + "\(describe(.beforeServer, "before the server")), "
            + "\(describe(.duringServer, "while the server rotated")), "
            + "\(describe(.answeredNotStored, "after the server's answer but before the store")), "
            + "\(describe(.stored, "after the store")); lost \(lost) of \(rounds) in \(elapsed)"
    }

    static let resultsPath = URL(fileURLWithPath: ServerScript.path)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(".build/kill-mid-refresh.txt").path

    static func write(_ lines: [String]) throws {
        let url = URL(fileURLWithPath: resultsPath)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: url)
    }

    /// Measures the refresh (a warm-up and 5 runs, not killed), then runs 50 rounds: sign in on a
    /// fresh store, start a worker's refresh, kill it with `SIGKILL` a random time after it said
    /// it starts, relaunch a worker on the same store and refresh again.
    static func measure(endpoints: String, in folder: ManagerWorkFolder, label: String) async throws -> KillReport {
        let server = try OAuthTestServer.load(from: endpoints)
        let prefix = folder.path(label.replacingOccurrences(of: " ", with: "-"))
        return try await ManagerWorker.onOwnThread {
            var report = KillReport(label: label)
            let clock = ContinuousClock()
            let started = clock.now
            func signedInStore(_ name: String) throws -> (path: String, store: FileSessionStore) {
                let path = "\(prefix)-\(name)"
                let signIn = try ManagerWorker.run(["sign-in", endpoints, path])
                guard signIn.status == 0 else { throw WorkerFailure(lines: signIn.lines) }
                return (path, FileSessionStore(directory: URL(fileURLWithPath: path, isDirectory: true)))
            }

            // One warm-up (the server's first refresh is slow), then 5 timed refreshes: the kills are
            // spread over the longest, and a little past its end.
            for run in 0..<6 {
                let (path, _) = try signedInStore("measure-\(run)")
                let worker = try ManagerWorkerProcess(["refresh", endpoints, path, "1"], deadline: 30)
                var lines = worker.lines(through: "refreshing 1")
                let start = clock.now
                lines += worker.lines(through: "refreshed 1")
                if run > 0 {
                    report.measured.append(start.duration(to: clock.now))
                }
                lines += worker.remainingLines()
                guard worker.wait() == 0 else { throw WorkerFailure(lines: lines) }
            }
            report.window = (report.measured.max() ?? .milliseconds(40)).milliseconds * 1.2

            var random = SystemRandomNumberGenerator()
            for round in 0..<50 {
                let (path, store) = try signedInStore("round-\(round)")
                guard let seeded = try store.load()?.refreshToken else {
                    throw WorkerFailure(lines: ["round \(round): no refresh token stored after the sign-in"])
                }
                let victim = try ManagerWorkerProcess(["refresh", endpoints, path, "1"], deadline: 30)
                let victimLines = victim.lines(through: "refreshing 1")
                guard victimLines.last == "refreshing 1" else {
                    victim.kill()
                    report.problems.append("round \(round): the worker did not start its refresh: \(victimLines)")
                    continue
                }
                // The kill moment is the random variable: a time into the refresh, not a wait for anything.
                let delay = Double.random(in: 0...report.window, using: &random)
                usleep(UInt32(delay * 1000))
                let killedAt = Date().timeIntervalSince1970
                victim.kill()
                let afterKill: ManagedSession?
                do {
                    afterKill = try store.load()
                } catch {
                    report.problems.append("round \(round): the store is unreadable after the kill: \(error)")
                    continue
                }
                guard let afterKill else {
                    report.problems.append("round \(round): the store is empty after the kill")
                    continue
                }

                // A short clock leeway makes the relaunch's credential check see the access token
                // the killed refresh rotated away as revoked although it has not expired: the
                // manager must confirm such a verdict with the refresh token, not sign out.
                let relaunch = try ManagerWorkerProcess(
                    ["refresh", endpoints, path, "1", "--clock-leeway", "5"],
                    deadline: 30
                )
                var relaunchLines = relaunch.lines(through: "ready")
                // The relaunch presents nothing before it says "ready": an earlier presentation of the
                // seeded token in the server's log is the killed worker's.
                let relaunchReady = Date().timeIntervalSince1970
                relaunchLines += relaunch.remainingLines()
                let status = relaunch.wait()
                report.rounds += 1
                let isLost: Bool
                if status == 0, relaunchLines.last == "result ok" {
                    isLost = false
                } else if status == 3, relaunchLines.last?.hasPrefix("result signed-out") == true {
                    isLost = true
                    report.lost += 1
                } else {
                    report.problems.append("round \(round): the relaunch exited \(status): \(relaunchLines.suffix(3))")
                    continue
                }

                let presentations = Self.presentations(of: seeded, in: server)
                // The killed worker's presentation: one answered before the relaunch could present,
                // or, when the relaunch's was refused as a reuse, the first.
                let killedWorkersAnswer =
                    presentations.first { $0 < relaunchReady }
                    ?? (isLost && presentations.count >= 2 ? presentations.first : nil)
                let moment: Moment
                if afterKill.refreshToken != seeded {
                    moment = .stored
                } else if let answeredAt = killedWorkersAnswer {
                    moment = answeredAt < killedAt ? .answeredNotStored : .duringServer
                } else {
                    moment = .beforeServer
                }
                report.kills.append((delay, moment, isLost))
            }
            report.elapsed = started.duration(to: clock.now)
            return report
        }
    }

    /// When the server answered each presentation of `refreshToken`, from its log.
    private static func presentations(of refreshToken: String, in server: OAuthTestServer) -> [TimeInterval] {
        let digest = logDigest(refreshToken)
        let text = server.tokenRequestLog.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let record = try? JSONDecoder().decode(TimedTokenRequest.self, from: Data(line.utf8)),
                record.refreshTokenSHA256 == digest
            else { return nil }
            return record.time
        }
    }
}

/// One line of the server's token-request log, with when it was answered.
private struct TimedTokenRequest: Decodable {
    var refreshTokenSHA256: String?
    var time: TimeInterval

    private enum CodingKeys: String, CodingKey {
        case refreshTokenSHA256 = "refresh_token_sha256"
        case time
    }
}

/// A worker that should have succeeded did not.
struct WorkerFailure: Error, CustomStringConvertible {
    let lines: [String]

    var description: String { "the worker failed: \(lines.suffix(5))" }
}

extension Duration {
    fileprivate var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }
}
