import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// The exchanges in flight with each of upstream's hosts, at most `capacity` (`upstream.poolSize`,
/// also the size of async-http-client's pool of connections per host): a request beyond it is
/// refused at once, never queued behind slow ones.
final class ExchangeSlots: Sendable {
    let capacity: Int
    private let inFlight = Mutex<[String: Int]>([:])

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Takes a slot for `host`; false when all of its slots are taken.
    func take(_ host: String) -> Bool {
        inFlight.withLock { counts in
            guard counts[host, default: 0] < capacity else { return false }
            counts[host, default: 0] += 1
            return true
        }
    }

    /// Gives back a slot ``take(_:)`` took.
    func give(_ host: String) {
        inFlight.withLock { counts in
            let left = counts[host, default: 1] - 1
            counts[host] = left > 0 ? left : nil
        }
    }

    /// Where async-http-client pools the connections for `url`: its scheme, host and port.
    static func host(of url: String) -> String {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(), let host = parts.host?.lowercased() else {
            return ""
        }
        return "\(scheme)://\(host):\(parts.port ?? (scheme == "https" ? 443 : 80))"
    }
}

extension UpstreamClient {
    /// Why an exchange gave no answer.
    package enum ExchangeFailure: Error {
        /// All of the host's slots were taken: nothing was sent.
        case busy
        /// The whole answer, head and body, did not arrive within `upstream.answerTimeout`.
        case deadline
        /// async-http-client's error (a connection refused, an answer over the size cap).
        case failed(any Error)
    }

    /// A whole answer.
    package struct Answer: Sendable {
        package var status: UInt
        package var headers: HTTPHeaders
        package var body: ByteBuffer
    }

    /// Sends `request` and reads its whole answer (at most `maximumBytes` of body) within one
    /// deadline, `upstream.answerTimeout` from now: async-http-client's own deadline ends when the
    /// head arrives and its read timeout restarts with each byte, so a peer that sends its head and
    /// then a byte a second would otherwise hold the exchange, and a slot of the pool, for minutes.
    /// When the deadline passes the exchange is cancelled, which closes its connection. A host with
    /// all of its slots taken is ``ExchangeFailure/busy`` at once.
    package func exchange(_ request: HTTPClientRequest, upTo maximumBytes: Int) async throws(ExchangeFailure) -> Answer {
        let host = ExchangeSlots.host(of: request.url)
        guard slots.take(host) else { throw .busy }
        defer { slots.give(host) }
        let client = client
        let timeout = answerTimeout
        let deadline = NIODeadline.now() + timeout
        do {
            return try await withThrowingTaskGroup(of: Answer?.self) { group in
                group.addTask {
                    let response = try await client.execute(request, deadline: deadline)
                    let body = try await response.body.collect(upTo: maximumBytes)
                    return Answer(status: response.status.code, headers: response.headers, body: body)
                }
                group.addTask {
                    try await Task.sleep(for: .nanoseconds(timeout.nanoseconds))
                    return nil
                }
                // Whichever comes first ends the other: the answer the timer, the timer the exchange
                // (and with it its connection).
                defer { group.cancelAll() }
                // A body cut short by this task's own cancellation is not an answer.
                guard let first = try await group.next(), let answer = first, !Task.isCancelled else { throw ExchangeFailure.deadline }
                return answer
            }
        } catch let failure as ExchangeFailure {
            throw failure
        } catch {
            throw .failed(error)
        }
    }
}
