// OpenSSL's libcrypto (Debian: libssl-dev), for RSA signatures: where the CPU has AVX-512 IFMA,
// OpenSSL 3 signs RSA-2048 about twice as fast as the BoringSSL that swift-crypto carries. The
// process already loads libcrypto through xmlsec1's OpenSSL back end.
#ifndef CLIBCRYPTO_SHIM_H
#define CLIBCRYPTO_SHIM_H

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#endif
