#if canImport(Glibc)
import Foundation
import Glibc

/// A loopback HTTP/1.1 proxy that sits between a client and a local server and injects faults on demand.
///
/// Point the client at ``url(forUpstream:)`` instead of the server. Each request is parsed, recorded in
/// ``requests`` and, unless a fault says otherwise, forwarded to `127.0.0.1:upstreamPort` over a new connection
/// that carries `Connection: close`. The response goes back with an exact `Content-Length` and no
/// `Connection: close`, so the client's keep-alive connection stays usable. The `Host` header is forwarded
/// unchanged, so absolute URLs the server builds point back through the proxy.
///
/// Call ``stop()`` when done (`deinit` calls it too): it closes every socket and waits for every thread to end.
/// Linux only (Glibc sockets, one thread per connection).
final class FaultProxy: Sendable {

    /// What the proxy does to the next request(s) instead of passing them through.
    enum Fault: Sendable {
        /// Forward the request, then hold the response this long before writing it, so the client times out first.
        case delay(seconds: Double)
        /// Forward the request, write the status line, headers and half the body, then reset the connection (RST).
        case resetMidResponse
        /// Answer with this response without forwarding the request; `Content-Length` is computed from `body`.
        case respond(status: Int, reason: String, headers: [String: String], body: Data)
        /// Forward the request, write the status line, headers (with the full `Content-Length`) and half the body,
        /// then close the connection normally (FIN).
        case truncateBody
        /// Close the listening socket, so new connections are refused, and close the open client connections.
        ///
        /// A count is ignored: refusal lasts until the next ``FaultProxy/setFault(_:count:)``, which listens again
        /// on the same port.
        case refuseConnections
    }

    /// One request as the proxy received it from the client, before any fault was applied.
    struct RecordedRequest: Sendable, Equatable {
        /// The request method, e.g. `POST`.
        let method: String
        /// The request target as sent: the path plus any query string, e.g. `/o/token/?a=1`.
        let path: String
        /// The header fields keyed by lower-cased name; repeated fields are joined with `", "`.
        let headers: [String: String]
        /// The request body; empty when there was none.
        let body: Data

        /// The value of the header field `name`, matched case-insensitively.
        func value(forHeader name: String) -> String? {
            headers[name.lowercased()]
        }

        /// The body decoded as `application/x-www-form-urlencoded` fields; a repeated name keeps its last value.
        var formParameters: [String: String] {
            var parameters: [String: String] = [:]
            for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let decoded = parts.map { part in
                    let text = part.replacingOccurrences(of: "+", with: " ")
                    return text.removingPercentEncoding ?? text
                }
                parameters[decoded[0]] = decoded.count > 1 ? decoded[1] : ""
            }
            return parameters
        }
    }

    /// The port the proxy listens on, on 127.0.0.1; it stays the same across ``Fault/refuseConnections``.
    let port: UInt16
    private let engine: ProxyEngine

    /// Starts listening on an ephemeral port of 127.0.0.1 (or of another loopback address, such as
    /// 127.0.0.2 to stand for another host), forwarding to `127.0.0.1:upstreamPort`.
    ///
    /// - Throws: `POSIXError` if the listening socket cannot be set up.
    init(upstreamPort: UInt16, listeningOn address: String = "127.0.0.1") throws {
        engine = try ProxyEngine(upstreamPort: upstreamPort, address: inet_addr(address))
        port = engine.port
    }

    deinit {
        engine.stop()
    }

    /// Every request received so far, in order of arrival, including those answered by a fault.
    var requests: [RecordedRequest] {
        engine.recordedRequests
    }

    /// How many client connections the proxy has accepted so far; a keep-alive client reuses one.
    var connectionCount: Int {
        engine.acceptedConnections
    }

    /// The same URL with scheme `http`, host `127.0.0.1` and the proxy's port, keeping path, query and fragment.
    func url(forUpstream url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return url
        }
        components.scheme = "http"
        components.host = "127.0.0.1"
        components.port = Int(port)
        return components.url ?? url
    }

    /// Sets the fault for the next requests; `nil` passes them through.
    ///
    /// With a `count`, the fault applies to that many requests and then clears itself (a count below 1 clears it
    /// now); with no count it lasts until changed. ``Fault/refuseConnections`` takes effect before this returns.
    /// Any other value after it listens again on the same port, so the client reconnects to the same URL.
    func setFault(_ fault: Fault?, count: Int? = nil) {
        engine.setFault(fault, count: count)
    }

    /// Closes every socket and waits (up to 10 s) for every proxy thread to end; a pending delay ends at once.
    ///
    /// Idempotent. After it, connections are refused and ``setFault(_:count:)`` does nothing.
    func stop() {
        engine.stop()
    }
}

// MARK: - Engine

/// The proxy's sockets, threads and shared state; ``FaultProxy`` is its public face.
private final class ProxyEngine: @unchecked Sendable {
    // Unchecked: the `let`s are immutable and Sendable, and every `var` is read and written only holding `condition`.

    /// Whose socket a registered descriptor is, so refusal can close client connections only.
    private enum Role {
        case client
        case upstream
    }

    /// What a connection thread does with a request it has read.
    private enum Admission {
        case drop
        case handle(FaultProxy.Fault?)
    }

    let upstreamPort: UInt16
    let port: UInt16
    /// The IPv4 address listened on, in network byte order.
    private let address: in_addr_t
    /// Guards every `var` below; broadcast when a thread ends, a listener closes or the proxy stops.
    private let condition = NSCondition()
    /// Serializes `setFault` and `stop`, so refusing, listening again and stopping never interleave.
    private let control = NSLock()

    private var fault: FaultProxy.Fault?
    private var remaining: Int?
    private var recorded: [FaultProxy.RecordedRequest] = []
    private var accepted = 0
    private var stopped = false
    private var refusing = false
    /// The listening socket; its accept thread owns it, closes it and then sets this to `nil`.
    private var listenerFD: Int32?
    /// While refusing: a socket bound to `port` but not listening, which keeps the port ours until we listen again.
    private var reservedFD: Int32?
    /// Open client and upstream sockets; each is owned, and closed, by the thread that registered it.
    private var clientFDs: Set<Int32> = []
    private var upstreamFDs: Set<Int32> = []
    private var liveThreads = 0

    /// Binds and listens on an ephemeral port of `address` and starts the accept thread.
    init(upstreamPort: UInt16, address: in_addr_t) throws {
        self.upstreamPort = upstreamPort
        self.address = address
        let fd = try openBoundSocket(port: 0, address: address)
        guard listen(fd, 128) == 0, let boundPort = localPort(of: fd) else {
            let error = posixError(errno)
            close(fd)
            throw error
        }
        port = boundPort
        condition.lock()
        startAcceptThreadLocked(listener: fd)
        condition.unlock()
    }

    /// A copy of every request recorded so far, in order of arrival.
    var recordedRequests: [FaultProxy.RecordedRequest] {
        condition.lock()
        defer { condition.unlock() }
        return recorded
    }

    /// How many client connections have been accepted so far.
    var acceptedConnections: Int {
        condition.lock()
        defer { condition.unlock() }
        return accepted
    }

    /// Installs `newFault`; see ``FaultProxy/setFault(_:count:)``.
    func setFault(_ newFault: FaultProxy.Fault?, count: Int?) {
        control.lock()
        defer { control.unlock() }
        condition.lock()
        defer { condition.unlock() }
        guard !stopped else {
            return
        }
        if case .refuseConnections = newFault {
            fault = nil
            remaining = nil
            refuseLocked()
            return
        }
        if refusing {
            listenAgainLocked()
        }
        if newFault == nil || (count ?? 1) < 1 {
            fault = nil
            remaining = nil
        } else {
            fault = newFault
            remaining = count
        }
    }

    /// Shuts every socket down, wakes pending delays and waits up to 10 s for all threads to end; idempotent.
    func stop() {
        control.lock()
        defer { control.unlock() }
        condition.lock()
        defer { condition.unlock() }
        guard !stopped else {
            return
        }
        stopped = true
        fault = nil
        remaining = nil
        if let listener = listenerFD {
            shutdown(listener, Int32(SHUT_RDWR))
        }
        if let reserved = reservedFD {
            close(reserved)
            reservedFD = nil
        }
        for fd in clientFDs.union(upstreamFDs) {
            shutdown(fd, Int32(SHUT_RDWR))
        }
        condition.broadcast()
        let deadline = Date(timeIntervalSinceNow: 10)
        while liveThreads > 0 && Date() < deadline {
            _ = condition.wait(until: deadline)
        }
        if liveThreads > 0 {
            FileHandle.standardError.write(Data("FaultProxy: \(liveThreads) thread(s) still running after stop\n".utf8))
        }
    }

    // MARK: Listening

    /// Closes the listener (new connects get `ECONNREFUSED`) and the client connections; the caller holds `condition`.
    ///
    /// Returns once the listening socket is closed, holding the port with a bound, non-listening socket.
    private func refuseLocked() {
        guard !refusing else {
            return
        }
        refusing = true
        if let listener = listenerFD {
            shutdown(listener, Int32(SHUT_RDWR))
        }
        for fd in clientFDs {
            shutdown(fd, Int32(SHUT_RDWR))
        }
        let deadline = Date(timeIntervalSinceNow: 5)
        while listenerFD != nil && Date() < deadline {
            _ = condition.wait(until: deadline)
        }
        reservedFD = try? openBoundSocket(port: port, address: address)
    }

    /// Listens again on `port` after a refusal, retrying for about 2 s; the caller holds `condition`.
    ///
    /// On failure it stays refusing and says why on standard error.
    private func listenAgainLocked() {
        var candidate = reservedFD
        reservedFD = nil
        var lastError: Int32 = 0
        for _ in 0..<40 {
            if candidate == nil {
                do {
                    candidate = try openBoundSocket(port: port, address: address)
                } catch {
                    lastError = error.code.rawValue
                }
            }
            if let fd = candidate {
                if listen(fd, 128) == 0 {
                    refusing = false
                    startAcceptThreadLocked(listener: fd)
                    return
                }
                lastError = errno
                close(fd)
                candidate = nil
            }
            // Releases `condition` while waiting, so connection threads carry on; `stop` waits for `control`.
            _ = condition.wait(until: Date(timeIntervalSinceNow: 0.05))
        }
        let message = "FaultProxy: cannot listen again on 127.0.0.1:\(port): \(String(cString: strerror(lastError)))\n"
        FileHandle.standardError.write(Data(message.utf8))
    }

    /// Makes `listener` the listening socket and starts the thread that accepts on it; the caller holds `condition`.
    private func startAcceptThreadLocked(listener: Int32) {
        listenerFD = listener
        spawnLocked(named: "FaultProxy-acc") { [self] in
            acceptLoop(listener: listener)
        }
    }

    /// Accepts connections until `listener` is shut down, starting a thread per connection, then closes it.
    private func acceptLoop(listener: Int32) {
        while true {
            let client = accept(listener, nil, nil)
            if client >= 0 {
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)  // `accept4` is not imported; see `openBoundSocket`.
                condition.lock()
                if stopped || refusing {
                    close(client)
                } else {
                    clientFDs.insert(client)
                    accepted += 1
                    spawnLocked(named: "FaultProxy-conn") { [self] in
                        serve(client: client)
                    }
                }
                condition.unlock()
                continue
            }
            let error = errno
            if error == EINTR || error == ECONNABORTED || error == EPROTO {
                continue
            }
            if error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM {
                condition.lock()
                let ending = stopped || refusing
                condition.unlock()
                if !ending {
                    usleep(10_000)
                    continue
                }
            }
            break  // EINVAL once shut down, or an unexpected error.
        }
        condition.lock()
        if listenerFD == listener {
            listenerFD = nil
        }
        close(listener)
        condition.broadcast()
        condition.unlock()
    }

    // MARK: Threads and sockets

    /// Starts a thread running `body` and counts it as live until it returns; the caller holds `condition`.
    private func spawnLocked(named name: String, _ body: @escaping @Sendable () -> Void) {
        liveThreads += 1
        let thread = Thread { [self] in
            Thread.current.name = name  // Set from the thread itself, so it shows in debuggers and /proc.
            body()
            condition.lock()
            liveThreads -= 1
            condition.broadcast()
            condition.unlock()
        }
        thread.start()
    }

    /// Registers `fd` so `stop` (and refusal, for a client) can shut it down; false, and no registration, once stopped.
    private func register(_ fd: Int32, as role: Role) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopped else {
            return false
        }
        switch role {
        case .client:
            clientFDs.insert(fd)
        case .upstream:
            upstreamFDs.insert(fd)
        }
        return true
    }

    /// Unregisters and closes `fd`; with `reset`, the close sends RST instead of FIN (`SO_LINGER` 0).
    private func release(_ fd: Int32, as role: Role, reset: Bool = false) {
        condition.lock()
        switch role {
        case .client:
            clientFDs.remove(fd)
        case .upstream:
            upstreamFDs.remove(fd)
        }
        condition.unlock()
        if reset {
            var option = linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        }
        close(fd)
    }

    /// Waits until `seconds` have passed; returns false at once if the proxy stops meanwhile.
    private func pause(seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while !stopped && Date() < deadline {
            _ = condition.wait(until: deadline)
        }
        return !stopped
    }

    // MARK: Serving a client

    /// Records `request` and takes the fault that applies to it, counting down a count-limited fault.
    private func admit(_ request: ParsedRequest) -> Admission {
        condition.lock()
        defer { condition.unlock() }
        recorded.append(request.recorded)
        guard !stopped && !refusing else {
            return .drop
        }
        let current = fault
        if let count = remaining {
            if count <= 1 {
                fault = nil
                remaining = nil
            } else {
                remaining = count - 1
            }
        }
        return .handle(current)
    }

    /// Serves requests on one client connection, one after another, until it closes or a fault ends it.
    private func serve(client fd: Int32) {
        var reader = RequestReader(fd: fd)
        var reset = false
        connection: while true {
            let request: ParsedRequest
            switch reader.next() {
            case .closed:
                break connection
            case .malformed(let status, let reason):
                let response = ProxyResponse.text(status: status, reason: reason, "FaultProxy: \(reason)\n")
                _ = sendAll(fd, response.serialized(method: "GET", closing: true))
                break connection
            case .request(let parsed):
                request = parsed
            }
            guard case .handle(let fault) = admit(request) else {
                break connection
            }
            let closing = request.wantsClose
            switch fault {
            case nil:
                let response = forward(request)
                guard sendAll(fd, response.serialized(method: request.method, closing: closing)), !closing else {
                    break connection
                }
            case .delay(let seconds):
                let response = forward(request)
                guard pause(seconds: seconds),
                    sendAll(fd, response.serialized(method: request.method, closing: closing)), !closing
                else {
                    break connection
                }
            case .respond(let status, let reason, let headers, let body):
                let response = ProxyResponse(
                    status: status,
                    reason: reason,
                    fields: headers.sorted { $0.key < $1.key }.map { HeaderField(name: $0.key, value: $0.value) },
                    body: [UInt8](body)
                )
                guard sendAll(fd, response.serialized(method: request.method, closing: closing)), !closing else {
                    break connection
                }
            case .truncateBody:
                let response = forward(request)
                let half = response.body.count / 2
                _ = sendAll(fd, response.serialized(method: request.method, closing: false, bodyLimit: half))
                break connection
            case .resetMidResponse:
                let response = forward(request)
                let half = response.body.count / 2
                if sendAll(fd, response.serialized(method: request.method, closing: false, bodyLimit: half)) {
                    waitUntilDelivered(fd)
                }
                reset = true
                break connection
            case .refuseConnections:
                break connection
            }
        }
        release(fd, as: .client, reset: reset)
    }

    /// Sends `request` to the upstream over a new `Connection: close` connection and reads its whole response.
    ///
    /// Any failure to reach the upstream or to read a complete response becomes a 502 with a short text body.
    private func forward(_ request: ParsedRequest) -> ProxyResponse {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            return .badGateway("cannot create a socket: \(String(cString: strerror(errno)))")
        }
        guard register(fd, as: .upstream) else {
            close(fd)
            return .badGateway("the proxy is stopping")
        }
        defer { release(fd, as: .upstream) }
        let connectError = connectToLoopback(fd, port: upstreamPort)
        guard connectError == 0 else {
            let reason = String(cString: strerror(connectError))
            return .badGateway("cannot reach upstream 127.0.0.1:\(upstreamPort): \(reason)")
        }
        guard sendAll(fd, request.upstreamBytes()) else {
            return .badGateway("cannot send the request to upstream 127.0.0.1:\(upstreamPort)")
        }
        var buffer: [UInt8] = []
        while true {
            switch parseResponse(buffer, method: request.method, atEndOfStream: false) {
            case .complete(let response):
                return response
            case .invalid(let reason):
                return .badGateway(reason)
            case .incomplete:
                break
            }
            if !receive(fd, into: &buffer) {
                switch parseResponse(buffer, method: request.method, atEndOfStream: true) {
                case .complete(let response):
                    return response
                case .invalid(let reason):
                    return .badGateway(reason)
                case .incomplete:
                    return .badGateway("upstream closed the connection before a complete response")
                }
            }
        }
    }
}

// MARK: - HTTP messages

/// One header field, with its name as received.
private struct HeaderField {
    let name: String
    let value: String
}

/// A request read from the client.
private struct ParsedRequest {
    let method: String
    let target: String
    let version: String
    let fields: [HeaderField]
    let hasContentLength: Bool
    let body: [UInt8]

    /// Whether the client asked to close the connection after this request.
    var wantsClose: Bool {
        let tokens = connectionTokens(fields)
        return tokens.contains("close") || (version == "HTTP/1.0" && !tokens.contains("keep-alive"))
    }

    /// The request as recorded for tests.
    var recorded: FaultProxy.RecordedRequest {
        var headers: [String: String] = [:]
        for field in fields {
            let key = field.name.lowercased()
            headers[key] = headers[key].map { "\($0), \(field.value)" } ?? field.value
        }
        return FaultProxy.RecordedRequest(method: method, path: target, headers: headers, body: Data(body))
    }

    /// The request for the upstream: hop-by-hop fields dropped, an exact `Content-Length`, and `Connection: close`.
    func upstreamBytes() -> [UInt8] {
        let dropped = connectionTokens(fields).union(requestHopByHopFields)
        var head = "\(method) \(target) HTTP/1.1\r\n"
        for field in fields where !dropped.contains(field.name.lowercased()) {
            head += "\(field.name): \(field.value)\r\n"
        }
        if hasContentLength || !body.isEmpty {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "Connection: close\r\n\r\n"
        return headBytes(head) + body
    }
}

/// A response on its way to the client.
private struct ProxyResponse {
    var status: Int
    var reason: String
    var fields: [HeaderField]
    var body: [UInt8]

    /// A response with a plain-text body.
    static func text(status: Int, reason: String, _ text: String) -> ProxyResponse {
        ProxyResponse(
            status: status,
            reason: reason,
            fields: [HeaderField(name: "Content-Type", value: "text/plain; charset=utf-8")],
            body: Array(text.utf8)
        )
    }

    /// The 502 the client gets when the upstream cannot be reached or answers nonsense.
    static func badGateway(_ detail: String) -> ProxyResponse {
        text(status: 502, reason: "Bad Gateway", "FaultProxy: \(detail)\n")
    }

    /// The bytes for the client: hop-by-hop fields dropped and an exact `Content-Length` for the whole body.
    ///
    /// `bodyLimit` writes only that many body bytes (the head still announces the whole body). A response to
    /// `HEAD` keeps the upstream's `Content-Length`; 1xx, 204 and 304 carry none. `closing` adds `Connection: close`.
    func serialized(method: String, closing: Bool, bodyLimit: Int? = nil) -> [UInt8] {
        let isHead = method == "HEAD"
        let bodyless = isHead || (100..<200).contains(status) || status == 204 || status == 304
        var head = "HTTP/1.1 \(status) \(reason)\r\n"
        for field in fields {
            let name = field.name.lowercased()
            if responseHopByHopFields.contains(name) || (name == "content-length" && !isHead) {
                continue
            }
            head += "\(field.name): \(field.value)\r\n"
        }
        if !bodyless {
            head += "Content-Length: \(body.count)\r\n"
        }
        if closing {
            head += "Connection: close\r\n"
        }
        head += "\r\n"
        var bytes = headBytes(head)
        if !bodyless {
            bytes += body.prefix(bodyLimit ?? body.count)
        }
        return bytes
    }
}

/// Fields that concern one connection only, never forwarded upstream (`Connection: close` is added instead).
private let requestHopByHopFields: Set<String> = [
    "connection", "keep-alive", "proxy-connection", "expect", "te", "trailer", "transfer-encoding", "upgrade",
    "content-length",
]

/// Fields that concern the upstream connection only, never passed to the client.
private let responseHopByHopFields: Set<String> = [
    "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
]

/// The lower-cased tokens of the `Connection` fields.
private func connectionTokens(_ fields: [HeaderField]) -> Set<String> {
    var tokens: Set<String> = []
    for field in fields where field.name.lowercased() == "connection" {
        for token in field.value.split(separator: ",") {
            tokens.insert(token.trimmingCharacters(in: .whitespaces).lowercased())
        }
    }
    return tokens
}

/// The value of the first field called `name` (case-insensitive).
private func fieldValue(_ name: String, in fields: [HeaderField]) -> String? {
    fields.first { $0.name.lowercased() == name }?.value
}

/// The index just past the first empty line (`CRLF CRLF`, or bare `LF LF`) at or after `start`, if any.
private func headEnd(in bytes: [UInt8], from start: Int) -> Int? {
    var index = start
    while index < bytes.count {
        if bytes[index] == 0x0A {
            if index + 1 < bytes.count && bytes[index + 1] == 0x0A {
                return index + 2
            }
            if index + 2 < bytes.count && bytes[index + 1] == 0x0D && bytes[index + 2] == 0x0A {
                return index + 3
            }
        }
        index += 1
    }
    return nil
}

/// Splits a message head into its start line and header fields; nil if a field line has no colon.
private func parseHead(_ bytes: ArraySlice<UInt8>) -> (startLine: String, fields: [HeaderField])? {
    // Split bytes, not a String: Swift treats "\r\n" as one Character, which never equals "\n".
    var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
        latin1String(line.last == 0x0D ? line.dropLast() : line)
    }
    while lines.last?.isEmpty == true {
        lines.removeLast()
    }
    guard !lines.isEmpty else {
        return nil
    }
    var fields: [HeaderField] = []
    for line in lines.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else {
            return nil
        }
        let name = line[..<colon].trimmingCharacters(in: .whitespaces)
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        fields.append(HeaderField(name: name, value: value))
    }
    return (lines[0], fields)
}

/// Decodes bytes as ISO Latin-1, so every byte survives a round trip through ``headBytes(_:)``.
private func latin1String(_ bytes: ArraySlice<UInt8>) -> String {
    var scalars = String.UnicodeScalarView()
    scalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
    return String(scalars)
}

/// Encodes a message head: characters up to U+00FF as one byte each (Latin-1), any other as UTF-8.
private func headBytes(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count)
    for scalar in text.unicodeScalars {
        if scalar.value < 0x100 {
            bytes.append(UInt8(scalar.value))
        } else {
            bytes += Array(String(scalar).utf8)
        }
    }
    return bytes
}

/// The result of reading one request from a client connection.
private enum RequestReadResult {
    case request(ParsedRequest)
    case malformed(status: Int, reason: String)
    case closed
}

/// Reads requests one after another from a client connection, keeping bytes that belong to the next request.
private struct RequestReader {
    let fd: Int32
    var buffer: [UInt8] = []

    /// Reads the next request: head, then a `Content-Length` body (sending `100 Continue` if the client expects it).
    ///
    /// Returns `.closed` when the connection ends (even mid-request) and `.malformed` for requests the proxy does
    /// not handle, such as chunked request bodies; the caller answers those and closes.
    mutating func next() -> RequestReadResult {
        var scanned = 0
        var end: Int
        while true {
            // Empty lines before a request line are ignored (RFC 9112, section 2.2); this removes nothing once a
            // request line has begun, so `scanned` stays valid.
            while buffer.first == 0x0D || buffer.first == 0x0A {
                buffer.removeFirst()
            }
            if let found = headEnd(in: buffer, from: scanned) {
                end = found
                break
            }
            if buffer.count > 65_536 {
                return .malformed(status: 431, reason: "Request Header Fields Too Large")
            }
            scanned = max(0, buffer.count - 3)
            guard receive(fd, into: &buffer) else {
                return .closed
            }
        }
        guard let head = parseHead(buffer[0..<end]) else {
            return .malformed(status: 400, reason: "Bad Request")
        }
        let parts = head.startLine.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else {
            return .malformed(status: 400, reason: "Bad Request")
        }
        if let encoding = fieldValue("transfer-encoding", in: head.fields), encoding.lowercased() != "identity" {
            return .malformed(status: 400, reason: "Chunked Request Bodies Not Supported")
        }
        let lengthText = fieldValue("content-length", in: head.fields)
        var length = 0
        if let lengthText {
            guard let value = Int(lengthText), value >= 0 else {
                return .malformed(status: 400, reason: "Bad Content-Length")
            }
            length = value
        }
        let expectsContinue = fieldValue("expect", in: head.fields)?.lowercased() == "100-continue"
        if expectsContinue && length > 0 && buffer.count < end + length {
            guard sendAll(fd, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else {
                return .closed
            }
        }
        while buffer.count < end + length {
            guard receive(fd, into: &buffer) else {
                return .closed
            }
        }
        let body = Array(buffer[end..<(end + length)])
        buffer.removeFirst(end + length)
        return .request(
            ParsedRequest(
                method: String(parts[0]),
                target: String(parts[1]),
                version: String(parts[2]),
                fields: head.fields,
                hasContentLength: lengthText != nil,
                body: body
            )
        )
    }
}

/// How far the bytes read from the upstream make up a response.
private enum ResponseParseResult {
    case incomplete
    case invalid(String)
    case complete(ProxyResponse)
}

/// Parses the upstream's response to a `method` request, skipping interim 1xx responses and de-chunking the body.
///
/// A response with neither `Content-Length` nor chunked framing is complete only at the end of the stream.
private func parseResponse(_ bytes: [UInt8], method: String, atEndOfStream: Bool) -> ResponseParseResult {
    var start = 0
    while true {
        guard let end = headEnd(in: bytes, from: start) else {
            return atEndOfStream ? .invalid("upstream sent no complete response head") : .incomplete
        }
        guard let head = parseHead(bytes[start..<end]) else {
            return .invalid("upstream sent a malformed response head")
        }
        let parts = head.startLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
            return .invalid("upstream sent a malformed status line")
        }
        if (100..<200).contains(status) && status != 101 {
            start = end
            continue
        }
        var response = ProxyResponse(
            status: status,
            reason: parts.count > 2 ? String(parts[2]) : "",
            fields: head.fields,
            body: []
        )
        if method == "HEAD" || (100..<200).contains(status) || status == 204 || status == 304 {
            return .complete(response)
        }
        if let encoding = fieldValue("transfer-encoding", in: head.fields), encoding.lowercased().contains("chunked") {
            switch dechunk(bytes, from: end) {
            case .complete(let body):
                response.body = body
                return .complete(response)
            case .incomplete:
                return atEndOfStream ? .invalid("upstream closed the connection inside a chunked body") : .incomplete
            case .invalid:
                return .invalid("upstream sent a malformed chunked body")
            }
        }
        if let lengthText = fieldValue("content-length", in: head.fields) {
            guard let length = Int(lengthText), length >= 0 else {
                return .invalid("upstream sent a bad Content-Length")
            }
            guard bytes.count - end >= length else {
                return atEndOfStream
                    ? .invalid("upstream closed the connection after \(bytes.count - end) of \(length) body bytes")
                    : .incomplete
            }
            response.body = Array(bytes[end..<(end + length)])
            return .complete(response)
        }
        guard atEndOfStream else {
            return .incomplete
        }
        response.body = Array(bytes[end...])
        return .complete(response)
    }
}

/// The result of decoding a chunked body.
private enum DechunkResult {
    case incomplete
    case invalid
    case complete([UInt8])
}

/// Decodes a `Transfer-Encoding: chunked` body starting at `start`, skipping chunk extensions and trailers.
private func dechunk(_ bytes: [UInt8], from start: Int) -> DechunkResult {
    var index = start
    var body: [UInt8] = []
    /// The line starting at `index` without its line break, and the index after the break.
    func line(at index: Int) -> (text: String, next: Int)? {
        guard let newline = bytes[index...].firstIndex(of: 0x0A) else {
            return nil
        }
        var lineEnd = newline
        if lineEnd > index && bytes[lineEnd - 1] == 0x0D {
            lineEnd -= 1
        }
        return (latin1String(bytes[index..<lineEnd]), newline + 1)
    }
    while true {
        guard let sizeLine = line(at: index) else {
            return .incomplete
        }
        let sizeText = sizeLine.text.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
        guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0 else {
            return .invalid
        }
        index = sizeLine.next
        if size == 0 {
            while true {
                guard let trailer = line(at: index) else {
                    return .incomplete
                }
                if trailer.text.isEmpty {
                    return .complete(body)
                }
                index = trailer.next
            }
        }
        guard bytes.count >= index + size + 1 else {
            return .incomplete
        }
        body += bytes[index..<(index + size)]
        index += size
        guard let terminator = line(at: index) else {
            return .incomplete
        }
        guard terminator.text.isEmpty else {
            return .invalid
        }
        index = terminator.next
    }
}

// MARK: - Sockets

/// A `POSIXError` for an `errno` value.
private func posixError(_ code: Int32) -> POSIXError {
    POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
}

/// The IPv4 loopback address with `port`.
private func loopbackAddress(port: UInt16) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
    return address
}

/// A close-on-exec TCP socket with `SO_REUSEADDR`, bound to `address`:`port` (0 for an ephemeral port;
/// `address` in network byte order, 127.0.0.1 by default).
///
/// Close-on-exec matters: a child process (the test's server) must not inherit the listener and keep it open.
private func openBoundSocket(
    port: UInt16,
    address bindAddress: in_addr_t = UInt32(0x7F00_0001).bigEndian
) throws(POSIXError) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else {
        throw posixError(errno)
    }
    var one: Int32 = 1
    var address = loopbackAddress(port: port)
    address.sin_addr = in_addr(s_addr: bindAddress)
    let bound = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) == 0
                && bind(fd, socketAddress, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
    guard bound else {
        let error = posixError(errno)
        close(fd)
        throw error
    }
    return fd
}

/// The local port `fd` is bound to.
private func localPort(of fd: Int32) -> UInt16? {
    var address = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let result = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return result == 0 ? UInt16(bigEndian: address.sin_port) : nil
}

/// Connects `fd` to 127.0.0.1:`port`; returns 0 or the `errno` of the failure (`ECONNREFUSED` when nobody listens).
private func connectToLoopback(_ fd: Int32, port: UInt16) -> Int32 {
    var address = loopbackAddress(port: port)
    let result = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    if result == 0 {
        return 0
    }
    guard errno == EINTR else {
        return errno
    }
    // An interrupted connect goes on in the background: wait for it to finish, then read its outcome.
    var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
    while poll(&descriptor, 1, -1) < 0 {
        guard errno == EINTR else {
            return errno
        }
    }
    var error: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 else {
        return errno
    }
    return error
}

/// Writes all of `bytes`, retrying after `EINTR` and partial writes; false if the peer is gone (never `SIGPIPE`).
private func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { raw in
            send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
        }
        if written > 0 {
            offset += written
        } else if written < 0 && errno == EINTR {
            continue
        } else {
            return false
        }
    }
    return true
}

/// Appends what one `recv` returns to `buffer`, retrying after `EINTR`; false at end of stream or on an error.
private func receive(_ fd: Int32, into buffer: inout [UInt8]) -> Bool {
    var chunk = [UInt8](repeating: 0, count: 16_384)
    while true {
        let count = chunk.withUnsafeMutableBytes { raw in
            recv(fd, raw.baseAddress, raw.count, 0)
        }
        if count > 0 {
            buffer += chunk[0..<count]
            return true
        }
        if count < 0 && errno == EINTR {
            continue
        }
        return false
    }
}

/// Waits (up to about 200 ms) until the peer has acknowledged everything written to `fd`.
///
/// Used before a reset: an RST discards data still queued on our side, so the client would miss the partial response.
private func waitUntilDelivered(_ fd: Int32) {
    for _ in 0..<100 {
        var pending: Int32 = 0
        guard ioctl(fd, UInt(TIOCOUTQ), &pending) == 0, pending > 0 else {
            return
        }
        usleep(2_000)
    }
}

#endif
