// The xmlsec1 and zlib functions ActionLinksSAML calls (shim.c), on libxml2's tree.
#ifndef ACTIONLINKS_XMLSEC_H
#define ACTIONLINKS_XMLSEC_H

#include <stddef.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/valid.h>

/// Initialises libxml2 and xmlsec with its OpenSSL back end, once per process; errors are not
/// printed (each check reports its own). Returns 0, or a negative step number.
int actionlinks_xmlsec_initialize(void);

/// Whether `der` (`length` bytes) is an X.509 certificate xmlsec can take a public key from.
int actionlinks_xmlsec_certificate_loads(const unsigned char *der, size_t length);

/// Verifies the <ds:Signature> element `signature` with the public key of the DER certificate
/// `der`, and nothing else: the signature's own KeyInfo is ignored, references may only point into
/// the same document, manifests are ignored, and only these algorithms are accepted: exclusive or
/// inclusive canonicalisation (1.0, 1.1), the enveloped-signature transform, SHA-256/384/512
/// digests, and RSA or ECDSA signatures with SHA-256/384/512.
/// Returns 1 when the signature is valid, 0 when it is not (or uses anything else), -1 when the
/// certificate cannot be read, -2 when xmlsec fails otherwise.
int actionlinks_xmlsec_verify(xmlNodePtr signature, const unsigned char *der, size_t length);

/// Registers the attribute `attribute` (an `ID`) as an XML ID of its document, so that a
/// reference `#value` finds its element. Returns 0, or -1 when the value is already an ID there.
int actionlinks_xml_add_id(xmlDocPtr document, xmlAttrPtr attribute, const char *value);

/// Whether the document has any DOCTYPE (internal or external subset).
int actionlinks_xml_has_dtd(xmlDocPtr document);

/// Raw DEFLATE (RFC 1951, no zlib header), as the SAML HTTP-Redirect binding wants: `output` must
/// hold `*outputLength` bytes, which becomes the compressed length. Returns 0, or a zlib error.
int actionlinks_deflate_raw(const unsigned char *input, size_t inputLength, unsigned char *output, size_t *outputLength);

/// Raw INFLATE of at most `*outputLength` bytes (the receiving side of the HTTP-Redirect binding).
/// Returns 0, Z_BUF_ERROR when the output does not fit, or another zlib error.
int actionlinks_inflate_raw(const unsigned char *input, size_t inputLength, unsigned char *output, size_t *outputLength);

/// Decodes base64 `text` (whitespace skipped), into `output` of `*outputLength` bytes, which
/// becomes the decoded length. Returns 0, or -1 when it is not base64 or does not fit.
int actionlinks_base64_decode(const char *text, unsigned char *output, size_t *outputLength);

/// base64 of `length` bytes, on one line; NULL when out of memory. Freed with actionlinks_free.
char *actionlinks_base64_encode(const unsigned char *input, size_t length);

/// Frees what libxml2 or xmlsec allocated.
void actionlinks_free(void *pointer);

#endif
