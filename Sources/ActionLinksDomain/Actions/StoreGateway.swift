import Foundation
import Logging

/// How the services call the stores: a store's refusal becomes its ``ActionError``, and a failure
/// `UNAVAILABLE` (logged without secrets, with the cause kept).
package struct StoreGateway: Sendable {
    let logger: Logger

    /// Runs a store call, turning a store failure into `UNAVAILABLE` (logged without secrets).
    @discardableResult
    package func call<T>(_ body: () async throws -> T) async throws(ActionError) -> T {
        do {
            return try await body()
        } catch {
            throw failure(error)
        }
    }

    /// What a store call's `error` is to a service: a store's refusal its ``ActionError``, a
    /// failure `UNAVAILABLE` (logged without secrets, with the cause kept).
    package func failure(_ error: any Error) -> ActionError {
        switch error {
        case let error as ActionError: return error
        case AccountStoreError.emailExists: return ActionError.emailExists
        case AccountStoreError.accountNotFound: return ActionError.userNotFound
        case AccountStoreError.phoneNumberExists: return ActionError(.phoneNumberExists)
        case AccountStoreError.localIDExists: return ActionError(.duplicateLocalID)
        case AccountStoreError.federatedIdentityExists: return ActionError(.federatedUserIDAlreadyLinked)
        case let error as StoreInconsistency:
            logger.error("store inconsistency", metadata: ["error": "\(error)"])
            return ActionError(.internalError, "the store refused a change it should have taken", cause: error)
        default:
            return unavailable(error)
        }
    }

    func unavailable(_ error: any Error) -> ActionError {
        logger.error("store call failed", metadata: ["error": "\(error)"])
        return ActionError(.unavailable, ActionError.unavailable.detail, cause: error)
    }
}
