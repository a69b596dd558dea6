import Foundation

#if canImport(os)
import os
#endif

extension ManagedSessionObservation {

    /// The line the package's logging adapters write: `AuthSessionKit [warning] refreshFinished(...)`.
    /// Never a token (see ``ManagedSessionObserver``); safe to log as public.
    public var logLine: String {
        "AuthSessionKit [\(severity)] \(description)"
    }
}

/// Writes each observation as one line to standard error (``ManagedSessionObservation/logLine``):
/// for command-line tools. Portable.
///
/// ```swift
/// configuration: .init(observer: StandardErrorSessionObserver(minimumSeverity: .info))
/// ```
///
/// All operations are thread-safe.
public struct StandardErrorSessionObserver: ManagedSessionObserver {

    /// The least serious observation written.
    public let minimumSeverity: ManagedSessionObservation.Severity

    private let write: @Sendable (String) -> Void

    /// Creates an observer that writes to standard error.
    ///
    /// - Parameter minimumSeverity: The least serious observation written; ``ManagedSessionObservation/Severity/info``.
    public init(minimumSeverity: ManagedSessionObservation.Severity = .info) {
        self.init(minimumSeverity: minimumSeverity) { line in
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    /// Creates an observer that hands each line (ending in a newline) to `write`.
    ///
    /// - Parameters:
    ///   - minimumSeverity: The least serious observation written.
    ///   - write: Where a line goes.
    public init(
        minimumSeverity: ManagedSessionObservation.Severity = .info,
        write: @escaping @Sendable (String) -> Void
    ) {
        self.minimumSeverity = minimumSeverity
        self.write = write
    }

    /// Writes the observation's line if it is serious enough.
    ///
    /// - Parameter observation: What happened.
    public func observe(_ observation: ManagedSessionObservation) {
        guard observation.severity >= minimumSeverity else { return }
        write(observation.logLine + "\n")
    }
}

#if canImport(os)
/// Writes each observation to the unified log (`os.Logger`) at the level of its
/// ``ManagedSessionObservation/severity``: `debug`, `info`, `warning`, `error`. The message is
/// ``ManagedSessionObservation/logLine``, logged as public: it never holds a token.
///
/// All operations are thread-safe.
@available(iOS 14.0, macOS 11.0, macCatalyst 14.0, tvOS 14.0, watchOS 7.0, *)
public struct OSLogSessionObserver: ManagedSessionObserver {

    /// The logger's subsystem.
    public let subsystem: String

    /// The logger's category.
    public let category: String

    /// Creates an observer writing to `Logger(subsystem:category:)`.
    ///
    /// - Parameters:
    ///   - subsystem: The subsystem, usually the app's bundle identifier.
    ///   - category: The category; `session` by default.
    public init(subsystem: String, category: String = "session") {
        self.subsystem = subsystem
        self.category = category
    }

    /// Logs the observation's line at its severity's level.
    ///
    /// - Parameter observation: What happened.
    public func observe(_ observation: ManagedSessionObservation) {
        // A logger per call: the system caches them by subsystem and category.
        let logger = Logger(subsystem: subsystem, category: category)
        let line = observation.logLine
        switch observation.severity {
        case .debug: logger.debug("\(line, privacy: .public)")
        case .info: logger.info("\(line, privacy: .public)")
        case .warning: logger.warning("\(line, privacy: .public)")
        case .error: logger.error("\(line, privacy: .public)")
        }
    }
}
#endif
