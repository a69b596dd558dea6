import Foundation

#if canImport(os)
import os
#endif

extension ManagedSessionObservation {

    /// The line the package's logging adapters write: `AuthSessionKit [warning] refreshFinished(...)`.
    ///
    /// Never a token (see ``ManagedSessionObserver``), but it may hold what is personal or says
    /// where things are: a server's `error_description` (which may quote an e-mail address), a
    /// user identifier, a file path with the user's name. Log it as private where the log is
    /// kept beyond the app (`OSLogSessionObserver` does); ``publicLogSummary`` is the part that
    /// may be shown in clear.
    public var logLine: String {
        "AuthSessionKit [\(severity)] \(description)"
    }

    /// The part of ``logLine`` that holds nothing about the person or the device, which a log may
    /// show in clear: `AuthSessionKit [warning] refreshFinished`.
    public var publicLogSummary: String {
        "AuthSessionKit [\(severity)] \(name)"
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
/// ``ManagedSessionObservation/severity``: `debug`, `info`, `warning`, `error`.
///
/// The unified log outlives the app (sysdiagnoses, Console on a Mac with the device attached), so
/// only ``ManagedSessionObservation/publicLogSummary`` (its severity and name) is public; the
/// detail (``ManagedSessionObservation/logLine``: a server's description, a user identifier, a
/// path) is private, shown as `<private>` unless the device is configured to reveal private data,
/// as `os.Logger` does for every dynamic string by default.
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
        let summary = observation.publicLogSummary
        let detail = observation.description
        switch observation.severity {
        case .debug: logger.debug("\(summary, privacy: .public): \(detail, privacy: .private)")
        case .info: logger.info("\(summary, privacy: .public): \(detail, privacy: .private)")
        case .warning: logger.warning("\(summary, privacy: .public): \(detail, privacy: .private)")
        case .error: logger.error("\(summary, privacy: .public): \(detail, privacy: .private)")
        }
    }
}
#endif
