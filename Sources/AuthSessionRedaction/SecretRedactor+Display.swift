import Foundation

extension SecretRedactor {

    /// Secrets the request being answered carried, scrubbed from every text an error takes in
    /// while they are set, however short: a short password or client secret that `SecretRedactor`
    /// does not register. A client sets them around a request; every error description of the package
    /// is cleaned through ``sanitized(_:)``.
    @TaskLocal package static var requestSecrets: [String] = []

    /// The longest server description kept, in characters.
    package static let descriptionLimit = 200

    /// A server's text made safe to show: the request's secrets and every registered or
    /// credential-shaped word redacted (on the raw text); control, format (bidirectional
    /// overrides) and line-separator characters replaced; shortened.
    package static func sanitized(_ text: String) -> String {
        // Secrets go first, on the raw text: cleaning or shortening could split one.
        let secrets = requestSecrets.filter { $0.count >= 3 }.sorted { $0.count > $1.count }
        let scrubbed = secrets.reduce(text) { $0.replacingOccurrences(of: $1, with: placeholder) }
        let redacted = redact(scrubbed)
        let cleaned = String(
            String.UnicodeScalarView(
                redacted.unicodeScalars.map { scalar in
                    switch scalar.properties.generalCategory {
                    case .control, .format, .lineSeparator, .paragraphSeparator: return " "
                    default: return scalar
                    }
                }
            )
        )
        guard cleaned.count > descriptionLimit else { return cleaned }
        return String(cleaned.prefix(descriptionLimit)) + "…"
    }
}
