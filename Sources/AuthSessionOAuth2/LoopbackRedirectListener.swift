// Over 600 lines on purpose: the listener and its socket loop, whose limits (connections,
// silence, request size, deadline) are one policy; the decisions are in `LoopbackListenerCore`,
// tested without sockets.

import AuthSession
import Dispatch
import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// Receives the authorization redirect of a command-line or desktop app on loopback (RFC 8252
/// §7.3): `http://127.0.0.1:<port>/<path>`, on a port the system picks.
///
/// ```swift
/// let listener = try LoopbackRedirectListener()
/// let request = try service.authorizationRequest(redirectURI: listener.redirectURI)
/// openInBrowser(request.url)
/// let redirect = try await listener.waitForRedirect(answering: request)
/// try await provider.signIn(with: request.grant(fromRedirect: redirect))
/// ```
///
/// ``OAuth2Service/authorizeThroughLoopback(path:scope:additionalParameters:timeout:checksRequestFirst:isolation:openBrowser:)``
/// and `ManagedSessionProvider.signInThroughLoopback(using:path:scope:additionalParameters:timeout:checksRequestFirst:isolation:openBrowser:)`
/// run these steps for you.
///
/// - **One request**: the listener answers the first request for its path that answers the
///   sign-in, with a page that says "You can close this window" (or the server's error), then
///   closes its socket. Any other path gets a 404 and the wait goes on; with an
///   ``AuthorizationRequest`` to answer, a request without its `state` gets a 400 and the wait
///   goes on, so a stray or forged request cannot end the sign-in.
/// - **Bounded**: a request's head may be ``maximumRequestSize`` bytes and must arrive within
///   ``readTimeout`` seconds; at most 16 connections are open at once, and one that has sent
///   nothing for a tenth of a second is dropped for a new one (a browser's request, sent as it connects, is
///   read first). A hostile local client cannot hang it or exhaust its memory or descriptors.
///   A local process that floods the port with connections can still delay the sign-in past
///   its deadline (a denial of service, never a forged sign-in: the `state` is checked). A
///   `Host` header other than the redirect URI's (a DNS-rebinding page) is refused.
/// - **Deadline and cancellation**: the wait ends after ``timeout`` seconds
///   (``BrowserSignInError/timedOut``), and at once when its task is cancelled or ``close()`` is
///   called (``BrowserSignInError/cancelled``); the socket is closed either way.
/// - **Threads**: the socket is served by POSIX calls on a thread of its own, never on the
///   concurrency pool.
///
/// Only IPv4 loopback is bound: `localhost` may resolve to `::1` first, so the redirect URI
/// names `127.0.0.1`, as RFC 8252 §8.3 recommends. The server must accept any port on a
/// loopback redirect URI (RFC 8252 §7.3); register `http://127.0.0.1/callback` there.
///
/// All operations are thread-safe.
public final class LoopbackRedirectListener: Sendable {

    /// The redirect URI to put in the authorization request: `http://127.0.0.1:<port><path>`.
    public let redirectURI: URL

    /// The port the system gave the listener.
    public let port: UInt16

    /// Seconds ``waitForRedirect(answering:)`` waits for the redirect.
    public let timeout: TimeInterval

    /// Seconds one connection may take to send its request head.
    public let readTimeout: TimeInterval

    /// The largest request head accepted, in bytes; a larger one gets a 431 and is dropped.
    public let maximumRequestSize: Int

    private let core: LoopbackListenerCore

    /// Binds `127.0.0.1` on a port the system picks, and listens.
    ///
    /// - Parameters:
    ///   - path: The redirect URI's path; `/callback` by default. It must start with `/`.
    ///   - timeout: Seconds the wait lasts; 5 minutes by default. A value that is not a positive
    ///     finite number counts as 300.
    ///   - readTimeout: Seconds a connection has to send its request head; 10 by default.
    ///   - maximumRequestSize: The largest request head, in bytes; 16 KiB by default.
    /// - Throws: ``BrowserSignInError/listenerFailed(_:)`` when the path is not a URL path or the
    ///   socket cannot be bound.
    public convenience init(
        path: String = "/callback",
        timeout: TimeInterval = 300,
        readTimeout: TimeInterval = 10,
        maximumRequestSize: Int = 16 * 1024
    ) throws(BrowserSignInError) {
        try self.init(
            path: path,
            timeout: timeout,
            readTimeout: readTimeout,
            maximumRequestSize: maximumRequestSize,
            minimumSilentAge: LoopbackListenerCore.minimumSilentAge
        )
    }

    /// The initializer, with the seconds a silent connection is kept before it may be dropped for
    /// a new one (tests on a loaded machine lengthen it).
    init(
        path: String,
        timeout: TimeInterval,
        readTimeout: TimeInterval,
        maximumRequestSize: Int,
        minimumSilentAge: UInt64
    ) throws(BrowserSignInError) {
        guard path.hasPrefix("/"),
            path.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") })
        else {
            throw .listenerFailed("the path must start with / and hold no space, query or fragment")
        }
        let sockets = try LoopbackSockets.open()
        guard let uri = URL(string: "http://127.0.0.1:\(sockets.port)\(path)"),
            let expectedPath = URLComponents(url: uri, resolvingAgainstBaseURL: false)?.percentEncodedPath
        else {
            sockets.closeAll()
            throw .listenerFailed("the path is not a URL path")
        }
        redirectURI = uri
        port = sockets.port
        self.timeout = timeout > 0 && timeout.isFinite ? timeout : 300
        self.readTimeout = readTimeout > 0 && readTimeout.isFinite ? readTimeout : 10
        self.maximumRequestSize = max(1024, maximumRequestSize)
        core = LoopbackListenerCore(
            sockets: sockets,
            rules: LoopbackRequestRules(path: expectedPath, port: sockets.port),
            readTimeout: self.readTimeout,
            maximumRequestSize: self.maximumRequestSize,
            minimumSilentAge: minimumSilentAge
        )
    }

    deinit {
        core.close()
    }

    /// Waits for the redirect, answers it with a page, closes the socket, and returns the URL.
    ///
    /// With `request`, the redirect must answer it: one without its `state` gets a 400 page and
    /// the wait goes on; one with its `state` that ``AuthorizationRequest/grant(fromRedirect:)``
    /// refuses (the server's `error`, a wrong `iss`, ...) gets an error page and ends the wait
    /// with that error. Without `request`, the first request for the path ends the wait; its page
    /// shows the server's `error` if the redirect carries one, and the caller checks the URL.
    ///
    /// Call it once: the listener serves one redirect.
    ///
    /// - Parameter request: The authorization request the redirect must answer.
    /// - Returns: The redirect URL, `http://127.0.0.1:<port><path>?code=...&state=...`.
    /// - Throws: ``BrowserSignInError``: ``BrowserSignInError/timedOut``,
    ///   ``BrowserSignInError/cancelled``, ``BrowserSignInError/redirect(_:)`` (with `request`), or
    ///   ``BrowserSignInError/listenerFailed(_:)``.
    public func waitForRedirect(
        answering request: AuthorizationRequest? = nil
    ) async throws(BrowserSignInError)
        -> URL
    {
        let deadline = LoopbackClock.now + LoopbackClock.nanoseconds(timeout)
        let core = core
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<URL, BrowserSignInError>, Never>) in
                core.start(request: request, deadline: deadline, continuation: continuation)
            }
        } onCancel: {
            core.close()
        }
        return try result.get()
    }

    /// Stops listening: a wait in progress ends with ``BrowserSignInError/cancelled``, and the
    /// socket is closed. Calling it again does nothing.
    public func close() {
        core.close()
    }
}

// MARK: - The request rules (pure)

/// What the listener answers to one request head: the rules, without a socket.
struct LoopbackRequestRules: Sendable {

    /// The redirect URI's percent-encoded path.
    let path: String

    /// The bound port.
    let port: UInt16

    /// The answer to send, and the outcome of the wait when this request ends it.
    struct Answer {
        var response: [UInt8]
        var outcome: Result<URL, BrowserSignInError>?
    }

    /// Answers a complete request head.
    func answer(head: [UInt8], request: AuthorizationRequest?) -> Answer {
        // Lines by bytes: as `Character`s, "\r\n" is one, not a "\n".
        let lines = head.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == 0x0D ? line.dropLast() : line, as: UTF8.self)
        }
        let parts = (lines.first ?? "").split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1."), parts[1].hasPrefix("/"),
            parts[1].utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else {
            return Answer(response: Self.response(400, "Bad Request", Self.page(title: "Bad request", "")))
        }
        let method = parts[0]
        let target = String(parts[1])
        let targetPath = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        guard targetPath == path else {
            return Answer(response: Self.response(404, "Not Found", Self.page(title: "Not found", "")))
        }
        guard method == "GET" else {
            return Answer(
                response: Self.response(405, "Method Not Allowed", Self.page(title: "Not allowed", ""), allow: "GET")
            )
        }
        let hosts = lines.dropFirst().compactMap { line -> Substring? in
            guard let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == "host" else { return nil }
            return line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
        }
        if let host = hosts.first {
            // A page rebinding its own name to 127.0.0.1 sends its name here.
            guard hosts.count == 1, host.lowercased().trimmingCharacters(in: .whitespaces) == "127.0.0.1:\(port)"
            else {
                return Answer(response: Self.response(400, "Bad Request", Self.page(title: "Bad request", "")))
            }
        }
        guard let url = URL(string: "http://127.0.0.1:\(port)\(target)") else {
            return Answer(response: Self.response(400, "Bad Request", Self.page(title: "Bad request", "")))
        }
        guard let request else {
            let error = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first {
                $0.name == "error"
            }
            if let error {
                return Answer(
                    response: Self.response(200, "OK", Self.failurePage(HTTPExchange.sanitizedCode(error.value ?? ""))),
                    outcome: .success(url)
                )
            }
            return Answer(response: Self.response(200, "OK", Self.successPage), outcome: .success(url))
        }
        do {
            _ = try request.grant(fromRedirect: url)
            return Answer(response: Self.response(200, "OK", Self.successPage), outcome: .success(url))
        } catch .missingState, .stateMismatch, .duplicateParameter("state") {
            // Not the answer to this sign-in: a stray or forged request cannot end it.
            return Answer(
                response: Self.response(
                    400,
                    "Bad Request",
                    Self.page(title: "Not this sign-in", "This link does not belong to the sign-in in progress.")
                )
            )
        } catch {
            let message: String
            switch error {
            case .server(let code, let description): message = code + (description.map { ": " + $0 } ?? "")
            default: message = error.description
            }
            return Answer(
                response: Self.response(200, "OK", Self.failurePage(message)),
                outcome: .failure(.redirect(error))
            )
        }
    }

    /// The page of a redirect that answers the sign-in.
    static let successPage = page(
        title: "Signed in",
        "You are signed in. You can close this window and return to the app."
    )

    /// The page of a redirect that carries an error.
    static func failurePage(_ message: String) -> String {
        page(
            title: "Sign-in failed",
            "Sign-in did not complete (\(escaped(message))). You can close this window and return to the app."
        )
    }

    static func page(title: String, _ text: String) -> String {
        """
        <!DOCTYPE html><html><head><meta charset="utf-8"><title>\(title)</title></head>\
        <body style="font-family:sans-serif;margin:3em"><h1>\(title)</h1><p>\(text)</p></body></html>
        """
    }

    static func escaped(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }

    static func response(_ status: Int, _ reason: String, _ body: String, allow: String? = nil) -> [UInt8] {
        let bytes = Array(body.utf8)
        var head =
            "HTTP/1.1 \(status) \(reason)\r\nContent-Type: text/html; charset=utf-8\r\n"
            + "Content-Length: \(bytes.count)\r\nConnection: close\r\nCache-Control: no-store\r\n"
            + "Referrer-Policy: no-referrer\r\nX-Content-Type-Options: nosniff\r\n"
            + "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'\r\n"
        if let allow {
            head += "Allow: \(allow)\r\n"
        }
        return Array((head + "\r\n").utf8) + bytes
    }
}

// MARK: - The socket loop

/// A monotonic clock in nanoseconds.
enum LoopbackClock {
    static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

    static func nanoseconds(_ seconds: TimeInterval) -> UInt64 {
        UInt64(min(max(0, seconds), 86_400 * 365) * 1_000_000_000)
    }
}

/// The listening socket and the pipe that wakes its thread.
struct LoopbackSockets: Sendable {
    let listener: Int32
    let wakeRead: Int32
    let wakeWrite: Int32
    let port: UInt16

    static func open() throws(BrowserSignInError) -> LoopbackSockets {
        let fd = makeStreamSocket()
        guard fd >= 0 else { throw .listenerFailed("socket: \(lastError())") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 64) == 0, configure(fd) else {
            let reason = lastError()
            closeDescriptor(fd)
            throw .listenerFailed("bind or listen on 127.0.0.1: \(reason)")
        }
        var actual = sockaddr_in()
        var actualLength = length
        let named = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &actualLength) }
        }
        var pipeEnds: [Int32] = [-1, -1]
        guard named == 0, pipe(&pipeEnds) == 0 else {
            let reason = lastError()
            closeDescriptor(fd)
            throw .listenerFailed("getsockname or pipe: \(reason)")
        }
        _ = configure(pipeEnds[0])
        _ = configure(pipeEnds[1])
        return LoopbackSockets(
            listener: fd,
            wakeRead: pipeEnds[0],
            wakeWrite: pipeEnds[1],
            port: UInt16(bigEndian: actual.sin_port)
        )
    }

    func closeAll() {
        closeDescriptor(listener)
        closeDescriptor(wakeRead)
        closeDescriptor(wakeWrite)
    }
}

/// The listener's state and its thread's loop.
final class LoopbackListenerCore: Sendable {

    private enum Phase {
        case idle
        case waiting(CheckedContinuation<Result<URL, BrowserSignInError>, Never>)
        case finished
    }

    private let sockets: LoopbackSockets
    private let rules: LoopbackRequestRules
    private let readTimeout: UInt64
    private let maximumRequestSize: Int
    private let phase = ConcurrencySafeContainer<Phase>(.idle)

    /// At most this many connections are open at once; a silent one is dropped for a new one.
    static let maximumConnections = 16

    /// How long a connection that has sent nothing is kept, at the least, before it may be dropped
    /// for a new one, in nanoseconds: a browser's request, sent as soon as it connects, is read
    /// before then.
    static let minimumSilentAge: UInt64 = 100_000_000

    private let silentAge: UInt64

    init(
        sockets: LoopbackSockets,
        rules: LoopbackRequestRules,
        readTimeout: TimeInterval,
        maximumRequestSize: Int,
        minimumSilentAge: UInt64 = LoopbackListenerCore.minimumSilentAge
    ) {
        self.sockets = sockets
        self.rules = rules
        self.readTimeout = LoopbackClock.nanoseconds(readTimeout)
        self.maximumRequestSize = maximumRequestSize
        self.silentAge = minimumSilentAge
    }

    /// Starts the thread, or answers at once when the listener is closed or already waited on.
    func start(
        request: AuthorizationRequest?,
        deadline: UInt64,
        continuation: CheckedContinuation<Result<URL, BrowserSignInError>, Never>
    ) {
        let refusal: BrowserSignInError? = phase.withLock { phase in
            switch phase {
            case .idle:
                phase = .waiting(continuation)
                return nil
            case .waiting: return .listenerFailed("the listener is already waiting for a redirect")
            case .finished: return .cancelled
            }
        }
        if let refusal {
            continuation.resume(returning: .failure(refusal))
            return
        }
        let thread = Thread { [self] in
            let result = serve(request: request, deadline: deadline)
            let waiting = phase.withLock { phase -> CheckedContinuation<Result<URL, BrowserSignInError>, Never>? in
                defer { phase = .finished }
                if case .waiting(let continuation) = phase { return continuation }
                return nil
            }
            // `close()` writes to the pipe only while the phase is `.waiting`: closing now is safe.
            sockets.closeAll()
            waiting?.resume(returning: result)
        }
        thread.name = "LoopbackRedirectListener"
        thread.start()
    }

    /// Ends a wait in progress (through the pipe), or closes the sockets when nobody waits.
    func close() {
        let closesNow = phase.withLock { phase -> Bool in
            switch phase {
            case .idle:
                phase = .finished
                return true
            case .waiting:
                var byte: UInt8 = 1
                _ = write(sockets.wakeWrite, &byte, 1)
                return false
            case .finished: return false
            }
        }
        if closesNow {
            sockets.closeAll()
        }
    }

    /// One accepted connection, as the loop keeps it.
    struct Connection {
        enum Stage {
            case reading
            case writing([UInt8], Int)
            case draining
        }
        let fd: Int32
        let acceptedAt: UInt64
        var silentAge = LoopbackListenerCore.minimumSilentAge
        var buffer: [UInt8] = []
        var stage = Stage.reading
        var deadline: UInt64
        var isFinal = false

        /// When it may be dropped for a new connection: once it is silent and old enough.
        var evictableAt: UInt64? {
            guard case .reading = stage, buffer.isEmpty, !isFinal else { return nil }
            return acceptedAt + silentAge
        }
    }

    /// The loop: accept, read heads, answer, until the answer, the deadline or the pipe.
    private func serve(request: AuthorizationRequest?, deadline: UInt64) -> Result<URL, BrowserSignInError> {
        var connections: [Connection] = []
        var outcome: Result<URL, BrowserSignInError>?
        defer {
            for connection in connections {
                closeDescriptor(connection.fd)
            }
        }
        while true {
            var now = LoopbackClock.now
            if outcome == nil, now >= deadline { return .failure(.timedOut) }
            connections.removeAll { connection in
                guard now >= connection.deadline else { return false }
                closeDescriptor(connection.fd)
                return true
            }
            if let outcome, !connections.contains(where: \.isFinal) { return outcome }

            // Full, with no connection that may be dropped yet: new ones wait in the backlog
            // (a flood of silent connections cannot push out a browser's before it is read).
            let nextEviction = connections.compactMap(\.evictableAt).min()
            let accepts =
                outcome == nil
                && (connections.count < Self.maximumConnections || (nextEviction.map { $0 <= now } ?? false))
            var descriptors = [pollfd(fd: sockets.wakeRead, events: Int16(POLLIN), revents: 0)]
            if accepts {
                descriptors.append(pollfd(fd: sockets.listener, events: Int16(POLLIN), revents: 0))
            }
            for connection in connections {
                let events: Int32
                if case .writing = connection.stage { events = Int32(POLLOUT) } else { events = Int32(POLLIN) }
                descriptors.append(pollfd(fd: connection.fd, events: Int16(events), revents: 0))
            }
            var wakeAt = connections.map(\.deadline).min() ?? UInt64.max
            if outcome == nil {
                wakeAt = min(wakeAt, deadline)
                if !accepts, let nextEviction { wakeAt = min(wakeAt, nextEviction) }
            }
            let milliseconds =
                wakeAt == UInt64.max ? 1000 : Int32(min(1000, (wakeAt - min(wakeAt, now)) / 1_000_000 + 1))
            let ready = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                return .failure(.listenerFailed("poll: \(lastError())"))
            }
            if descriptors[0].revents != 0 {
                return outcome ?? .failure(.cancelled)
            }
            // The time after the wait: `now` may be up to a second old, and a connection stamped
            // with it would look old enough to drop the moment it is accepted.
            now = LoopbackClock.now
            let listenerReady = accepts && descriptors[1].revents != 0
            let polled = descriptors[(accepts ? 2 : 1)...]
            var kept: [Connection] = []
            for (connection, descriptor) in zip(connections, polled) {
                var connection = connection
                guard descriptor.revents != 0 else {
                    kept.append(connection)
                    continue
                }
                if step(&connection, events: descriptor.revents, request: request, now: now, outcome: &outcome) {
                    kept.append(connection)
                } else {
                    closeDescriptor(connection.fd)
                    if connection.isFinal, let outcome {
                        // Out of the list the `defer` closes: closed twice, its number could be
                        // another thread's file by then (a file store's folder, a socket).
                        connections.removeAll { $0.fd == connection.fd }
                        return outcome
                    }
                }
            }
            connections = kept
            if listenerReady, outcome == nil {
                acceptAll(into: &connections, now: now)
            }
        }
    }

    private func acceptAll(into connections: inout [Connection], now: UInt64) {
        // Bounded, so that a client connecting in a loop cannot keep the thread here.
        for _ in 0..<(2 * Self.maximumConnections) {
            // Full: only when a connection that has sent nothing for a while can make room;
            // otherwise the new ones stay in the backlog until a slot frees.
            var dropped: Int?
            if connections.count >= Self.maximumConnections {
                guard let oldest = Self.connectionToDrop(in: connections, now: now) else { return }
                dropped = oldest
            }
            let fd = accept(sockets.listener, nil, nil)
            guard fd >= 0 else { return }
            guard configure(fd) else {
                closeDescriptor(fd)
                continue
            }
            if let dropped {
                closeDescriptor(connections[dropped].fd)
                connections.remove(at: dropped)
            }
            connections.append(Connection(fd: fd, acceptedAt: now, silentAge: silentAge, deadline: now + readTimeout))
        }
    }

    /// The connection to drop for a new one: the oldest that has sent nothing for at least
    /// ``minimumSilentAge``; never one that sent bytes, is being answered, or carries the answer.
    static func connectionToDrop(in connections: [Connection], now: UInt64) -> Int? {
        connections.indices
            .filter { connections[$0].evictableAt.map { $0 <= now } ?? false }
            .min { connections[$0].acceptedAt < connections[$1].acceptedAt }
    }

    /// Moves one connection on; `false` when it is done and must be closed.
    private func step(
        _ connection: inout Connection,
        events: Int16,
        request: AuthorizationRequest?,
        now: UInt64,
        outcome: inout Result<URL, BrowserSignInError>?
    ) -> Bool {
        switch connection.stage {
        case .reading:
            guard outcome == nil else { return false }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, 0) }
            if count < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR }
            if count == 0 { return false }
            connection.buffer += chunk[0..<count]
            if let end = Self.headEnd(in: connection.buffer) {
                let answer = rules.answer(head: Array(connection.buffer[0..<end]), request: request)
                connection.stage = .writing(answer.response, 0)
                connection.deadline = now + readTimeout
                if let result = answer.outcome {
                    outcome = result
                    connection.isFinal = true
                }
            } else if connection.buffer.count > maximumRequestSize {
                let page = LoopbackRequestRules.page(title: "Request too large", "")
                connection.stage = .writing(
                    LoopbackRequestRules.response(431, "Request Header Fields Too Large", page),
                    0
                )
                connection.deadline = now + readTimeout
            }
            return true
        case .writing(let bytes, let offset):
            let sent = bytes.withUnsafeBytes {
                sendBytes(connection.fd, $0.baseAddress! + offset, $0.count - offset)
            }
            if sent < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR }
            if offset + sent < bytes.count {
                connection.stage = .writing(bytes, offset + sent)
                return true
            }
            // Half-close, then read what the client still sends until it closes: closing with
            // unread bytes would reset the connection and could lose the page.
            _ = shutdown(connection.fd, Int32(SHUT_WR))
            connection.stage = .draining
            connection.deadline = min(connection.deadline, now + 1_000_000_000)
            return true
        case .draining:
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, 0) }
            if count < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR }
            return count > 0 && events & Int16(POLLHUP) == 0
        }
    }

    /// The length of the request head, through its blank line, if it is complete.
    static func headEnd(in buffer: [UInt8]) -> Int? {
        guard buffer.count >= 2 else { return nil }
        for index in 1..<buffer.count where buffer[index] == 0x0A {
            if buffer[index - 1] == 0x0A { return index + 1 }
            if index >= 3, buffer[index - 1] == 0x0D, buffer[index - 2] == 0x0A, buffer[index - 3] == 0x0D {
                return index + 1
            }
        }
        return nil
    }
}

// MARK: - POSIX calls, at file scope (where `close` is the system's)

#if canImport(Darwin)
private func makeStreamSocket() -> Int32 { socket(AF_INET, SOCK_STREAM, 0) }
private func sendBytes(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { send(fd, bytes, count, 0) }
#else
private func makeStreamSocket() -> Int32 { socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0) }
private func sendBytes(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    send(fd, bytes, count, Int32(MSG_NOSIGNAL))
}
#endif

/// Non-blocking, closed on `exec`, and on Apple platforms no `SIGPIPE` on a closed peer.
private func configure(_ fd: Int32) -> Bool {
    let flags = fcntl(fd, F_GETFL)
    guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0, fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else {
        return false
    }
    #if canImport(Darwin)
    var one: Int32 = 1
    _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
    #endif
    return true
}

private func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}

private func lastError() -> String {
    String(cString: strerror(errno))
}
