import AuthSession
import AuthSessionInterface
import Dispatch
import Foundation

/// The benchmarks of `auth-session-bench`, each a subject and its baseline.
enum Benchmarks {

    /// Reading `sessionStatus` vs reading a value of the same type behind the same lock type.
    static func statusRead() -> Comparison {
        let (handle, _) = makeBenchHandle()
        let bare = ConcurrencySafeContainer(AuthSessionStatus.signedIn)
        let reads = 1_000_000
        return Comparison(
            name: "status read",
            subjectLabel: "handle.sessionStatus",
            baselineLabel: "ConcurrencySafeContainer read",
            unit: "ns/read",
            operations: reads,
            goal: 1.5,
            subject: {
                var signedIn = 0
                for _ in 0..<reads where handle.sessionStatus == .signedIn {
                    signedIn += 1
                }
                blackHole(signedIn)
            },
            baseline: {
                var signedIn = 0
                for _ in 0..<reads where bare.withLock({ $0 }) == .signedIn {
                    signedIn += 1
                }
                blackHole(signedIn)
            }
        )
    }

    /// A provider event through the proxy to a completed status transition (no subscribers) vs
    /// one bare lock acquisition.
    static func eventTransition() -> Comparison {
        let (handle, provider) = makeBenchHandle()
        let proxy = provider.eventProxy!
        let bare = ConcurrencySafeContainer(0)
        let events = 200_000
        return Comparison(
            name: "provider event → status transition",
            subjectLabel: "publish(.sessionSignIn / .sessionSignedOut)",
            baselineLabel: "one lock acquisition",
            unit: "ns/event",
            operations: events,
            goal: nil,
            subject: {
                for index in 0..<events {
                    proxy.publish(index.isMultiple(of: 2) ? .sessionSignIn : .sessionSignedOut(error: nil))
                }
                blackHole(handle.sessionStatus)
            },
            baseline: {
                for _ in 0..<events {
                    bare.withLock { $0 += 1 }
                }
                blackHole(bare.withLock { $0 })
            }
        )
    }

    /// One status change fanned out to `count` delegates until all have received it, vs the
    /// same number of bare `DispatchQueue.async` closures on the same queues doing the same work.
    static func fanOut(to count: Int) -> Comparison {
        let (handle, provider) = makeBenchHandle()
        let proxy = provider.eventProxy!
        let countdown = Countdown()
        let queues = (0..<count).map { DispatchQueue(label: "bench.fan-out.\($0)") }
        let delegates = (0..<count).map { _ in CountingDelegate(countdown: countdown) }
        for (delegate, queue) in zip(delegates, queues) {
            handle.subscribeDelegate(delegate, receive: queue)
        }
        let rounds = max(20_000 / count, 20)
        var flip = false
        return Comparison(
            name: "fan-out to \(count) subscriber\(count == 1 ? "" : "s")",
            subjectLabel: "one status change, all delegates called",
            baselineLabel: "\(count) DispatchQueue.async",
            unit: "ns/delivery",
            operations: rounds * count,
            goal: 1.5,
            subject: {
                for _ in 0..<rounds {
                    countdown.reset(to: count)
                    flip.toggle()
                    proxy.publish(flip ? .sessionSignIn : .sessionSignedOut(error: nil))
                    countdown.wait()
                }
                blackHole((handle, delegates))
            },
            baseline: {
                for _ in 0..<rounds {
                    countdown.reset(to: count)
                    for queue in queues {
                        queue.async { countdown.tick() }
                    }
                    countdown.wait()
                }
            }
        )
    }

    /// Subscribing `count` delegates to a fresh handle, then unsubscribing them all, vs the least a
    /// weak multicast registry does for the same: a locked dictionary of weak references, plus the
    /// one `DispatchQueue.async` per subscriber that tells it the current status.
    ///
    /// Run at two sizes: the cost per subscription must not grow with the number of subscribers.
    static func subscribing(_ count: Int) -> Comparison {
        let delegates = (0..<count).map { _ in CountingDelegate(countdown: Countdown()) }
        let queue = DispatchQueue(label: "bench.subscribing")
        return Comparison(
            name: "subscribe + unsubscribe \(count == 10_000 ? "10,000" : "\(count)") delegates",
            subjectLabel: "subscribeDelegate / unsubscribeDelegate",
            baselineLabel: "locked [ObjectIdentifier: weak] + async",
            unit: "ns/subscription",
            operations: count,
            goal: nil,
            subject: {
                let (handle, _) = makeBenchHandle()
                for delegate in delegates {
                    handle.subscribeDelegate(delegate, receive: queue)
                }
                for delegate in delegates {
                    handle.unsubscribeDelegate(delegate)
                }
                queue.sync {}
            },
            baseline: {
                let registry = ConcurrencySafeContainer([ObjectIdentifier: WeakDelegate]())
                for delegate in delegates {
                    registry.withLock { $0[ObjectIdentifier(delegate)] = WeakDelegate(delegate) }
                    queue.async { blackHole(delegate) }
                }
                for delegate in delegates {
                    _ = registry.withLock { $0.removeValue(forKey: ObjectIdentifier(delegate)) }
                }
                queue.sync {}
            }
        )
    }

    /// Creating and releasing a handle (with its default seams) vs creating the provider alone.
    static func construction() -> Comparison {
        let handles = 20_000
        return Comparison(
            name: "handle construction + release",
            subjectLabel: "AuthSessionHandle(sessionProvider:)",
            baselineLabel: "provider alone",
            unit: "ns/handle",
            operations: handles,
            goal: nil,
            subject: {
                for _ in 0..<handles {
                    blackHole(AuthSessionHandle(sessionProvider: BenchProvider()))
                }
            },
            baseline: {
                for _ in 0..<handles {
                    blackHole(BenchProvider())
                }
            }
        )
    }

    /// The spec's burst: 64,000 status-changing events from 32 writer threads, vs the same number
    /// of bare lock acquisitions from 32 threads.
    static func burst() -> Comparison {
        let writers = 32
        let perWriter = 2_000
        let bare = ConcurrencySafeContainer(0)
        return Comparison(
            name: "64,000-event burst, 32 writers",
            subjectLabel: "events on one handle",
            baselineLabel: "contended lock acquisitions",
            unit: "ns/event (wall)",
            operations: writers * perWriter,
            goal: nil,
            subject: {
                let (handle, provider) = makeBenchHandle()
                let proxy = provider.eventProxy!
                onThreads(writers) { writer in
                    for step in 0..<perWriter {
                        proxy.publish(
                            (writer + step).isMultiple(of: 2) ? .sessionSignIn : .sessionSignedOut(error: nil)
                        )
                    }
                }
                blackHole(handle.sessionStatus)
            },
            baseline: {
                onThreads(writers) { _ in
                    for _ in 0..<perWriter {
                        bare.withLock { $0 += 1 }
                    }
                }
            }
        )
    }

    /// Runs `body` on `count` threads started together; returns when all have finished.
    private static func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        let start = DispatchSemaphore(value: 0)
        for index in 0..<count {
            group.enter()
            Thread {
                start.wait()
                body(index)
                group.leave()
            }
            .start()
        }
        for _ in 0..<count {
            start.signal()
        }
        group.wait()
    }
}
