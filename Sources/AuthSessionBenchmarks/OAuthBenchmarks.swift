import AuthSessionMocks
import AuthSessionOAuth2
import AuthSessionProviders
import Dispatch
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The OAuth 2.0 client's figure against a real server: a refresh round trip through
/// `OAuth2Service` beside the same form POSTed with a bare URLSession.
enum OAuthBenchmarks {

    /// Refresh round trips, interleaved: each side rotates its own refresh-token chain, one
    /// refresh per sample, `rounds` samples each.
    static func refresh(server: OAuthTestServer, rounds: Int) throws -> Comparison.Result {
        guard let client = server.clients["password"], let secret = client.clientSecret else {
            throw BenchmarkError("the endpoints JSON has no confidential password client")
        }
        let service = OAuth2Service(
            configuration: OAuth2Configuration(
                issuer: server.issuer,
                endpoints: OAuth2Endpoints(token: server.endpoints.token),
                client: OAuth2Client(id: client.clientId, authentication: .clientSecretBasic(secret: secret))
            )
        )
        let grant = AuthGrant.password(username: server.user.username, password: server.user.password, scope: ["read"])
        var serviceToken = try blocking { try await service.obtainTokens(with: grant).refreshToken }
        var bareToken = try blocking { try await service.obtainTokens(with: grant).refreshToken }

        let bare = BareRefresher(
            url: server.endpoints.token,
            authorization: "Basic " + Data("\(client.clientId):\(secret)".utf8).base64EncodedString()
        )
        let comparison = Comparison(
            name: "oauth refresh round trip",
            subjectLabel: "OAuth2Service.refresh",
            baselineLabel: "bare URLSession form POST",
            unit: "ns",
            operations: 1,
            goal: 1.1,
            subject: {
                let presented = serviceToken ?? ""
                serviceToken = (try? blocking { try await service.refresh(presented, scope: nil).refreshToken }) ?? nil
                precondition(serviceToken != nil, "the service's refresh failed")
            },
            baseline: {
                bareToken = bare.refresh(bareToken ?? "")
                precondition(bareToken != nil, "the bare refresh failed")
            }
        )
        return comparison.measure(repetitions: rounds)
    }

    /// Runs `body` on the cooperative pool and waits for it on this thread.
    private static func blocking<Value: Sendable>(_ body: @escaping @Sendable () async throws -> Value) throws -> Value
    {
        let box = ResultBox<Value>()
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                box.result = .success(try await body())
            } catch {
                box.result = .failure(error)
            }
            done.signal()
        }
        done.wait()
        return try box.result!.get()
    }
}

/// A result handed from a task to the waiting thread.
///
/// The semaphore orders the task's write before the waiting thread's read.
private final class ResultBox<Value>: @unchecked Sendable {
    var result: Result<Value, any Error>?
}

/// The baseline: a form POST with a bare URLSession data task, and the one field read back.
private struct BareRefresher {
    let session = URLSession(configuration: .ephemeral)
    let url: URL
    let authorization: String

    func refresh(_ token: String) -> String? {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.setValue(authorization, forHTTPHeaderField: "Authorization")
        let escaped = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token
        request.httpBody = Data("grant_type=refresh_token&refresh_token=\(escaped)".utf8)
        let box = ResultBox<Data>()
        let done = DispatchSemaphore(value: 0)
        session.dataTask(with: request) { data, _, error in
            box.result = data.map { .success($0) } ?? .failure(error ?? URLError(.unknown))
            done.signal()
        }.resume()
        done.wait()
        guard case .success(let data)? = box.result,
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return object["refresh_token"] as? String
    }
}

/// A benchmark that cannot run, and why.
struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
