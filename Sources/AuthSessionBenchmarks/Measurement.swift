import Dispatch
import Foundation

/// Timings of one side of a benchmark: nanoseconds per operation, one sample per repetition.
struct Samples {
    private(set) var values: [Double] = []

    mutating func append(_ value: Double) {
        values.append(value)
    }

    var median: Double { percentile(0.5) }
    var low: Double { percentile(0.1) }
    var high: Double { percentile(0.9) }

    /// Half the 10th–90th percentile range, relative to the median.
    var spread: Double { median > 0 ? (high - low) / 2 / median : 0 }

    private func percentile(_ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let position = fraction * Double(sorted.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = Int(position.rounded(.up))
        let weight = position - Double(lower)
        return sorted[lower] * (1 - weight) + sorted[upper] * weight
    }
}

/// Nanoseconds taken by `body`.
@inline(never)
func nanoseconds(_ body: () -> Void) -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    body()
    return Double(DispatchTime.now().uptimeNanoseconds - start)
}

/// Keeps a value alive so the optimiser cannot delete the work that produced it.
@inline(never)
func blackHole<Value>(_ value: Value) {
    withExtendedLifetime(value) {}
}

/// A subject measured beside its baseline, in the same run.
struct Comparison {
    let name: String
    let subjectLabel: String
    let baselineLabel: String
    let unit: String
    /// Operations per sample: results are reported per operation.
    let operations: Int
    let goal: Double?
    let subject: () -> Void
    let baseline: () -> Void

    /// One warm-up of each, then `repetitions` timed samples of each, interleaved so both see the
    /// same machine.
    func measure(repetitions: Int) -> Result {
        _ = nanoseconds(baseline)
        _ = nanoseconds(subject)
        var subjectSamples = Samples()
        var baselineSamples = Samples()
        for _ in 0..<repetitions {
            baselineSamples.append(nanoseconds(baseline) / Double(operations))
            subjectSamples.append(nanoseconds(subject) / Double(operations))
        }
        return Result(comparison: self, subject: subjectSamples, baseline: baselineSamples)
    }

    struct Result {
        let comparison: Comparison
        let subject: Samples
        let baseline: Samples

        var ratio: Double { baseline.median > 0 ? subject.median / baseline.median : .infinity }
        var meetsGoal: Bool? { comparison.goal.map { ratio <= $0 } }
    }
}
