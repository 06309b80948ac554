// The xmlsec1 calls ActionLinksSAML needs, compiled here with the xmlsec configuration of
// `pkg-config --cflags xmlsec1` (Debian 12 and 13: the OpenSSL back end, linked directly, xmlSecSize
// an unsigned int): SwiftPM takes a system library's include paths and libraries from pkg-config
// but not its -D flags, and many xmlsec names are macros Swift cannot call. All the XML signature
// work (reference resolution, canonicalisation, digests, the signature check) is xmlsec's.
#include "ActionLinksXMLSec.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/valid.h>
#include <xmlsec/base64.h>
#include <xmlsec/crypto.h>
#include <xmlsec/errors.h>
#include <xmlsec/keys.h>
#include <xmlsec/transforms.h>
#include <xmlsec/xmldsig.h>
#include <xmlsec/xmlsec.h>
#include <xmlsec/xmltree.h>
#include <zlib.h>

#if !defined(XMLSEC_CRYPTO_OPENSSL) || !defined(XMLSEC_NO_SIZE_T)
#error "build with xmlsec's pkg-config defines (Package.swift: ActionLinksXMLSec's cSettings)"
#endif

static void actionlinks_xmlsec_silent(const char *file, int line, const char *func, const char *errorObject,
                                      const char *errorSubject, int reason, const char *msg) {
    (void)file; (void)line; (void)func; (void)errorObject; (void)errorSubject; (void)reason; (void)msg;
}

/// Initialises libxml2 and xmlsec with its OpenSSL back end, once per process; errors are not
/// printed (each check reports its own). Returns 0, or a negative step number.
int actionlinks_xmlsec_initialize(void) {
    xmlInitParser();
    if (xmlSecInit() < 0) return -1;
    if (xmlSecCheckVersion() != 1) return -2;
    if (xmlSecCryptoAppInit(NULL) < 0) return -3;
    if (xmlSecCryptoInit() < 0) return -4;
    xmlSecErrorsSetCallback(actionlinks_xmlsec_silent);
    return 0;
}

struct _xmlDoc *actionlinks_xml_parse(const char *bytes, int length) {
    return xmlReadMemory(bytes, length, NULL, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
}

void actionlinks_xml_free_document(struct _xmlDoc *document) { xmlFreeDoc(document); }

struct _xmlNode *actionlinks_xml_root(struct _xmlDoc *document) { return xmlDocGetRootElement(document); }

int actionlinks_xml_node_kind(const struct _xmlNode *node) { return (int)node->type; }

struct _xmlNode *actionlinks_xml_first_child(const struct _xmlNode *node) { return node->children; }

struct _xmlNode *actionlinks_xml_next_sibling(const struct _xmlNode *node) { return node->next; }

struct _xmlNode *actionlinks_xml_parent(const struct _xmlNode *node) { return node->parent; }

const unsigned char *actionlinks_xml_node_name(const struct _xmlNode *node) { return node->name; }

const unsigned char *actionlinks_xml_node_namespace(const struct _xmlNode *node) {
    return node->ns != NULL ? node->ns->href : NULL;
}

const unsigned char *actionlinks_xml_node_content(const struct _xmlNode *node) { return node->content; }

struct _xmlAttr *actionlinks_xml_first_attribute(const struct _xmlNode *element) {
    return element->type == XML_ELEMENT_NODE ? element->properties : NULL;
}

struct _xmlAttr *actionlinks_xml_next_attribute(const struct _xmlAttr *attribute) { return attribute->next; }

const unsigned char *actionlinks_xml_attribute_name(const struct _xmlAttr *attribute) { return attribute->name; }

const unsigned char *actionlinks_xml_attribute_namespace(const struct _xmlAttr *attribute) {
    return attribute->ns != NULL ? attribute->ns->href : NULL;
}

struct _xmlNode *actionlinks_xml_attribute_value(const struct _xmlAttr *attribute) { return attribute->children; }

/// Whether `der` (`length` bytes) is an X.509 certificate xmlsec can take a public key from.
int actionlinks_xmlsec_certificate_loads(const unsigned char *der, size_t length) {
    xmlSecKeyPtr key = xmlSecCryptoAppKeyLoadMemory(der, (xmlSecSize)length, xmlSecKeyDataFormatCertDer, NULL, NULL, NULL);
    if (key == NULL) return 0;
    xmlSecKeyDestroy(key);
    return 1;
}

/// Verifies the <ds:Signature> element `signature` with the public key of the DER certificate
/// `der`, and nothing else: the signature's own KeyInfo is ignored, references may only point into
/// the same document, manifests are ignored, and only these algorithms are accepted: exclusive or
/// inclusive canonicalisation (1.0, 1.1), the enveloped-signature transform, SHA-256/384/512
/// digests, and RSA or ECDSA signatures with SHA-256/384/512.
/// Returns 1 when the signature is valid, 0 when it is not (or uses anything else), -1 when the
/// certificate cannot be read, -2 when xmlsec fails otherwise.
int actionlinks_xmlsec_verify(struct _xmlNode *signature, const unsigned char *der, size_t length) {
    xmlSecKeyPtr key = xmlSecCryptoAppKeyLoadMemory(der, (xmlSecSize)length, xmlSecKeyDataFormatCertDer, NULL, NULL, NULL);
    if (key == NULL) return -1;
    xmlSecDSigCtxPtr context = xmlSecDSigCtxCreate(NULL);
    if (context == NULL) {
        xmlSecKeyDestroy(key);
        return -2;
    }
    context->signKey = key; /* owned by the context from here on */
    context->flags |= XMLSEC_DSIG_FLAGS_IGNORE_MANIFESTS;
    context->enabledReferenceUris = xmlSecTransformUriTypeSameDocument;
    context->transformCtx.enabledUris = xmlSecTransformUriTypeNone;
    int failed = 0;
    /* What SignedInfo may use: its canonicalisation and the signature method. */
    failed |= xmlSecDSigCtxEnableSignatureTransform(context, xmlSecTransformExclC14NId) < 0;
    failed |= xmlSecDSigCtxEnableSignatureTransform(context, xmlSecTransformExclC14NWithCommentsId) < 0;
    failed |= xmlSecDSigCtxEnableSignatureTransform(context, xmlSecTransformInclC14NId) < 0;
    failed |= xmlSecDSigCtxEnableSignatureTransform(context, xmlSecTransformInclC14NWithCommentsId) < 0;
    failed |= xmlSecDSigCtxEnableSignatureTransform(context, xmlSecTransformInclC14N11Id) < 0;
    failed |= xmlSecDSigCtxEnableSignatureTransform(context, xmlSecTransformInclC14N11WithCommentsId) < 0;
    failed |= xmlSecDSigCtxEnableSignatureTransform(context, xmlSecTransformRsaSha256Id) < 0;
    failed |= xmlSecDSigCtxEnableSignatureTransform(context, xmlSecTransformRsaSha384Id) < 0;
    failed |= xmlSecDSigCtxEnableSignatureTransform(context, xmlSecTransformRsaSha512Id) < 0;
    failed |= xmlSecDSigCtxEnableSignatureTransform(context, xmlSecTransformEcdsaSha256Id) < 0;
    failed |= xmlSecDSigCtxEnableSignatureTransform(context, xmlSecTransformEcdsaSha384Id) < 0;
    failed |= xmlSecDSigCtxEnableSignatureTransform(context, xmlSecTransformEcdsaSha512Id) < 0;
    /* What a Reference may use: the enveloped-signature transform, canonicalisation, its digest. */
    failed |= xmlSecDSigCtxEnableReferenceTransform(context, xmlSecTransformEnvelopedId) < 0;
    failed |= xmlSecDSigCtxEnableReferenceTransform(context, xmlSecTransformExclC14NId) < 0;
    failed |= xmlSecDSigCtxEnableReferenceTransform(context, xmlSecTransformExclC14NWithCommentsId) < 0;
    failed |= xmlSecDSigCtxEnableReferenceTransform(context, xmlSecTransformInclC14NId) < 0;
    failed |= xmlSecDSigCtxEnableReferenceTransform(context, xmlSecTransformInclC14NWithCommentsId) < 0;
    failed |= xmlSecDSigCtxEnableReferenceTransform(context, xmlSecTransformInclC14N11Id) < 0;
    failed |= xmlSecDSigCtxEnableReferenceTransform(context, xmlSecTransformInclC14N11WithCommentsId) < 0;
    failed |= xmlSecDSigCtxEnableReferenceTransform(context, xmlSecTransformSha256Id) < 0;
    failed |= xmlSecDSigCtxEnableReferenceTransform(context, xmlSecTransformSha384Id) < 0;
    failed |= xmlSecDSigCtxEnableReferenceTransform(context, xmlSecTransformSha512Id) < 0;
    if (failed) {
        xmlSecDSigCtxDestroy(context);
        return -2;
    }
    int result = 0;
    if (xmlSecDSigCtxVerify(context, signature) == 0 && context->status == xmlSecDSigStatusSucceeded) result = 1;
    xmlSecDSigCtxDestroy(context);
    return result;
}

/// Registers the attribute `attribute` (an `ID`) as an XML ID of its document, so that a
/// reference `#value` finds its element. Returns 0, or -1 when the value is already an ID there.
int actionlinks_xml_add_id(struct _xmlDoc *document, struct _xmlAttr *attribute, const char *value) {
    return xmlAddID(NULL, document, (const xmlChar *)value, attribute) == NULL ? -1 : 0;
}

/// Whether the document has any DOCTYPE (internal or external subset).
int actionlinks_xml_has_dtd(struct _xmlDoc *document) {
    return document->intSubset != NULL || document->extSubset != NULL;
}

/// Raw DEFLATE (RFC 1951, no zlib header), as the SAML HTTP-Redirect binding wants: `output` must
/// hold `*outputLength` bytes, which becomes the compressed length. Returns 0, or a zlib error.
int actionlinks_deflate_raw(const unsigned char *input, size_t inputLength, unsigned char *output,
                                          size_t *outputLength) {
    z_stream stream = {0};
    int status = deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    if (status != Z_OK) return status;
    stream.next_in = (Bytef *)input;
    stream.avail_in = (uInt)inputLength;
    stream.next_out = output;
    stream.avail_out = (uInt)*outputLength;
    status = deflate(&stream, Z_FINISH);
    *outputLength = stream.total_out;
    deflateEnd(&stream);
    return status == Z_STREAM_END ? 0 : (status == Z_OK ? Z_BUF_ERROR : status);
}

/// Raw INFLATE of at most `*outputLength` bytes (the receiving side of the HTTP-Redirect binding).
/// Returns 0, Z_BUF_ERROR when the output does not fit, or another zlib error.
int actionlinks_inflate_raw(const unsigned char *input, size_t inputLength, unsigned char *output,
                                          size_t *outputLength) {
    z_stream stream = {0};
    int status = inflateInit2(&stream, -15);
    if (status != Z_OK) return status;
    stream.next_in = (Bytef *)input;
    stream.avail_in = (uInt)inputLength;
    stream.next_out = output;
    stream.avail_out = (uInt)*outputLength;
    status = inflate(&stream, Z_FINISH);
    *outputLength = stream.total_out;
    inflateEnd(&stream);
    return status == Z_STREAM_END ? 0 : (status == Z_OK ? Z_BUF_ERROR : status);
}


/// Decodes base64 `text` (whitespace skipped), into `output` of `*outputLength` bytes, which
/// becomes the decoded length. Returns 0, or -1 when it is not base64 or does not fit.
int actionlinks_base64_decode(const char *text, unsigned char *output, size_t *outputLength) {
    xmlSecSize written = 0;
    if (xmlSecBase64Decode_ex((const xmlChar *)text, output, (xmlSecSize)*outputLength, &written) < 0) return -1;
    *outputLength = written;
    return 0;
}

/// base64 of `length` bytes, on one line; NULL when out of memory. Freed with actionlinks_free.
char *actionlinks_base64_encode(const unsigned char *input, size_t length) {
    return (char *)xmlSecBase64Encode(input, (xmlSecSize)length, 0);
}

/// Frees what libxml2 or xmlsec allocated.
void actionlinks_free(void *pointer) { xmlFree(pointer); }
