import AuthSessionMocks
import AuthSessionOAuth2
import Foundation

/// `auth-session-bench`: each figure beside a baseline measured in the same run, as a ratio.
///
/// `swift run -c release auth-session-bench [--json] [--repetitions N] [--filter TEXT]
/// [--oauth-server ENDPOINTS_JSON]`
@main
enum AuthSessionBenchmarks {

    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "peer" {
            // A copy of the bench started by a cross-process row.
            CrossProcessBenchmarks.runPeer(Array(arguments.dropFirst()))
        }
        let json = arguments.contains("--json")
        var repetitions = 15
        if let index = arguments.firstIndex(of: "--repetitions"), index + 1 < arguments.count,
            let value = Int(arguments[index + 1]), value > 0
        {
            repetitions = value
        }
        #if DEBUG
        FileHandle.standardError.write(
            Data(
                "warning: this is a debug build; figures mean little. Run `swift run -c release auth-session-bench`.\n"
                    .utf8
            )
        )
        #endif

        var filter: String?
        if let index = arguments.firstIndex(of: "--filter"), index + 1 < arguments.count {
            filter = arguments[index + 1]
        }
        let comparisons: [(name: String, make: () -> Comparison)] = [
            ("status read", Benchmarks.statusRead),
            ("provider event", Benchmarks.eventTransition),
            ("fan-out 1", { Benchmarks.fanOut(to: 1) }),
            ("fan-out 32", { Benchmarks.fanOut(to: 32) }),
            ("fan-out 1000", { Benchmarks.fanOut(to: 1_000) }),
            ("subscribing 1000", { Benchmarks.subscribing(1_000) }),
            ("subscribing 10000", { Benchmarks.subscribing(10_000) }),
            ("construction", Benchmarks.construction),
            ("burst", Benchmarks.burst),
            ("store save+load", { StoreBenchmarks.saveLoad(durable: false) }),
            ("store durable save+load", { StoreBenchmarks.saveLoad(durable: true) }),
            ("store exclusive access", StoreBenchmarks.exclusiveAccess),
            ("valid-token read", ManagerBenchmarks.validTokenRead),
            ("reading an ID token", { SignatureBenchmarks.reading() }),
            ("ES256 verification", { SignatureBenchmarks.verification(.randomES256()) }),
        ]
        // Rows that set up each sample themselves and time only part of it; each has a note.
        let sampledRows: [(name: String, measure: (Int) -> (result: Comparison.Result, note: String))] = [
            ("10,000 callers on an expired token", ManagerBenchmarks.expiredTokenCallers),
            ("launch restore", ManagerBenchmarks.launchRestore),
        ]
        var results: [Comparison.Result] = []
        for (name, make) in comparisons where filter.map({ name.contains($0) }) ?? true {
            let result = make().measure(repetitions: repetitions)
            results.append(result)
            if !json {
                printRow(result)
            }
        }
        for (name, measure) in sampledRows where filter.map({ name.contains($0) }) ?? true {
            let (result, note) = measure(repetitions)
            results.append(result)
            if !json {
                printRow(result)
                emit("  (\(note))")
            }
        }
        if filter.map({ "notice to another process".contains($0) }) ?? true {
            if let (result, note) = CrossProcessBenchmarks.noticeRoundTrip(repetitions: repetitions) {
                results.append(result)
                if !json {
                    printRow(result)
                    emit("  (\(note))")
                }
            } else if !json {
                emit("notice to another process")
                emit("  not measured: inotify is Linux's")
            }
        }
        if filter.map({ "4 processes refreshing at once".contains($0) }) ?? true {
            if let result = fourProcessRow(arguments: arguments) {
                results.append(result)
                if !json {
                    printRow(result)
                }
            }
        }
        if filter.map({ "oauth refresh round trip".contains($0) }) ?? true {
            if let result = oauthRow(arguments: arguments) {
                results.append(result)
                if !json {
                    printRow(result)
                }
            }
        }
        if json {
            printJSON(results, repetitions: repetitions)
        } else {
            emit("\n\(repetitions) timed repetitions after one warm-up; median (±half the 10–90th percentile spread).")
        }
    }

    /// The real-server row: measured with `--oauth-server`, else a line saying how to get it.
    private static func oauthRow(arguments: [String]) -> Comparison.Result? {
        guard let index = arguments.firstIndex(of: "--oauth-server"), index + 1 < arguments.count else {
            emit("oauth refresh round trip")
            emit(
                "  not measured: needs a real server. Run `scripts/oauth-test-server start`, then "
                    + "`swift run -c release auth-session-bench --oauth-server .build/oauth-test-server/run/endpoints.json`."
            )
            return nil
        }
        do {
            let server = try OAuthTestServer.load(from: arguments[index + 1])
            let result = try OAuthBenchmarks.refresh(server: server, rounds: 200)
            emit("  (200 sequential refreshes on each side, interleaved, against \(server.issuer))")
            return result
        } catch {
            FileHandle.standardError.write(Data("auth-session-bench: oauth refresh round trip: \(error)\n".utf8))
            exit(1)
        }
    }

    /// Four processes refreshing at once: measured with `--oauth-server`, else a line saying how.
    private static func fourProcessRow(arguments: [String]) -> Comparison.Result? {
        guard let index = arguments.firstIndex(of: "--oauth-server"), index + 1 < arguments.count else {
            emit("4 processes refreshing at once")
            emit("  not measured: needs a real server (see \"oauth refresh round trip\").")
            return nil
        }
        do {
            let server = try OAuthTestServer.load(from: arguments[index + 1])
            let (result, note) = try CrossProcessBenchmarks.fourProcessRefresh(
                server: server,
                endpoints: arguments[index + 1],
                samples: 10
            )
            emit("  (\(note))")
            return result
        } catch {
            FileHandle.standardError.write(Data("auth-session-bench: 4 processes: \(error)\n".utf8))
            exit(1)
        }
    }

    private static func format(_ samples: Samples) -> String {
        let value = samples.median
        let text =
            value >= 1_000_000
            ? String(format: "%.2f ms", value / 1_000_000)
            : value >= 1_000 ? String(format: "%.2f µs", value / 1_000) : String(format: "%.1f ns", value)
        return "\(text) ±\(Int((samples.spread * 100).rounded()))%"
    }

    private static func printRow(_ result: Comparison.Result) {
        let comparison = result.comparison
        let goal =
            comparison.goal.map { String(format: "goal ≤ %.1f %@", $0, result.meetsGoal == true ? "✔" : "✘") } ?? ""
        emit(comparison.name)
        emit(
            "  \(comparison.subjectLabel.padding(toLength: 46, withPad: " ", startingAt: 0)) \(format(result.subject))"
        )
        emit(
            "  \(comparison.baselineLabel.padding(toLength: 46, withPad: " ", startingAt: 0)) \(format(result.baseline))"
        )
        emit("  ratio \(String(format: "%.2f", result.ratio))x  \(goal)")
    }

    private static func printJSON(_ results: [Comparison.Result], repetitions: Int) {
        var entries: [[String: Any]] = []
        for result in results {
            var entry: [String: Any] = [
                "name": result.comparison.name,
                "unit": result.comparison.unit,
                "subject": summary(result.subject, label: result.comparison.subjectLabel),
                "baseline": summary(result.baseline, label: result.comparison.baselineLabel),
                "ratio": result.ratio.isFinite ? result.ratio : NSNull(),
            ]
            if let goal = result.comparison.goal {
                entry["goal"] = goal
                entry["meetsGoal"] = result.meetsGoal
            }
            entries.append(entry)
        }
        var document: [String: Any] = ["repetitions": repetitions, "benchmarks": entries]
        #if DEBUG
        document["build"] = "debug"
        #else
        document["build"] = "release"
        #endif
        do {
            let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
            emit(String(decoding: data, as: UTF8.self))
        } catch {
            FileHandle.standardError.write(Data("auth-session-bench: cannot encode JSON: \(error)\n".utf8))
            exit(1)
        }
    }

    private static func summary(_ samples: Samples, label: String) -> [String: Any] {
        [
            "label": label, "median": samples.median, "p10": samples.low, "p90": samples.high,
            "samples": samples.values.count,
        ]
    }
}

/// Writes a line to standard output at once (no buffering), so progress shows while it runs.
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
