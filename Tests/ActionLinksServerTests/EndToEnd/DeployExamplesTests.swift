import ActionLinksConfiguration
import ActionLinksTestSupport
import Foundation
import Testing
import Yams

/// The examples in `deploy/` agree with the image and the configuration: each parses, names only
/// variables the server reads, with values it takes, passes `config check --production` on its
/// platform, runs the image's user and entrypoint, and probes paths the server answers.
@Suite("Deployment examples", .timeLimit(.minutes(5)))
struct DeployExamplesTests {
    static let deploy = Repository.root.appendingPathComponent("deploy")

    /// What the image is (Containerfile's and scripts/image.sh's contract).
    enum Image {
        static let user = 65532
        static let entrypoint = [
            "/usr/local/bin/actionlinks", "serve", "--config", "/etc/actionlinks/actionlinks.yaml", "--www", "/usr/share/actionlinks/www",
        ]
        static let port = 8080
    }

    /// Values for the variables an example takes from a secret, as an operator would fill them.
    static let secretValues = [
        "ACTIONLINKS_STORE": "postgres://actionlinks:pw@/actionlinks?host=/cloudsql/demo:europe-west1:links",
        "ACTIONLINKS_SERVER_ADMIN_TOKEN": String(repeating: "a", count: 64),
        "ACTIONLINKS_KEYS_JSON": "{}",
    ]

    /// The documents of a YAML file.
    static func documents(_ path: String) throws -> [[String: Any]] {
        let text = try String(contentsOf: deploy.appendingPathComponent(path), encoding: .utf8)
        return try Yams.load_all(yaml: text).compactMap { $0 as? [String: Any] }
    }

    /// A container's environment: literal values, and the secrets' as an operator fills them.
    static func environment(_ container: [String: Any]) throws -> [String: String] {
        var environment: [String: String] = [:]
        for entry in container["env"] as? [[String: Any]] ?? [] {
            let name = try #require(entry["name"] as? String)
            environment[name] = entry["value"] as? String ?? secretValues[name]
            #expect(environment[name] != nil, "\(name) has no value")
        }
        return environment
    }

    /// Reads the shipped configuration with `environment` as `serve` would, and asks the production check.
    static func production(_ environment: [String: String], platform: [String: String]) throws -> [ProductionFinding] {
        let configuration = try ActionLinksConfiguration.load(file: Repository.configFile, environment: environment)
        try configuration.service.checkServable(file: Repository.configFile)
        return configuration.service.productionFindings(environment: platform, dataDirectoryHasKeys: false)
    }

    /// Every probe's path, and that the server answers each one 200.
    static func probes(_ container: [String: Any]) async throws -> [String] {
        let paths = ["startupProbe", "readinessProbe", "livenessProbe"].compactMap {
            ((container[$0] as? [String: Any])?["httpGet"] as? [String: Any])?["path"] as? String
        }
        try await TestApp.router { app in
            for path in Set(paths) {
                // A readiness probe may say 503 until the store's first check is in (a platform
                // probes again); each must come to 200.
                var status: Int?
                try await Eventually.wait(for: "\(path) to answer 200; last: \(status ?? 0)") {
                    status = try await app.request("GET", path).status
                    return status == 200
                }
            }
        }
        return paths
    }

    @Test(
        "Cloud Run: the image's port, the Cloud SQL socket, the keys secret mounted where keys.file says, probes the server answers, ready for production"
    )
    func cloudRun() async throws {
        let service = try #require(try Self.documents("cloudrun/service.yaml").first)
        #expect(service["kind"] as? String == "Service")
        let template = try #require((service["spec"] as? [String: Any])?["template"] as? [String: Any])
        let annotations = (template["metadata"] as? [String: Any])?["annotations"] as? [String: String] ?? [:]
        let pod = try #require(template["spec"] as? [String: Any])
        let container = try #require((pod["containers"] as? [[String: Any]])?.first)
        #expect((container["ports"] as? [[String: Any]])?.first?["containerPort"] as? Int == Image.port)
        var environment = try Self.environment(container)
        environment["PORT"] = String(Image.port)  // what Cloud Run sets
        let instance = try #require(annotations["run.googleapis.com/cloudsql-instances"])
        #expect(
            Self.secretValues["ACTIONLINKS_STORE"]!.hasSuffix("/cloudsql/demo:europe-west1:links")
                && instance.split(separator: ":").count == 3)
        let mount = try #require((container["volumeMounts"] as? [[String: Any]])?.first)
        #expect(mount["readOnly"] as? Bool == true)
        let volume = try #require((pod["volumes"] as? [[String: Any]])?.first)
        let item = try #require(((volume["secret"] as? [String: Any])?["items"] as? [[String: Any]])?.first)
        #expect(environment["ACTIONLINKS_KEYS_FILE"] == "\(mount["mountPath"] as? String ?? "")/\(item["path"] as? String ?? "")")
        #expect(try Self.production(environment, platform: ["K_SERVICE": "actionlinks"]).isEmpty)
        #expect(try await Self.probes(container).sorted() == ["/healthz", "/readyz"])
    }

    @Test(
        "Kubernetes: the image's user as a non-root security context, PORT and the ports agreeing, the keys secret, probes the server answers, ready for production"
    )
    func kubernetes() async throws {
        let documents = try Self.documents("kubernetes/actionlinks.yaml")
        #expect(documents.compactMap { $0["kind"] as? String } == ["Deployment", "Service", "Ingress"])
        let pod = try #require(((documents[0]["spec"] as? [String: Any])?["template"] as? [String: Any])?["spec"] as? [String: Any])
        let security = try #require(pod["securityContext"] as? [String: Any])
        #expect(security["runAsUser"] as? Int == Image.user && security["runAsNonRoot"] as? Bool == true)
        #expect((pod["terminationGracePeriodSeconds"] as? Int ?? 0) > 8, "longer than server.shutdownTimeout")
        let container = try #require((pod["containers"] as? [[String: Any]])?.first)
        let environment = try Self.environment(container)
        let port = try #require((container["ports"] as? [[String: Any]])?.first)
        #expect(port["containerPort"] as? Int == Image.port && environment["PORT"] == String(Image.port))
        let service = try #require((documents[1]["spec"] as? [String: Any])?["ports"] as? [[String: Any]])
        #expect(service.first?["targetPort"] as? String == port["name"] as? String)
        let mount = try #require((container["volumeMounts"] as? [[String: Any]])?.first { $0["name"] as? String == "keys" })
        #expect(environment["ACTIONLINKS_KEYS_FILE"]?.hasPrefix((mount["mountPath"] as? String ?? "?") + "/") == true)
        var remote = environment
        remote["ACTIONLINKS_STORE"] = "postgres://actionlinks:pw@postgres.example.internal/actionlinks?sslmode=verify-full"
        #expect(try Self.production(remote, platform: ["KUBERNETES_SERVICE_HOST": "10.0.0.1"]).isEmpty)
        #expect(try await Self.probes(container).sorted() == ["/healthz", "/healthz", "/readyz"])
    }

    @Test(
        "systemd: the image's command, a state directory of the server's own, variables the server reads, ready for production behind a proxy on the machine"
    )
    func systemd() throws {
        let text = try String(contentsOf: Self.deploy.appendingPathComponent("systemd/actionlinks.service"), encoding: .utf8)
        var values: [String: [String]] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.hasPrefix("[") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals]), default: []].append(String(line[line.index(after: equals)...]))
        }
        #expect(values["ExecStart"] == [Image.entrypoint.joined(separator: " ")])
        #expect(
            values["User"] == ["actionlinks"] && values["StateDirectory"] == ["actionlinks"] && values["StateDirectoryMode"] == ["0700"])
        var environment: [String: String] = ["ACTIONLINKS_SERVER_ADMIN_TOKEN": Self.secretValues["ACTIONLINKS_SERVER_ADMIN_TOKEN"]!]
        for assignment in values["Environment"] ?? [] {
            let parts = assignment.split(separator: "=", maxSplits: 1)
            environment[String(parts[0])] = String(parts[1])
        }
        #expect(environment["ACTIONLINKS_STORE"]?.hasPrefix("sqlite:" + (environment["ACTIONLINKS_DATA_DIRECTORY"] ?? "?")) == true)
        // The log backend is the one finding left: the unit sets no mail backend, the environment file does.
        var mailed = environment
        mailed["ACTIONLINKS_MAIL_BACKEND"] = "webhook"
        mailed["ACTIONLINKS_MAIL_WEBHOOK_URL"] = "https://mail.example.com/send"
        #expect(try Self.production(mailed, platform: [:]).isEmpty)
        #expect(try Self.production(environment, platform: [:]).map(\.key) == ["mail.backend"])
        let stop = Int(values["TimeoutStopSec"]?.first ?? "") ?? 0
        #expect(stop > 8, "longer than server.shutdownTimeout")
    }

    @Test(
        "compose: PostgreSQL's socket shared with the server, the image built from the Containerfile, variables the server reads, ready for production"
    )
    func compose() throws {
        let file = try #require(try Self.documents("compose/compose.yaml").first)
        let services = try #require(file["services"] as? [String: Any])
        let server = try #require(services["actionlinks"] as? [String: Any])
        #expect((server["build"] as? [String: Any])?["dockerfile"] as? String == "Containerfile")
        var environment = try #require(server["environment"] as? [String: String])
        #expect(environment["PORT"] == String(Image.port) && (server["ports"] as? [String])?.first?.hasSuffix(":\(Image.port)") == true)
        let store = try PostgresLocation(url: try #require(environment["ACTIONLINKS_STORE"]))
        let sockets = (server["volumes"] as? [String])?.first?.split(separator: ":").last.map(String.init)
        #expect(
            store.socketDirectory == sockets
                && ((services["postgres"] as? [String: Any])?["volumes"] as? [String])?.contains("sockets:" + (sockets ?? "?")) == true)
        // What the env file holds.
        environment["ACTIONLINKS_KEYS_JSON"] = Self.secretValues["ACTIONLINKS_KEYS_JSON"]
        environment["ACTIONLINKS_SERVER_ADMIN_TOKEN"] = Self.secretValues["ACTIONLINKS_SERVER_ADMIN_TOKEN"]
        #expect(try Self.production(environment, platform: [:]).isEmpty)
    }
}
