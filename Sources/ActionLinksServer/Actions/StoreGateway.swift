import Foundation
import Logging

/// How the services call the stores: a store's refusal becomes its ``ActionError``, and a failure
/// `UNAVAILABLE` (logged without secrets, with the cause kept).
struct StoreGateway: Sendable {
    let logger: Logger

    /// Runs a store call, turning a store failure into `UNAVAILABLE` (logged without secrets).
    func call<T>(_ body: () async throws -> T) async throws(ActionError) -> T {
        do {
            return try await body()
        } catch let error as ActionError {
            throw error
        } catch AccountStoreError.emailExists {
            throw ActionError.emailExists
        } catch AccountStoreError.accountNotFound {
            throw ActionError.userNotFound
        } catch AccountStoreError.emailChanged {
            throw ActionError.invalidCode
        } catch AccountStoreError.signUpNotAllowed {
            throw ActionError(.adminOnlyOperation, "signing up is turned off for this project")
        } catch {
            throw unavailable(error)
        }
    }

    func unavailable(_ error: any Error) -> ActionError {
        logger.error("store call failed", metadata: ["error": "\(error)"])
        return ActionError(.unavailable, ActionError.unavailable.detail, cause: error)
    }
}
