import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// A client that speaks raw bytes to a loopback port, as a browser or a hostile local process
/// would. Its socket calls block, so each exchange runs on a thread of its own, never on the
/// concurrency pool; a 10 s receive timeout bounds every read.
enum RawHTTPClient {

    /// What came back: the whole answer as text, or `nil` when the connection was refused.
    struct Reply: Sendable {
        var text: String

        /// The status code of the first line.
        var status: Int? {
            let parts = text.split(separator: " ", maxSplits: 2)
            return parts.count >= 2 ? Int(parts[1]) : nil
        }
    }

    /// Connects, sends `bytes`, and reads until the server closes. `nil` when nothing listens.
    static func exchange(port: UInt16, _ bytes: [UInt8]) async -> Reply? {
        await onThread {
            guard let fd = connectTo(port) else { return nil }
            defer { close(fd) }
            sendAll(fd, bytes)
            return Reply(text: String(decoding: readToEnd(fd), as: UTF8.self))
        }
    }

    /// A GET of `target` with the headers a browser sends.
    static func get(port: UInt16, _ target: String, host: String? = nil) async -> Reply? {
        let request =
            "GET \(target) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\nUser-Agent: test\r\n"
            + "Accept: text/html\r\nConnection: keep-alive\r\n\r\n"
        return await exchange(port: port, Array(request.utf8))
    }

    /// A connection that sends `bytes` and then nothing: the caller closes it.
    final class Idle: Sendable {
        let fd: Int32
        init?(port: UInt16, sending bytes: [UInt8] = []) {
            guard let fd = RawHTTPClient.connectTo(port) else { return nil }
            self.fd = fd
            RawHTTPClient.sendAll(fd, bytes)
        }

        /// Sends `bytes` now.
        func send(_ bytes: [UInt8]) {
            RawHTTPClient.sendAll(fd, bytes)
        }

        /// Reads until the server closes (or 10 s pass) and returns what came.
        func readToEnd() async -> [UInt8] {
            await readUntilClosed().bytes
        }

        /// Reads until the server closes (or 10 s pass): what came, whether the server closed
        /// (rather than the client's timeout ending the read), and when the read ended, taken on
        /// the reading thread (a loaded machine may resume the caller much later).
        func readUntilClosed() async -> (bytes: [UInt8], closedByServer: Bool, endedAt: ContinuousClock.Instant) {
            let fd = fd
            return await RawHTTPClient.onThread {
                let (bytes, closedByServer) = RawHTTPClient.read(fd)
                return (bytes, closedByServer, ContinuousClock.now)
            }
        }

        deinit { close(fd) }
    }

    private static func onThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    fileprivate static func connectTo(_ port: UInt16) -> Int32? {
        #if canImport(Darwin)
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #else
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard fd >= 0 else { return nil }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    fileprivate static func sendAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            #if canImport(Darwin)
            let flags: Int32 = 0
            #else
            let flags = Int32(MSG_NOSIGNAL)
            #endif
            let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, bytes.count - offset, flags) }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    fileprivate static func readToEnd(_ fd: Int32) -> [UInt8] {
        read(fd).bytes
    }

    /// Reads until the read ends: what came, and whether it ended because the server closed
    /// (`recv` returned 0) rather than on an error or the receive timeout.
    fileprivate static func read(_ fd: Int32) -> (bytes: [UInt8], closedByServer: Bool) {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return (result, count == 0) }
            result += chunk[0..<count]
        }
    }
}
