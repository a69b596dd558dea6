import AuthSession
import AuthSessionProviders
import Foundation

/// A copy of a server's metadata and when it was fetched: what a ``DiscoveryCache`` keeps.
///
/// In JSON: `{"version": 1, "fetched_at": <seconds since 1970>, "metadata": {...}}`, the
/// metadata with RFC 8414's member names.
///
/// All operations are thread-safe.
public struct DiscoveryCacheEntry: Sendable, Hashable, Codable {

    /// The version of the JSON form this package writes and reads.
    public static let formatVersion = 1

    /// The metadata, as discovery returned it.
    public var metadata: OAuth2ServerMetadata

    /// When it was fetched.
    public var fetchedAt: Date

    /// Creates an entry.
    ///
    /// - Parameters:
    ///   - metadata: The metadata.
    ///   - fetchedAt: When it was fetched.
    public init(metadata: OAuth2ServerMetadata, fetchedAt: Date) {
        self.metadata = metadata
        self.fetchedAt = fetchedAt
    }

    private enum CodingKeys: String, CodingKey {
        case version
        case fetchedAt = "fetched_at"
        case metadata
    }

    /// Decodes an entry of ``formatVersion``.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError`, also for another version or a time that is not a finite number.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard try container.decode(Int.self, forKey: .version) == Self.formatVersion else {
            throw DecodingError.dataCorruptedError(forKey: .version, in: container, debugDescription: "another version")
        }
        let seconds = try container.decode(Double.self, forKey: .fetchedAt)
        guard seconds.isFinite else {
            throw DecodingError.dataCorruptedError(forKey: .fetchedAt, in: container, debugDescription: "not finite")
        }
        fetchedAt = Date(timeIntervalSince1970: seconds)
        metadata = try container.decode(OAuth2ServerMetadata.self, forKey: .metadata)
    }

    /// Encodes the entry, with ``formatVersion``.
    ///
    /// - Parameter encoder: The encoder.
    /// - Throws: What the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.formatVersion, forKey: .version)
        try container.encode(fetchedAt.timeIntervalSince1970, forKey: .fetchedAt)
        try container.encode(metadata, forKey: .metadata)
    }
}

/// Where discovery keeps a server's metadata between launches, so that a launch with a stored
/// session needs no network (see
/// ``OAuth2ServerMetadata/discover(issuer:cache:maximumAge:transport:timeout:allowsInsecureHTTP:clock:)``).
///
/// ``FileDiscoveryCache`` keeps it in a private file, beside a `FileSessionStore`'s session;
/// ``InMemoryDiscoveryCache`` for tests and previews. Any other place (the app's defaults, a
/// Keychain item) is a type with these two methods. The metadata is not secret, but it says where
/// tokens are sent: keep it where only the app can write.
public protocol DiscoveryCache: Sendable {

    /// The copy kept, or `nil` if there is none.
    ///
    /// - Returns: The entry.
    /// - Throws: Any error: discovery then treats the cache as empty and asks the server.
    func load() throws -> DiscoveryCacheEntry?

    /// Keeps `entry` in place of any copy.
    ///
    /// - Parameter entry: The entry.
    /// - Throws: Any error: discovery ignores it (the metadata it fetched is used all the same).
    func save(_ entry: DiscoveryCacheEntry) throws
}

/// Why a ``FileDiscoveryCache`` could not read or write its file. No case carries the file's
/// content.
///
/// All operations are thread-safe.
public enum DiscoveryCacheError: Error, Sendable, Hashable, CustomStringConvertible {

    /// The file holds something that is not an entry this version reads: not JSON, a member
    /// missing or of the wrong type, another format version, or larger than
    /// ``FileDiscoveryCache/maximumFileSize``. `reason` names the member, never its value.
    case corrupt(reason: String)

    /// The file or its folder cannot be used: a symbolic link, another user's, readable or
    /// writable by others, or an I/O failure (see `SessionStoreError`).
    case file(SessionStoreError)

    /// What went wrong, without the file's content.
    public var description: String {
        switch self {
        case .corrupt(let reason): "the discovery cache is unreadable: \(reason)"
        case .file(let error): "the discovery cache cannot be used: \(error)"
        }
    }

    /// The reason for a decoding failure: where in the file, never a value.
    static func reason(for error: any Error) -> String {
        func path(_ codingPath: [any CodingKey], _ key: (any CodingKey)? = nil) -> String {
            let keys = (codingPath + (key.map { [$0] } ?? [])).map(\.stringValue)
            return keys.isEmpty ? "the file" : keys.joined(separator: ".")
        }
        guard let decoding = error as? DecodingError else { return "not an entry" }
        switch decoding {
        case .keyNotFound(let key, let context): return "\(path(context.codingPath, key)) is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(path(context.codingPath)) has the wrong type"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not JSON" : "\(path(context.codingPath)) is invalid"
        @unknown default: return "not an entry"
        }
    }
}

/// A ``DiscoveryCache`` in one JSON file, `oauth-discovery.json` by default, kept with the file
/// store's care: mode 0600 in a folder of mode 0700 (created if missing), never read through a
/// symbolic link nor when it or its folder belongs to another user or is open to others, and
/// replaced by a rename, so a reader sees the old copy or the new one, never a mix. On Apple
/// platforms each new file gets the session file's safeguards too (excluded from backups; on iOS,
/// readable from the first unlock after a restart, as a background launch needs).
///
/// ```swift
/// let store = try FileSessionStore(applicationName: "com.example.cli")
/// let cache = FileDiscoveryCache(beside: store)   // session.json and oauth-discovery.json
/// ```
///
/// A file that cannot be used (see ``DiscoveryCacheError``) is a ``DiscoveryCacheError`` from
/// ``load()``; discovery then asks the server and ``save(_:)`` replaces it. A save killed before
/// its rename may leave a `.oauth-discovery.json.tmp-*` file in the folder, which holds metadata
/// only.
///
/// All operations are thread-safe.
public final class FileDiscoveryCache: DiscoveryCache {

    /// The file name used when none is given.
    public static let defaultFileName = "oauth-discovery.json"

    /// The largest file read as an entry, in bytes (metadata is a few kilobytes).
    public static let maximumFileSize = 256 * 1024

    /// The file.
    public let fileURL: URL

    private let path: String
    private let directoryPath: String

    /// Creates a cache in the file `fileName` of `directory`. Nothing is read or created yet.
    ///
    /// - Parameters:
    ///   - directory: The folder; created with mode 0700 on the first save if missing.
    ///   - fileName: The file's name.
    public init(directory: URL, fileName: String = FileDiscoveryCache.defaultFileName) {
        fileURL = directory.standardizedFileURL.appendingPathComponent(fileName, isDirectory: false)
        path = fileURL.path
        directoryPath = fileURL.deletingLastPathComponent().path
    }

    /// Creates a cache in the folder of `store`, beside its session file: a sign-out leaves it
    /// (it holds no token).
    ///
    /// - Parameters:
    ///   - store: The session store.
    ///   - fileName: The file's name.
    public convenience init(beside store: FileSessionStore, fileName: String = FileDiscoveryCache.defaultFileName) {
        self.init(directory: store.directory, fileName: fileName)
    }

    /// Reads the file.
    ///
    /// - Returns: The entry, or `nil` when the folder or the file does not exist.
    /// - Throws: ``DiscoveryCacheError``: ``DiscoveryCacheError/corrupt(reason:)`` for bytes that
    ///   are not an entry, ``DiscoveryCacheError/file(_:)`` for a file or folder that cannot be
    ///   used. The file is left as it is.
    public func load() throws(DiscoveryCacheError) -> DiscoveryCacheEntry? {
        let data: Data
        do {
            guard let read = try PrivateFile.read(path, in: directoryPath, limit: Self.maximumFileSize) else {
                return nil
            }
            data = read
        } catch {
            throw .file(error)
        }
        guard data.count <= Self.maximumFileSize else {
            throw .corrupt(reason: "larger than \(Self.maximumFileSize) bytes")
        }
        do {
            return try JSONDecoder().decode(DiscoveryCacheEntry.self, from: data)
        } catch {
            throw .corrupt(reason: DiscoveryCacheError.reason(for: error))
        }
    }

    /// Replaces the file with `entry`.
    ///
    /// - Parameter entry: The entry.
    /// - Throws: ``DiscoveryCacheError/file(_:)``, the file unchanged: a folder that is a link,
    ///   another user's or open to others, or an I/O failure.
    public func save(_ entry: DiscoveryCacheEntry) throws(DiscoveryCacheError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(entry)
        } catch {
            throw .corrupt(reason: "the entry cannot be encoded")
        }
        do {
            try PrivateFile.replace(path, in: directoryPath, with: data)
        } catch {
            throw .file(error)
        }
    }
}

/// A ``DiscoveryCache`` in memory: for tests, previews, and an app that keeps one service for its
/// life.
///
/// All operations are thread-safe.
public final class InMemoryDiscoveryCache: DiscoveryCache {

    private let state: ConcurrencySafeContainer<DiscoveryCacheEntry?>

    /// Creates a cache holding `entry`, or nothing.
    ///
    /// - Parameter entry: The entry.
    public init(_ entry: DiscoveryCacheEntry? = nil) {
        state = ConcurrencySafeContainer(entry)
    }

    /// The entry kept.
    public var entry: DiscoveryCacheEntry? { state.withLock { $0 } }

    /// The entry kept.
    ///
    /// - Returns: The entry, or `nil`.
    public func load() -> DiscoveryCacheEntry? { entry }

    /// Keeps `entry`.
    ///
    /// - Parameter entry: The entry.
    public func save(_ entry: DiscoveryCacheEntry) {
        state.withLock { $0 = entry }
    }
}
