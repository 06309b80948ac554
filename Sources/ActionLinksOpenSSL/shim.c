#include "ActionLinksOpenSSL.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <stdio.h>
#include <stdlib.h>

struct actionlinks_rsa_signer {
    EVP_PKEY *key;
    /// A context prepared once (PKCS #1 v1.5, SHA-256), copied for each signature: no algorithm is
    /// looked up per call, and signing threads share nothing mutable.
    EVP_PKEY_CTX *prepared;
    size_t length;
};

/// `doing` failed: OpenSSL's oldest queued error, if any, into `error`, and the queue cleared.
static void report(const char *doing, char *error, size_t error_size) {
    unsigned long code = ERR_get_error();
    ERR_clear_error();
    if (error_size == 0) return;
    if (code == 0) {
        snprintf(error, error_size, "OpenSSL failed %s", doing);
    } else {
        char reason[256];
        ERR_error_string_n(code, reason, sizeof reason);
        snprintf(error, error_size, "OpenSSL failed %s: %s", doing, reason);
    }
}

actionlinks_rsa_signer *actionlinks_rsa_signer_new(const char *pem, size_t pem_length, char *error, size_t error_size) {
    if (pem_length > 1 << 20) {
        snprintf(error, error_size, "the PEM private key is too long");
        return NULL;
    }
    BIO *bio = BIO_new_mem_buf(pem, (int)pem_length);
    if (bio == NULL) {
        report("reading the PEM private key", error, error_size);
        return NULL;
    }
    EVP_PKEY *key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
    BIO_free(bio);
    if (key == NULL) {
        report("reading the PEM private key", error, error_size);
        return NULL;
    }
    if (EVP_PKEY_get_base_id(key) != EVP_PKEY_RSA) {
        EVP_PKEY_free(key);
        snprintf(error, error_size, "the PEM private key is not an RSA key");
        return NULL;
    }
    EVP_PKEY_CTX *context = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
    if (context == NULL || EVP_PKEY_sign_init(context) != 1 || EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) != 1
        || EVP_PKEY_CTX_set_signature_md(context, EVP_sha256()) != 1) {
        report("preparing RS256 signatures", error, error_size);
        EVP_PKEY_CTX_free(context);
        EVP_PKEY_free(key);
        return NULL;
    }
    actionlinks_rsa_signer *signer = malloc(sizeof *signer);
    if (signer == NULL) {
        snprintf(error, error_size, "out of memory");
        EVP_PKEY_CTX_free(context);
        EVP_PKEY_free(key);
        return NULL;
    }
    signer->key = key;
    signer->prepared = context;
    signer->length = (size_t)EVP_PKEY_get_size(key);
    return signer;
}

void actionlinks_rsa_signer_free(actionlinks_rsa_signer *signer) {
    if (signer == NULL) return;
    EVP_PKEY_CTX_free(signer->prepared);
    EVP_PKEY_free(signer->key);
    free(signer);
}

size_t actionlinks_rsa_signer_length(const actionlinks_rsa_signer *signer) { return signer->length; }

int actionlinks_rsa_signer_sign(const actionlinks_rsa_signer *signer, const uint8_t *digest, size_t digest_length,
                                uint8_t *signature, size_t signature_capacity, char *error, size_t error_size) {
    if (digest_length != 32 || signature_capacity < signer->length) {
        snprintf(error, error_size, "RS256 signs a 32-byte SHA-256 digest into %zu bytes", signer->length);
        return 0;
    }
    EVP_PKEY_CTX *context = EVP_PKEY_CTX_dup(signer->prepared);
    if (context == NULL) {
        report("copying the signing context", error, error_size);
        return 0;
    }
    size_t length = signature_capacity;
    int result = EVP_PKEY_sign(context, signature, &length, digest, digest_length);
    EVP_PKEY_CTX_free(context);
    if (result != 1 || length != signer->length) {
        report("signing", error, error_size);
        return 0;
    }
    return 1;
}
