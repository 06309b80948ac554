import ActionLinks
import ActionLinksConfiguration
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The Identity Toolkit REST operations this server answers, by their v1 names
/// (`accounts:<name>`), with the legacy v3 names SDKs still call (`relyingparty/<name>`). Each
/// surface of operations adds itself in its own file (`Operations+*.swift`): **a new endpoint is
/// one `add` there**.
struct IdentityToolkitAPI: Sendable {
    /// One operation: the methods it takes and its handler.
    struct Operation: Sendable {
        var methods: Set<HTTPRequest.Method>
        var adminOnly: Bool
        var handle: @Sendable (RESTCall) async throws(ActionError) -> Data
    }

    private(set) var operations: [String: Operation] = [:]
    /// Legacy v3 name → v1 name.
    private(set) var legacyNames: [String: String] = [:]

    /// Adds an operation whose body decodes as `Body` and whose answer encodes from `Answer`.
    mutating func add<Body: Decodable & Sendable, Answer: Encodable>(
        _ name: String, legacy: String? = nil, methods: Set<HTTPRequest.Method> = [.post], adminOnly: Bool = false, body: Body.Type,
        _ handler: @escaping @Sendable (Body, RESTCall) async throws(ActionError) -> Answer
    ) {
        operations[name] = Operation(methods: methods, adminOnly: adminOnly) { call throws(ActionError) in
            let decoded = try call.decode(Body.self)
            return IdentityToolkitJSON.encode(try await handler(decoded, call))
        }
        if let legacy { legacyNames[legacy] = name }
    }

    /// Answers `name` for `call`: Firebase's `NOT_FOUND` for an operation or method it does not
    /// have, and for a call that names the project (in the path, or as `targetProjectId` in the
    /// body) without the admin credential, Firebase's `INSUFFICIENT_PERMISSION`.
    func perform(_ name: String, call: RESTCall) async throws(ActionError) -> Data {
        guard let operation = operations[name], operation.methods.contains(call.method) else {
            throw ActionError(.notFound, "\(call.method.rawValue) \(name.prefix(100)) is not a method of this API")
        }
        let namesProject = call.namesProject || (try? call.decode(ProjectTarget.self))?.targetProjectId != nil
        if (namesProject || operation.adminOnly), !call.isAdmin {
            throw ActionError(.insufficientPermission, "Only authenticated requests can specify target_project_id.")
        }
        return try await operation.handle(call)
    }

    /// Every operation of the server.
    static func all(_ services: LinkDomainServices) -> IdentityToolkitAPI {
        var api = IdentityToolkitAPI()
        api.addOobCodeOperations(services)
        api.addSignInOperations(services)
        api.addAccountOperations(services)
        api.addImportOperations(services)
        api.addTenantOperations(services)
        api.addFederatedOperations(services)
        return api
    }
}

/// The project a body names (`targetProjectId`, as the legacy admin calls send it).
struct ProjectTarget: Decodable, Sendable {
    var targetProjectId: String?
}
