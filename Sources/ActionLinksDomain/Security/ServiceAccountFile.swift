import Crypto
import CryptoExtras
import Foundation

/// Makes the service-account files of `actionlinks service-account`: the private key in Google's
/// service-account JSON (what `firebase-admin` loads), the public half where
/// ``CustomTokenVerifier`` reads it.
public enum ServiceAccountFile {
    /// What was made.
    public struct Made: Sendable {
        public var keyID: String
        public var clientEmail: String
        public var publicKeyPath: String
    }

    /// Google's token endpoint, the file's `token_uri` unless another is given.
    public static let googleTokenURI = "https://oauth2.googleapis.com/token"

    /// Makes a key for `projectID`, writes the service-account file to `output` (0600, never over
    /// an existing file) with `tokenURI` as where its access tokens come from, and the public key
    /// under `dataDirectory`.
    public static func make(
        dataDirectory: String, projectID: String, name: String, output: String, tokenURI: String = googleTokenURI
    ) throws -> Made {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let keyID = (0..<20).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        let clientEmail = "\(name)@\(projectID).iam.gserviceaccount.com"
        let clientID = String((0..<21).map { _ in Character(String(Int.random(in: 0...9))) })
        let account: [String: String] = [
            "type": "service_account", "project_id": projectID, "private_key_id": keyID, "private_key": key.pkcs8PEMRepresentation + "\n",
            "client_email": clientEmail, "client_id": clientID, "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": tokenURI, "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
            "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/" + clientEmail,
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        guard try PrivateFiles.createFile(output, contents: try encoder.encode(account)) else {
            throw ServerKeysError(path: output, message: "the file exists; choose another --out or move it away")
        }
        let directory = ((dataDirectory as NSString).appendingPathComponent("keys") as NSString).appendingPathComponent("service-accounts")
        try PrivateFiles.makeDirectory(directory)
        let publicKey = ServiceAccountKey(
            keyID: keyID, clientEmail: clientEmail, projectID: projectID, publicKeyPEM: key.publicKey.pemRepresentation)
        let path = (directory as NSString).appendingPathComponent(keyID + ".json")
        try PrivateFiles.createFile(path, contents: try encoder.encode(publicKey))
        return Made(keyID: keyID, clientEmail: clientEmail, publicKeyPath: path)
    }
}
