import ActionLinks
import Prometheus

/// The Prometheus metrics at `/metrics` (docs/ARCHITECTURE.md §11): requests and latency per route,
/// codes issued, consumed and refused per mode, and mail deliveries. Every series is made at start, so a request
/// only increments counters that already exist.
public final class ServerMetrics: Sendable {
    /// The route a request was answered by (a fixed, small set: a label value per route).
    public enum Route: String, CaseIterable, Sendable {
        case association, jwks, health, metrics, actionPage, mobileLinkPage, api, emulator, staticFile, notFound
    }

    let registry: PrometheusCollectorRegistry
    private let requests: [Route: [Counter]]
    private let latency: [Route: DurationHistogram]
    private let issued: [ActionCodeLink.Mode: Counter]
    private let consumed: [ActionCodeLink.Mode: Counter]
    private let expired: Counter
    private let invalid: Counter
    private let mailSent: [MailOutcome: Counter]
    private let mailOutboxDepth: Gauge
    private let mailOutboxOldest: Gauge
    private let signInCodeExchanges: [SignInCodeOutcome: Counter]
    private let upstreamCalls: [UpstreamCall: [UpstreamOutcome: Counter]]
    private let upstreamLatency: [UpstreamCall: DurationHistogram]

    /// What the front asks of the project it fronts (a fixed set: a label value each).
    enum UpstreamCall: String, CaseIterable, Sendable {
        case resetPassword = "accounts:resetPassword", update = "accounts:update", sendOobCode = "accounts:sendOobCode"
        case lookup = "accounts:lookup", passwordPolicy, token, metadataToken
    }

    /// How an upstream call ended: answered, refused (Google's error), or not answered.
    enum UpstreamOutcome: String, CaseIterable, Sendable {
        case ok, refused, unreachable
        case noAnswer = "no_answer"
    }

    /// What came of a mail delivery attempt (a fixed set: a label value each).
    enum MailOutcome: String, CaseIterable, Sendable {
        /// The backend took it.
        case delivered
        /// It failed for now and waits for its next try.
        case retried
        /// Given up at once: the backend refused it for good.
        case rejected
        /// Given up: it kept failing for `mail.retryFor`.
        case expired
        /// Never sent: its link was used or voided, or expired, before it went.
        case dropped
    }

    /// How a sign-in code exchange ended (a fixed set: a label value each): the link given, a
    /// wrong (or dead, or absent) code, or refused by a limit before the code was looked at.
    enum SignInCodeOutcome: String, CaseIterable, Sendable {
        case exchanged, wrong, limited
    }

    /// Registers every series.
    public init() {
        let registry = PrometheusCollectorRegistry()
        self.registry = registry
        let classes = ["1xx", "2xx", "3xx", "4xx", "5xx"]
        let buckets: [Duration] = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2.5), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1),
        ]
        var requests: [Route: [Counter]] = [:]
        var latency: [Route: DurationHistogram] = [:]
        for route in Route.allCases {
            requests[route] = classes.map {
                registry.makeCounter(descriptor: Self.requestsTotal, labels: [("route", route.rawValue), ("status", $0)])
            }
            latency[route] = registry.makeDurationHistogram(
                descriptor: Self.requestDuration, labels: [("route", route.rawValue)], buckets: buckets)
        }
        self.requests = requests
        self.latency = latency
        var issued: [ActionCodeLink.Mode: Counter] = [:]
        var consumed: [ActionCodeLink.Mode: Counter] = [:]
        for mode in ActionCodeLink.Mode.allCases {
            issued[mode] = registry.makeCounter(descriptor: Self.codesIssued, labels: [("mode", mode.rawValue)])
            consumed[mode] = registry.makeCounter(descriptor: Self.codesConsumed, labels: [("mode", mode.rawValue)])
        }
        self.issued = issued
        self.consumed = consumed
        expired = registry.makeCounter(descriptor: Self.codesRefused, labels: [("reason", "expired")])
        invalid = registry.makeCounter(descriptor: Self.codesRefused, labels: [("reason", "invalid")])
        var mailSent: [MailOutcome: Counter] = [:]
        for outcome in MailOutcome.allCases {
            mailSent[outcome] = registry.makeCounter(descriptor: Self.mailSent, labels: [("outcome", outcome.rawValue)])
        }
        self.mailSent = mailSent
        mailOutboxDepth = registry.makeGauge(descriptor: Self.mailOutboxDepth)
        mailOutboxOldest = registry.makeGauge(descriptor: Self.mailOutboxOldest)
        var signInCodeExchanges: [SignInCodeOutcome: Counter] = [:]
        for outcome in SignInCodeOutcome.allCases {
            signInCodeExchanges[outcome] = registry.makeCounter(
                descriptor: Self.signInCodeExchanges, labels: [("outcome", outcome.rawValue)])
        }
        self.signInCodeExchanges = signInCodeExchanges
        var upstreamCalls: [UpstreamCall: [UpstreamOutcome: Counter]] = [:]
        var upstreamLatency: [UpstreamCall: DurationHistogram] = [:]
        for call in UpstreamCall.allCases {
            for outcome in UpstreamOutcome.allCases {
                upstreamCalls[call, default: [:]][outcome] = registry.makeCounter(
                    descriptor: Self.upstreamRequests, labels: [("operation", call.rawValue), ("outcome", outcome.rawValue)])
            }
            upstreamLatency[call] = registry.makeDurationHistogram(
                descriptor: Self.upstreamDuration, labels: [("operation", call.rawValue)],
                buckets: [
                    .milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
                    .seconds(3), .seconds(10),
                ])
        }
        self.upstreamCalls = upstreamCalls
        self.upstreamLatency = upstreamLatency
    }

    /// A series' name (`actionlinks_<name>_<unit>`) and its `# HELP` line.
    static func descriptor(_ name: String, unit: String?, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "actionlinks", metricName: name, unitName: unit, helpText: help)
    }

    static var requestsTotal: MetricNameDescriptor {
        descriptor("http_requests", unit: "total", "HTTP requests answered, by route and status class.")
    }
    static var requestDuration: MetricNameDescriptor {
        descriptor("http_request_duration", unit: "seconds", "Time to answer an HTTP request, by route.")
    }
    static var codesIssued: MetricNameDescriptor { descriptor("codes_issued", unit: "total", "Action codes issued, by mode.") }
    static var codesConsumed: MetricNameDescriptor { descriptor("codes_consumed", unit: "total", "Action codes consumed, by mode.") }
    static var codesRefused: MetricNameDescriptor { descriptor("codes_refused", unit: "total", "Action codes refused, by reason.") }
    static var mailSent: MetricNameDescriptor {
        descriptor(
            "mail_sent", unit: "total",
            "Mail delivery attempts and their end, by outcome: delivered, retried, rejected (refused for good), expired (failed for mail.retryFor), dropped (its link was used, voided or expired first)."
        )
    }
    static var mailOutboxDepth: MetricNameDescriptor {
        descriptor("mail_outbox_depth", unit: nil, "Mails waiting in the outbox, as this instance last read it.")
    }
    static var mailOutboxOldest: MetricNameDescriptor {
        descriptor("mail_outbox_oldest_age", unit: "seconds", "How long the oldest waiting mail has waited (0 when none waits).")
    }
    static var signInCodeExchanges: MetricNameDescriptor {
        descriptor(
            "sign_in_code_exchanges", unit: "total",
            "Sign-in code exchanges, by outcome: exchanged, wrong (a wrong, dead or absent code), limited (refused by a limit).")
    }
    static var upstreamRequests: MetricNameDescriptor {
        descriptor("upstream_requests", unit: "total", "Calls to the fronted project's Google APIs, by operation and outcome.")
    }
    static var upstreamDuration: MetricNameDescriptor {
        descriptor("upstream_request", unit: "seconds", "Time for a call to the fronted project's Google APIs, by operation.")
    }

    package func request(_ route: Route, status: Int, duration: Duration) {
        requests[route]?[min(max(status / 100, 1), 5) - 1].increment()
        latency[route]?.record(duration)
    }

    func codeIssued(_ mode: ActionCodeLink.Mode) { issued[mode]?.increment() }
    func codeConsumed(_ mode: ActionCodeLink.Mode) { consumed[mode]?.increment() }
    func codeExpired() { expired.increment() }
    func codeInvalid() { invalid.increment() }
    func mailSent(_ outcome: MailOutcome) { mailSent[outcome]?.increment() }

    func mailBacklog(count: Int, oldestAge: Duration?) {
        mailOutboxDepth.set(Double(count))
        mailOutboxOldest.set(oldestAge.map { Double($0.components.seconds) } ?? 0)
    }

    func signInCodeExchange(_ outcome: SignInCodeOutcome) { signInCodeExchanges[outcome]?.increment() }

    func upstreamCall(_ call: UpstreamCall, outcome: UpstreamOutcome, duration: Duration) {
        upstreamCalls[call]?[outcome]?.increment()
        upstreamLatency[call]?.record(duration)
    }

    /// The Prometheus text exposition of every series.
    public func exposition() -> [UInt8] { registry.emitToBuffer() }
}
