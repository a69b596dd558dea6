import AuthSessionInterface
import Foundation
import Testing

@testable import AuthSession

#if canImport(UIKit)
import UIKit
#elseif canImport(AppKit)
import AppKit
#endif

/// The decisions the Apple-only adapters only perform, tested here on every platform with the raw
/// codes Apple documents.
@Suite("LocalAuthentication: error codes and the prompt plan")
struct LocalAuthenticationPlanTests {

    /// `LAError.Code` raw values (Apple's LAPublicDefines.h) and the case each must become.
    static let codes: [(code: Int, name: String, error: BiometricAuthenticationError)] = [
        (-1, "authenticationFailed", .failed),
        (-2, "userCancel", .canceledByUser),
        (-3, "userFallback", .fallback),
        (-4, "systemCancel", .canceledBySystem),
        (-5, "passcodeNotSet", .passcodeNotSet),
        (-6, "biometryNotAvailable", .biometryNotAvailable),
        (-7, "biometryNotEnrolled", .biometryNotEnrolled),
        (-8, "biometryLockout", .biometryLockedout),
        (-9, "appCancel", .canceledBySystem),
        (-10, "invalidContext", .canceledBySystem),
        (-11, "companionNotAvailable", .biometryNotAvailable),
        (-12, "biometryNotPaired", .biometryNotAvailable),
        (-13, "biometryDisconnected", .biometryNotAvailable),
        (-14, "invalidDimensions", .other),
        (-1004, "notInteractive", .canceledBySystem),
        (0, "not an LAError", .other),
        (-999, "a code Apple may add", .other),
    ]

    @Test("every LAError code maps to its case", arguments: codes.indices)
    func everyCode(index: Int) {
        let (code, name, error) = Self.codes[index]
        #expect(BiometricAuthenticationError(localAuthenticationCode: code) == error, "\(name) (\(code))")
    }

    /// A context whose `canEvaluatePolicy` answers from a table (raw policy to error code).
    static func canEvaluate(_ refusals: [Int: Int]) -> (Int) -> Int? {
        { refusals[$0] }
    }

    @Test("biometrics only: the biometric policy with the fallback button hidden, unless titled")
    func biometricsOnly() {
        let plan = LocalAuthenticationPlan.firstStep(
            policy: .biometricsOnly,
            fallbackButtonTitle: nil,
            canEvaluate: Self.canEvaluate([:])
        )
        #expect(plan == .evaluate(policy: 1, fallbackTitle: ""), "an empty title hides the button")
        #expect(
            LocalAuthenticationPlan.firstStep(
                policy: .biometricsOnly,
                fallbackButtonTitle: "Use Password",
                canEvaluate: Self.canEvaluate([:])
            ) == .evaluate(policy: 1, fallbackTitle: "Use Password")
        )
        #expect(
            LocalAuthenticationPlan.firstStep(
                policy: .biometricsOnly,
                fallbackButtonTitle: nil,
                canEvaluate: Self.canEvaluate([1: -8])
            ) == .fail(.biometryLockedout),
            "locked out, and no way out but the app's own"
        )
        #expect(
            LocalAuthenticationPlan.stepAfterFailure(
                code: -8,
                evaluatedPolicy: 1,
                policy: .biometricsOnly,
                fallbackButtonTitle: nil,
                canEvaluate: Self.canEvaluate([:])
            ) == .fail(.biometryLockedout)
        )
    }

    @Test("biometrics, then the passcode after a lockout: found locked, or locked by this prompt")
    func passcodeAfterLockout() {
        #expect(
            LocalAuthenticationPlan.firstStep(
                policy: .biometricsThenPasscodeAfterLockout,
                fallbackButtonTitle: nil,
                canEvaluate: Self.canEvaluate([:])
            ) == .evaluate(policy: 1, fallbackTitle: "")
        )
        #expect(
            LocalAuthenticationPlan.firstStep(
                policy: .biometricsThenPasscodeAfterLockout,
                fallbackButtonTitle: nil,
                canEvaluate: Self.canEvaluate([1: -8])
            ) == .evaluate(policy: 2, fallbackTitle: nil),
            "already locked: straight to the passcode, which unlocks biometry"
        )
        #expect(
            LocalAuthenticationPlan.stepAfterFailure(
                code: -8,
                evaluatedPolicy: 1,
                policy: .biometricsThenPasscodeAfterLockout,
                fallbackButtonTitle: nil,
                canEvaluate: Self.canEvaluate([:])
            ) == .evaluate(policy: 2, fallbackTitle: nil),
            "this prompt locked it: the passcode prompt follows"
        )
        #expect(
            LocalAuthenticationPlan.stepAfterFailure(
                code: -8,
                evaluatedPolicy: 2,
                policy: .biometricsThenPasscodeAfterLockout,
                fallbackButtonTitle: nil,
                canEvaluate: Self.canEvaluate([:])
            ) == .fail(.biometryLockedout),
            "never a loop: a failed passcode prompt ends"
        )
        #expect(
            LocalAuthenticationPlan.firstStep(
                policy: .biometricsThenPasscodeAfterLockout,
                fallbackButtonTitle: nil,
                canEvaluate: Self.canEvaluate([1: -8, 2: -5])
            ) == .fail(.passcodeNotSet)
        )
        #expect(
            LocalAuthenticationPlan.firstStep(
                policy: .biometricsThenPasscodeAfterLockout,
                fallbackButtonTitle: nil,
                canEvaluate: Self.canEvaluate([1: -7])
            ) == .fail(.biometryNotEnrolled),
            "only a lockout falls through"
        )
        for code in [-1, -2, -3, -4, -9] {
            #expect(
                LocalAuthenticationPlan.stepAfterFailure(
                    code: code,
                    evaluatedPolicy: 1,
                    policy: .biometricsThenPasscodeAfterLockout,
                    fallbackButtonTitle: nil,
                    canEvaluate: Self.canEvaluate([:])
                ) == .fail(BiometricAuthenticationError(localAuthenticationCode: code))
            )
        }
    }

    @Test(
        "biometrics, then the passcode: a failed biometric attempt that locked biometry (-1, not -8) leads to the passcode"
    )
    func attemptThatLocksFailsAsAuthenticationFailed() {
        // Apple does not promise that the attempt which locks biometry ends with biometryLockout:
        // it may end with authenticationFailed, and only the next canEvaluatePolicy says locked.
        #expect(
            LocalAuthenticationPlan.stepAfterFailure(
                code: -1,
                evaluatedPolicy: 1,
                policy: .biometricsThenPasscodeAfterLockout,
                fallbackButtonTitle: nil,
                canEvaluate: Self.canEvaluate([1: -8])
            ) == .evaluate(policy: 2, fallbackTitle: nil),
            "biometry is locked out now: the passcode prompt follows"
        )
        #expect(
            LocalAuthenticationPlan.stepAfterFailure(
                code: -1,
                evaluatedPolicy: 1,
                policy: .biometricsThenPasscodeAfterLockout,
                fallbackButtonTitle: nil,
                canEvaluate: Self.canEvaluate([1: -8, 2: -5])
            ) == .fail(.passcodeNotSet),
            "locked, and no passcode to offer"
        )
        for code in [-2, -3, -4] {
            #expect(
                LocalAuthenticationPlan.stepAfterFailure(
                    code: code,
                    evaluatedPolicy: 1,
                    policy: .biometricsThenPasscodeAfterLockout,
                    fallbackButtonTitle: nil,
                    canEvaluate: Self.canEvaluate([1: -8])
                ) == .fail(BiometricAuthenticationError(localAuthenticationCode: code)),
                "a cancellation or the fallback button is the person's (or the system's) choice, not a failed attempt"
            )
        }
        for policy in [LocalAuthenticationPolicy.biometricsOnly, .biometricsOrDevicePasscode] {
            #expect(
                LocalAuthenticationPlan.stepAfterFailure(
                    code: -1,
                    evaluatedPolicy: policy == .biometricsOnly ? 1 : 2,
                    policy: policy,
                    fallbackButtonTitle: nil,
                    canEvaluate: Self.canEvaluate([1: -8])
                ) == .fail(.failed),
                "\(policy): no passcode step"
            )
        }
    }

    @Test("run: a biometric attempt fails with -1 and locks biometry; the passcode prompt follows and succeeds")
    func runLockedByFailedAttempt() async {
        let refusals = ConcurrencySafeContainer<[Int: Int]>([:])
        let script = ScriptedEvaluations([-1, nil])
        do throws(BiometricAuthenticationError) {
            try await LocalAuthenticationPlan.run(
                policy: .biometricsThenPasscodeAfterLockout,
                fallbackButtonTitle: nil,
                canEvaluate: { policy in refusals.withLock { $0[policy] } },
                evaluate: { evaluatedPolicy, _ in
                    let answer = script.next(evaluatedPolicy)
                    // The attempt that fails locks biometry: canEvaluatePolicy says so from now on.
                    if evaluatedPolicy == 1 { refusals.withLock { $0[1] = -8 } }
                    return answer
                }
            )
        } catch {
            Issue.record("the passcode step should have followed, got \(error)")
        }
        #expect(script.evaluated == [1, 2])
    }

    @Test("biometrics or the passcode: the device-owner policy, the system's fallback title unless one is given")
    func biometricsOrPasscode() {
        #expect(
            LocalAuthenticationPlan.firstStep(
                policy: .biometricsOrDevicePasscode,
                fallbackButtonTitle: nil,
                canEvaluate: Self.canEvaluate([1: -8])
            ) == .evaluate(policy: 2, fallbackTitle: nil)
        )
        #expect(
            LocalAuthenticationPlan.firstStep(
                policy: .biometricsOrDevicePasscode,
                fallbackButtonTitle: "Enter Code",
                canEvaluate: Self.canEvaluate([:])
            ) == .evaluate(policy: 2, fallbackTitle: "Enter Code")
        )
        #expect(
            LocalAuthenticationPlan.firstStep(
                policy: .biometricsOrDevicePasscode,
                fallbackButtonTitle: nil,
                canEvaluate: Self.canEvaluate([2: -5])
            ) == .fail(.passcodeNotSet)
        )
    }

    /// Runs the plan against a scripted context: each evaluation answers the next code.
    private func run(
        _ policy: LocalAuthenticationPolicy,
        refusals: [Int: Int] = [:],
        answers: [Int?]
    ) async -> (result: Result<Void, BiometricAuthenticationError>, evaluated: [Int]) {
        let script = ScriptedEvaluations(answers)
        do throws(BiometricAuthenticationError) {
            try await LocalAuthenticationPlan.run(
                policy: policy,
                fallbackButtonTitle: nil,
                canEvaluate: Self.canEvaluate(refusals)
            ) { evaluatedPolicy, _ in script.next(evaluatedPolicy) }
            return (.success(()), script.evaluated)
        } catch {
            return (.failure(error), script.evaluated)
        }
    }

    @Test("run: a lockout during the biometric prompt, then the passcode succeeds")
    func runLockoutThenPasscode() async {
        let outcome = await run(.biometricsThenPasscodeAfterLockout, answers: [-8, nil])
        #expect(outcome.evaluated == [1, 2])
        #expect((try? outcome.result.get()) != nil)
    }

    @Test("run: biometrics only ends on the lockout; a cancelled user ends at once")
    func runEnds() async {
        let lockout = await run(.biometricsOnly, answers: [-8])
        #expect(lockout.evaluated == [1])
        #expect(throws: BiometricAuthenticationError.biometryLockedout) { try lockout.result.get() }
        let cancelled = await run(.biometricsThenPasscodeAfterLockout, answers: [-2])
        #expect(cancelled.evaluated == [1])
        #expect(throws: BiometricAuthenticationError.canceledByUser) { try cancelled.result.get() }
        let unavailable = await run(.biometricsOrDevicePasscode, refusals: [2: -5], answers: [])
        #expect(unavailable.evaluated == [], "nothing is shown when the policy cannot be evaluated")
        #expect(throws: BiometricAuthenticationError.passcodeNotSet) { try unavailable.result.get() }
    }

    @Test("run: a cancelled task shows no prompt")
    func runCancelled() async {
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await run(.biometricsOrDevicePasscode, answers: [nil])
        }
        let outcome = await task.value
        #expect(outcome.evaluated == [])
        #expect(throws: BiometricAuthenticationError.canceledBySystem) { try outcome.result.get() }
    }
}

/// Answers each evaluation with the next scripted code, and records which policies were evaluated.
private final class ScriptedEvaluations: Sendable {
    private let state: ConcurrencySafeContainer<(answers: [Int?], evaluated: [Int])>

    init(_ answers: [Int?]) {
        state = ConcurrencySafeContainer((answers, []))
    }

    func next(_ policy: Int) -> Int? {
        state.withLock { state in
            state.evaluated.append(policy)
            return state.answers.isEmpty ? -999 : state.answers.removeFirst()
        }
    }

    var evaluated: [Int] { state.withLock { $0.evaluated } }
}

@Suite("Application lifecycle: who posts activations")
struct ApplicationLifecycleTests {

    @Test("an app gets its framework's lifecycle; a command-line tool and an extension get none")
    func decision() {
        typealias Case = (
            uiKit: Bool, appKit: Bool, extension: String, packageType: String?, expected: ApplicationLifecycle
        )
        let cases: [Case] = [
            (true, false, "app", "APPL", .uiKit),  // iOS app
            (false, true, "app", "APPL", .appKit),  // macOS app
            (true, true, "app", "APPL", .uiKit),  // Mac Catalyst: UIKit wins
            (false, true, "", nil, .none),  // macOS command-line tool (its folder, no Info.plist)
            (false, true, "debug", "APPL", .appKit),  // a tool with an embedded Info.plist saying APPL
            (false, true, "", "BNDL", .none),  // a tool whose embedded Info.plist says otherwise
            (true, false, "appex", "XPC!", .none),  // iOS app extension
            (false, true, "appex", "XPC!", .none),  // macOS app extension
            (true, false, "app", "XPC!", .none),  // the package type wins for an extension
            (false, true, "xctest", "BNDL", .none),  // a test bundle run by xctest
            (false, false, "app", "APPL", .none),  // Linux
            (false, false, "", nil, .none),
        ]
        for item in cases {
            #expect(
                ApplicationLifecycle.decide(
                    hasUIKit: item.uiKit,
                    hasAppKit: item.appKit,
                    bundleExtension: item.extension,
                    bundlePackageType: item.packageType,
                    isBundleExecutable: true
                ) == item.expected,
                "\(item)"
            )
        }
    }

    @Test("a helper tool inside an app bundle is not the app: no lifecycle, whatever its main bundle says")
    func helperToolInsideAnApp() {
        // Foo.app/Contents/MacOS/helper or Foo.app/Contents/Helpers/tool: Bundle.main is Foo.app
        // (APPL), but no NSApplication runs in the helper, and none ever will post an activation.
        for (uiKit, appKit) in [(false, true), (true, false), (true, true)] {
            #expect(
                ApplicationLifecycle.decide(
                    hasUIKit: uiKit,
                    hasAppKit: appKit,
                    bundleExtension: "app",
                    bundlePackageType: "APPL",
                    isBundleExecutable: false
                ) == .none,
                "UIKit \(uiKit), AppKit \(appKit)"
            )
        }
    }

    @Test("this process runs its bundle's executable: the same file, reached through a link or a longer path, or not")
    func bundleExecutableComparison() throws {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("lifecycle-\(UUID().uuidString)", isDirectory: true)
        let macOS = folder.appendingPathComponent("Foo.app/Contents/MacOS", isDirectory: true)
        try FileManager.default.createDirectory(at: macOS, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let app = macOS.appendingPathComponent("Foo")
        let helper = macOS.appendingPathComponent("helper")
        try Data("app".utf8).write(to: app)
        try Data("helper".utf8).write(to: helper)
        let link = folder.appendingPathComponent("foo-link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: app)

        #expect(ApplicationLifecycle.isBundleExecutable(bundleExecutable: app, processExecutable: app))
        #expect(
            ApplicationLifecycle.isBundleExecutable(bundleExecutable: app, processExecutable: link),
            "launched through a symbolic link"
        )
        #expect(
            ApplicationLifecycle.isBundleExecutable(
                bundleExecutable: app,
                processExecutable: URL(fileURLWithPath: macOS.path + "/../MacOS/./Foo")
            ),
            "a path with . and .. components"
        )
        #expect(
            !ApplicationLifecycle.isBundleExecutable(bundleExecutable: app, processExecutable: helper),
            "a helper tool beside the app's executable"
        )
        #expect(
            ApplicationLifecycle.isBundleExecutable(bundleExecutable: nil, processExecutable: helper),
            "no bundle executable (a command-line tool's folder): nothing to tell, as before"
        )
        #expect(
            ApplicationLifecycle.isBundleExecutable(bundleExecutable: app, processExecutable: nil),
            "this process's path unknown: taken for the bundle's, as before"
        )
    }

    @Test("each lifecycle's notification, and whether it posts the launch's activation")
    func notifications() {
        #expect(
            ApplicationLifecycle.uiKit.didBecomeActiveNotification.rawValue
                == "UIApplicationDidBecomeActiveNotification"
        )
        #expect(
            ApplicationLifecycle.appKit.didBecomeActiveNotification.rawValue
                == "NSApplicationDidBecomeActiveNotification"
        )
        #expect(ApplicationLifecycle.none.didBecomeActiveNotification == .authSessionApplicationDidBecomeActive)
        #expect(ApplicationLifecycle.uiKit.postsActivations && ApplicationLifecycle.appKit.postsActivations)
        #expect(!ApplicationLifecycle.none.postsActivations)
    }

    #if canImport(UIKit)
    @Test("the UIKit name is UIKit's constant")
    func uiKitName() {
        #expect(ApplicationLifecycle.uiKit.didBecomeActiveNotification == UIApplication.didBecomeActiveNotification)
    }
    #elseif canImport(AppKit)
    @Test("the AppKit name is AppKit's constant")
    @MainActor
    func appKitName() {
        #expect(ApplicationLifecycle.appKit.didBecomeActiveNotification == NSApplication.didBecomeActiveNotification)
    }
    #endif

    @Test("this process (Linux, a test runner): no lifecycle; the default signal listens to the package's notification")
    func thisProcess() {
        #if !canImport(UIKit) && !canImport(AppKit)
        #expect(ApplicationLifecycle.current == .none)
        #endif
        #if os(macOS)
        #expect(ApplicationLifecycle.current == .none, "xctest on macOS is a command-line tool")
        #endif
        let signal = NotificationCenterActivationSignal()
        #expect(signal.hasApplicationLifecycle == ApplicationLifecycle.current.postsActivations)
        #expect(signal.name == ApplicationLifecycle.current.didBecomeActiveNotification)
        #expect(
            NotificationCenterActivationSignal.platformHasApplicationLifecycle
                == ApplicationLifecycle.current.postsActivations
        )
    }
}
