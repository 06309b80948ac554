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
        } catch let error as ActionError {
            throw error
        } catch AccountStoreError.emailExists {
            throw ActionError.emailExists
        } catch AccountStoreError.accountNotFound {
            throw ActionError.userNotFound
        } catch AccountStoreError.phoneNumberExists {
            throw ActionError(.phoneNumberExists)
        } catch AccountStoreError.localIDExists {
            throw ActionError(.duplicateLocalID)
        } catch AccountStoreError.federatedIdentityExists {
            throw ActionError(.federatedUserIDAlreadyLinked)
        } catch let error as StoreInconsistency {
            logger.error("store inconsistency", metadata: ["error": "\(error)"])
            throw ActionError(.internalError, "the store refused a change it should have taken", cause: error)
        } catch {
            throw unavailable(error)
        }
    }

    func unavailable(_ error: any Error) -> ActionError {
        logger.error("store call failed", metadata: ["error": "\(error)"])
        return ActionError(.unavailable, ActionError.unavailable.detail, cause: error)
    }
}
