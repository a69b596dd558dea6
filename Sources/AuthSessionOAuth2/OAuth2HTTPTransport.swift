import AuthSessionProviders
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends one HTTP request and returns the answer: the seam between ``OAuth2Service`` and the
/// network.
///
/// ``URLSessionTransport`` is the real one. Tests pass a transport that answers from a script,
/// so hostile answers (a 10 MB body, invalid UTF-8, an HTML 500) can be tried without a server.
///
/// Conformers must be thread-safe; requests may overlap.
public protocol OAuth2HTTPTransport: Sendable {

    /// Sends `request` and returns the answer, whatever its status.
    ///
    /// Must not follow redirects: a 3xx is returned as it is. Must stop reading, and throw
    /// `RemoteAuthError.Reason.responseTooLarge(limit:)`, once the body exceeds
    /// `maximumResponseSize` bytes. Cancelling the calling task cancels the request.
    ///
    /// - Parameters:
    ///   - request: The request; its `timeoutInterval` is the timeout.
    ///   - maximumResponseSize: The largest body accepted, in bytes.
    /// - Returns: The status, the headers and the body.
    /// - Throws: `RemoteAuthError` with reason `RemoteAuthError.Reason.network(code:)`,
    ///   `RemoteAuthError.Reason.timedOut`, `RemoteAuthError.Reason.responseTooLarge(limit:)`
    ///   or `RemoteAuthError.Reason.cancelled`.
    func send(_ request: URLRequest, maximumResponseSize: Int) async throws(RemoteAuthError) -> OAuth2HTTPResponse
}

/// An HTTP answer: status, headers, body.
///
/// All operations are thread-safe.
public struct OAuth2HTTPResponse: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{

    /// The HTTP status code.
    public var statusCode: Int

    /// The headers, with lowercased names.
    public var headers: [String: String]

    /// The body.
    public var body: Data

    /// Creates an answer.
    ///
    /// - Parameters:
    ///   - statusCode: The status code.
    ///   - headers: The headers; names are lowercased here.
    ///   - body: The body.
    public init(statusCode: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.statusCode = statusCode
        self.headers = Dictionary(
            headers.map { ($0.key.lowercased(), $0.value) },
            uniquingKeysWith: { _, last in last }
        )
        self.body = body
    }

    /// The value of header `name` (any case), if present.
    ///
    /// - Parameter name: The header's name.
    /// - Returns: Its value.
    public func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }

    /// The status, the header names and the body's size; never a header value or the body,
    /// which may carry tokens or cookies.
    public var description: String {
        "OAuth2HTTPResponse(\(statusCode), headers: [\(headers.keys.sorted().joined(separator: ", "))], body: \(body.count) bytes)"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror with the status, the header names and the body's size only.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["statusCode": statusCode, "headerNames": headers.keys.sorted(), "bodySize": body.count],
            displayStyle: .struct
        )
    }
}
