// RS256 signatures by OpenSSL's libcrypto (Debian: libssl-dev), for ActionLinksServer's ID tokens.
// OpenSSL's own headers (and their many macros) stay in shim.c: Swift sees only these few functions.
#ifndef ACTIONLINKS_OPENSSL_H
#define ACTIONLINKS_OPENSSL_H

#include <stddef.h>
#include <stdint.h>

/// A private RSA key ready to sign SHA-256 digests with PKCS #1 v1.5 padding.
typedef struct actionlinks_rsa_signer actionlinks_rsa_signer;

/// The key in `pem` (PKCS #1 or PKCS #8, unencrypted), or NULL with a message in `error`.
actionlinks_rsa_signer *actionlinks_rsa_signer_new(const char *pem, size_t pem_length, char *error, size_t error_size);

void actionlinks_rsa_signer_free(actionlinks_rsa_signer *signer);

/// The signature's length in bytes (the modulus's).
size_t actionlinks_rsa_signer_length(const actionlinks_rsa_signer *signer);

/// Signs a 32-byte SHA-256 digest into `signature` (room for the signer's length): 1, or 0 with a
/// message in `error`.
int actionlinks_rsa_signer_sign(const actionlinks_rsa_signer *signer, const uint8_t *digest, size_t digest_length,
                                uint8_t *signature, size_t signature_capacity, char *error, size_t error_size);

#endif
