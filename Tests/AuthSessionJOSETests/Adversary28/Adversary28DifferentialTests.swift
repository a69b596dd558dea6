import AuthSessionJOSE
import Foundation
import Testing

/// Promise 2: on random valid documents the reader equals `JSONSerialization` (and the generator's
/// own model); on one-byte mutations it never crashes, refuses whatever `JSONSerialization`
/// refuses, and says `.notUTF8` exactly when the bytes are not UTF-8.
@Suite(
    .serialized,
    .disabled(
        if: isThreadSanitized,
        "pure parsing, thousands of cases: plain swift test runs it; under TSan it would only starve the tests whose subject is timing"
    )
)
struct Adversary28DifferentialTests {

    @Test func randomValidDocumentsReadAsFoundationReadsThem() {
        var gen = Adv28Generator(seed: 0x28_0200)
        var tried = 0
        var modelMismatches = 0
        var foundationMismatches = 0
        var foundationRefusals = 0
        var foundationImprecise = 0
        for _ in 0..<20_000 {
            let (tree, text) = gen.document()
            let bytes = adv28Bytes(text)
            tried += 1
            let outcome = adv28Read(bytes)
            if outcome != .value(tree.expected) {
                modelMismatches += 1
                if modelMismatches <= 10 {
                    Issue.record("valid \(adv28Hex(bytes)): reader \(outcome), expected \(tree.expected)")
                }
            }
            guard let any = adv28FoundationReads(bytes) else {
                foundationRefusals += 1
                if foundationRefusals <= 5 { Issue.record("(Foundation refused a valid document: \(adv28Hex(bytes)))") }
                continue
            }
            if let difference = adv28CompareFoundation(any, tree, imprecise: &foundationImprecise) {
                foundationMismatches += 1
                if foundationMismatches <= 10 {
                    Issue.record("Foundation vs generator model: \(difference) in \(adv28Hex(bytes))")
                }
            }
        }
        print(
            "Adversary28 differential: \(tried) valid documents; Foundation misrounded (≤1e-13 relative) \(foundationImprecise % 1_000_000) numbers, dropped a raw U+FEFF \(foundationImprecise / 1_000_000) times"
        )
        #expect(modelMismatches == 0, "\(modelMismatches) of \(tried) valid documents read wrong")
        #expect(
            foundationMismatches == 0 && foundationRefusals == 0,
            "Foundation: \(foundationMismatches) differ, \(foundationRefusals) refused"
        )
    }

    @Test func mutationsNeverCrashAndRefuseWhatFoundationRefuses() {
        var gen = Adv28Generator(seed: 0x28_0300)
        var rng = Adv28RNG(seed: 0x28_0301)
        let interesting: [UInt8] =
            Array("{}[]\":,\\/ \t\n\r0123456789-+.eEtrufalsn".utf8) + [
                0x00, 0x1F, 0x7F, 0x80, 0xBF, 0xC0, 0xC1, 0xC2, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF,
            ]
        var knowingErrorKindDiffers = 0
        var tried = 0
        var acceptedWhatFoundationRefused = 0
        var wrongUTF8Verdict = 0
        var knowingDisagrees = 0
        var refusedByReader = 0
        for _ in 0..<30_000 {
            var bytes = adv28Bytes(gen.document().1)
            let mutations = rng.chance(80) ? 1 : rng.int(2...4)
            for _ in 0..<mutations {
                let byte = rng.chance(50) ? rng.pick(interesting) : UInt8(rng.int(0...255))
                let i = rng.int(0...bytes.count)
                switch rng.int(0...2) {
                case 0 where !bytes.isEmpty: bytes.remove(at: min(i, bytes.count - 1))
                case 1: bytes.insert(byte, at: i)
                default: if !bytes.isEmpty { bytes[min(i, bytes.count - 1)] = byte }
                }
            }
            tried += 1
            let outcome = adv28Read(bytes)
            if outcome.isError { refusedByReader += 1 }
            let isUTF8 = adv28IsUTF8(bytes)
            if (outcome == .error(.notUTF8)) != !isUTF8 {
                wrongUTF8Verdict += 1
                if wrongUTF8Verdict <= 10 { Issue.record("UTF-8 \(isUTF8) but read as \(outcome): \(adv28Hex(bytes))") }
            }
            if !outcome.isError && adv28FoundationReads(bytes) == nil {
                acceptedWhatFoundationRefused += 1
                if acceptedWhatFoundationRefused <= 10 {
                    Issue.record("Foundation refuses, reader accepts \(outcome): \(adv28Hex(bytes))")
                }
            }
            // The object readers agree with `read` on objects and with each other on everything.
            let plain = adv28ReadObject(bytes)
            let (knowing, partitionOK) = adv28ReadKnowing(bytes, JOSEKnownNames(["iss", "a", "b", "abcdefghijk"]))
            let plainAgrees: Bool
            switch outcome {
            case .value(.object): plainAgrees = plain == outcome
            case .value: plainAgrees = plain == .error(.invalid)
            // Which of two faults is named first is not promised, but `.notUTF8` is.
            case .error(let error): plainAgrees = plain.isError && (plain == .error(.notUTF8)) == (error == .notUTF8)
            }
            // Refused alike, and `.notUTF8` alike; which error otherwise is checked in
            // `Adversary28KnownNamesTests.errorKindForANonObjectWithADuplicateInside`.
            let knowingAgrees =
                knowing == plain
                || (knowing.isError && plain.isError && (knowing == .error(.notUTF8)) == (plain == .error(.notUTF8)))
            if knowing != plain { knowingErrorKindDiffers += 1 }
            if !plainAgrees || !knowingAgrees || !partitionOK {
                knowingDisagrees += 1
                if knowingDisagrees <= 10 {
                    Issue.record("read \(outcome), readObject \(plain), knowing \(knowing): \(adv28Hex(bytes))")
                }
            }
        }
        #expect(
            acceptedWhatFoundationRefused == 0 && wrongUTF8Verdict == 0 && knowingDisagrees == 0,
            "of \(tried): accepted-Foundation-refused \(acceptedWhatFoundationRefused), wrong UTF-8 verdict \(wrongUTF8Verdict), object readers disagree \(knowingDisagrees)"
        )
        #expect(refusedByReader > tried / 3)
        print(
            "Adversary28 mutations: \(tried) tried, \(refusedByReader) refused; readObject(_:knowing:) named another error than readObject(_:) for \(knowingErrorKindDiffers)"
        )
    }
}
