import Dispatch

/// Whether the caller is running on the main queue, and so on the main actor.
///
/// `Thread.isMainThread` cannot tell: on Linux, once a program calls `dispatchMain()` (as every
/// `async` entry point does), the main queue is drained by a worker thread. Shared with the
/// engine (package access), which needs the same answer.
package enum MainQueue {

    private static let key = DispatchSpecificKey<Bool>()

    private static let isMarked: Bool = {
        DispatchQueue.main.setSpecific(key: key, value: true)
        return true
    }()

    /// `true` inside a block the main queue runs.
    package static var isCurrent: Bool {
        isMarked && DispatchQueue.getSpecific(key: key) == true
    }
}
