import Foundation

/// The stored form of a ``ManagedSession``: versioned JSON, so that a file written by one version
/// of the package loads in every later one.
///
/// ```json
/// {
///   "format": "AuthSessionKit.session",
///   "version": 2,
///   "session": {
///     "access_token": "…", "refresh_token": "…", "id_token": "…", "token_type": "Bearer",
///     "scope": "openid profile", "expires_at": 1800003600, "issued_at": 1800000000,
///     "user": { "subject": "…", "name": "…", "email": "…", "profile": {} },
///     "biometric_authentication_enabled": false,
///     "lineage": "…",
///     "issued_to": { "issuer": "https://…", "client_id": "…" }
///   }
/// }
/// ```
///
/// A new version adds a decoder for its own layout and keeps the old ones, converting what they
/// read; every version's layout has a fixture file in the tests. Version 2 added `lineage` (the
/// sign-in a session descends from), which lets a session without a subject be stored: version 1
/// required a subject, and reads as a session without a lineage. Version 2 later gained the
/// optional `issued_to` (``ManagedSession/origin``): a version without it reads the file as
/// before, skipping the member (`JSONDecoder` ignores it), and its next write drops it, which the
/// next refresh here records again.
enum SessionFormat {

    /// The version this package writes.
    static let currentVersion = 2

    /// The value of `format`, so that another JSON file is not mistaken for a session.
    static let formatName = "AuthSessionKit.session"

    /// What decoding stored bytes found.
    enum Decoded {
        case session(ManagedSession)
        /// Written by a newer version; leave it alone.
        case unsupportedVersion(Int)
        /// Not a session: the reason names what is wrong, never a value.
        case corrupt(String)
    }

    /// The bytes that store `session`, in the current version.
    static func encode(_ session: ManagedSession) -> Data {
        let document = DocumentV1(format: formatName, version: currentVersion, session: SessionV1(session))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding a struct of strings, numbers and booleans cannot fail.
        return (try? encoder.encode(document)) ?? Data()
    }

    /// The session stored as `data`, for a store's `load()`: bytes over the store's limit are
    /// corrupt, a newer version's session is ``SessionStoreError/unsupportedFormatVersion(found:newestSupported:)``,
    /// and corrupt bytes are ``SessionStoreError/corrupt(reason:setAsideAt:)`` once `setAside` has
    /// moved them (it returns where, or `nil`).
    static func storedSession(
        in data: Data,
        limit: Int = FileSessionStore.maximumFileSize,
        setAside: () -> String?
    ) throws(SessionStoreError) -> ManagedSession {
        let decoded = data.count > limit ? .corrupt("larger than \(limit) bytes") : decode(data)
        switch decoded {
        case .session(let session):
            return session
        case .unsupportedVersion(let version):
            throw .unsupportedFormatVersion(found: version, newestSupported: currentVersion)
        case .corrupt(let reason):
            throw .corrupt(reason: reason, setAsideAt: setAside())
        }
    }

    /// Reads stored bytes, in any version this package knows.
    ///
    /// One pass: `format` and `version` are read first, and the session is decoded only in a
    /// layout this version knows, so a newer version's session, whatever its shape, is reported
    /// as unsupported rather than corrupt.
    static func decode(_ data: Data) -> Decoded {
        guard !data.isEmpty else { return .corrupt("the file is empty") }
        // The common case, a current document as this package writes it, without JSONDecoder.
        if let session = SessionFormatScanner.session(in: data) {
            return validated(session)
        }
        return decodeWithJSONDecoder(data)
    }

    /// ``decode(_:)`` without the scanner: every document the scanner declines, and the reference
    /// the scanner is tested against.
    static func decodeWithJSONDecoder(_ data: Data) -> Decoded {
        guard !data.isEmpty else { return .corrupt("the file is empty") }
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: data)
        } catch let error as DecodingError {
            return .corrupt(reason(error))
        } catch {
            return .corrupt("not JSON")
        }
        switch document.content {
        case .notASession:
            return .corrupt("not a session file")
        case .version1(let session):
            return validated(session.managedSession(lineageIfVersion2: false))
        case .version2(let session):
            return validated(session.managedSession(lineageIfVersion2: true))
        case .otherVersion(let version) where version > currentVersion:
            return .unsupportedVersion(version)
        case .otherVersion(let version):
            return .corrupt("format version \(version) does not exist")
        }
    }

    /// A decoded session that cannot be used is as good as corrupt.
    private static func validated(_ session: ManagedSession) -> Decoded {
        if session.accessToken.isEmpty { return .corrupt("the access token is empty") }
        if session.user.identifier.isEmpty, session.lineage?.isEmpty ?? true {
            // Neither a subject nor a lineage: nothing tells whose session it is.
            return .corrupt("the user's subject is empty and the session has no lineage")
        }
        if session.lineage?.isEmpty == true { return .corrupt("the lineage is empty") }
        if !session.expiresAt.isFinite || !session.issuedAt.isFinite { return .corrupt("a date is not a number") }
        return .session(session)
    }

    /// What went wrong, by field name and kind; never a value.
    private static func reason(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context, _ key: (any CodingKey)? = nil) -> String {
            let keys = context.codingPath + (key.map { [$0] } ?? [])
            return keys.isEmpty
                ? "the document"
                : keys.map { $0.intValue.map(String.init) ?? $0.stringValue }
                    .joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing field \(path(context, key))"
        case .typeMismatch(_, let context): return "field \(path(context)) has the wrong type"
        case .valueNotFound(_, let context): return "field \(path(context)) is null"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not JSON" : "unreadable field \(path(context))"
        @unknown default: return "unreadable"
        }
    }

    // MARK: - Layouts

    /// Any version's document: the fields every version has (`format`, then `version`), read
    /// first to choose the layout, then the session in that layout.
    private struct Document: Decodable {
        enum Content {
            case notASession
            case version1(SessionV1)
            case version2(SessionV1)
            /// A version with no layout here; its session is not read.
            case otherVersion(Int)
        }

        let content: Content

        enum CodingKeys: String, CodingKey {
            case format
            case version
            case session
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let format = try container.decode(String.self, forKey: .format)
            let version = try container.decode(Int.self, forKey: .version)
            guard format == SessionFormat.formatName else {
                content = .notASession
                return
            }
            switch version {
            case 1: content = .version1(try container.decode(SessionV1.self, forKey: .session))
            case 2: content = .version2(try container.decode(SessionV1.self, forKey: .session))
            default: content = .otherVersion(version)
            }
        }
    }

    /// The layout of versions 1 and 2, as written (version 1 has no `lineage`).
    private struct DocumentV1: Encodable {
        let format: String
        let version: Int
        let session: SessionV1
    }

    private struct SessionV1: Codable {
        let accessToken: String
        let refreshToken: String?
        let idToken: String?
        let tokenType: String
        let scope: String?
        let expiresAt: TimeInterval
        let issuedAt: TimeInterval
        let user: ManagedUser
        let biometricAuthenticationEnabled: Bool
        let lineage: String?
        let issuedTo: SessionOrigin?

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case refreshToken = "refresh_token"
            case idToken = "id_token"
            case tokenType = "token_type"
            case scope
            case expiresAt = "expires_at"
            case issuedAt = "issued_at"
            case user
            case biometricAuthenticationEnabled = "biometric_authentication_enabled"
            case lineage
            case issuedTo = "issued_to"
        }

        init(_ session: ManagedSession) {
            accessToken = session.accessToken
            refreshToken = session.refreshToken
            idToken = session.idToken
            tokenType = session.tokenType
            scope = session.scope
            expiresAt = session.expiresAt
            issuedAt = session.issuedAt
            user = session.user
            biometricAuthenticationEnabled = session.isBiometricAuthenticationEnabled
            lineage = session.lineage
            issuedTo = session.origin
        }

        /// The session; version 1 knows no lineage and no origin, and those found in it are not
        /// read.
        func managedSession(lineageIfVersion2 isVersion2: Bool) -> ManagedSession {
            ManagedSession(
                accessToken: accessToken,
                refreshToken: refreshToken,
                idToken: idToken,
                tokenType: tokenType,
                scope: scope,
                expiresAt: expiresAt,
                issuedAt: issuedAt,
                user: user,
                isBiometricAuthenticationEnabled: biometricAuthenticationEnabled,
                lineage: isVersion2 ? lineage : nil,
                origin: isVersion2 ? issuedTo : nil
            )
        }
    }
}
