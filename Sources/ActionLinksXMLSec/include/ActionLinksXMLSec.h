// The libxml2, xmlsec1 and zlib functions ActionLinksSAML calls (shim.c).
//
// This header includes no libxml2 header, on purpose: libxml2's headers include the system's ICU
// (<unicode/ucnv.h>), whose `UErrorCode` differs from the one in Foundation's `_FoundationICU`, and
// every Swift module that imports ActionLinksSAML loads this module too. With libxml2's headers here,
// a fresh build of the server fails as soon as it gains another C dependency ("'UErrorCode' has
// different definitions in different modules"). So Swift sees libxml2's document, element and
// attribute only as opaque pointers (the struct tags are declared, never defined, here) and reads
// the tree through the accessors below.
#ifndef ACTIONLINKS_XMLSEC_H
#define ACTIONLINKS_XMLSEC_H

#include <stddef.h>

struct _xmlDoc;
struct _xmlNode;
struct _xmlAttr;

/// The node kinds the accessors report (libxml2's `xmlElementType` values).
enum {
    ACTIONLINKS_XML_ELEMENT = 1,
    ACTIONLINKS_XML_TEXT = 3,
    ACTIONLINKS_XML_CDATA = 4,
};

/// Parses `length` bytes as XML without the network, DTD loading or entity substitution, and
/// without printing errors; NULL when it is not well-formed. Freed with actionlinks_xml_free_document.
struct _xmlDoc *actionlinks_xml_parse(const char *bytes, int length);

void actionlinks_xml_free_document(struct _xmlDoc *document);

/// The document's root element, or NULL.
struct _xmlNode *actionlinks_xml_root(struct _xmlDoc *document);

/// A node's kind (ACTIONLINKS_XML_ELEMENT, _TEXT, _CDATA, or another libxml2 type).
int actionlinks_xml_node_kind(const struct _xmlNode *node);

/// A node's first child, next sibling and parent (any kind), or NULL.
struct _xmlNode *actionlinks_xml_first_child(const struct _xmlNode *node);
struct _xmlNode *actionlinks_xml_next_sibling(const struct _xmlNode *node);
struct _xmlNode *actionlinks_xml_parent(const struct _xmlNode *node);

/// A node's local name, its namespace's URI, and (for text and CDATA) its content, or NULL.
const unsigned char *actionlinks_xml_node_name(const struct _xmlNode *node);
const unsigned char *actionlinks_xml_node_namespace(const struct _xmlNode *node);
const unsigned char *actionlinks_xml_node_content(const struct _xmlNode *node);

/// An element's first attribute, an attribute's next one, or NULL.
struct _xmlAttr *actionlinks_xml_first_attribute(const struct _xmlNode *element);
struct _xmlAttr *actionlinks_xml_next_attribute(const struct _xmlAttr *attribute);

/// An attribute's local name and its namespace's URI (NULL without one).
const unsigned char *actionlinks_xml_attribute_name(const struct _xmlAttr *attribute);
const unsigned char *actionlinks_xml_attribute_namespace(const struct _xmlAttr *attribute);

/// An attribute's first value node (its text children follow as siblings), or NULL.
struct _xmlNode *actionlinks_xml_attribute_value(const struct _xmlAttr *attribute);

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
int actionlinks_xmlsec_verify(struct _xmlNode *signature, const unsigned char *der, size_t length);

/// Registers the attribute `attribute` (an `ID`) as an XML ID of its document, so that a
/// reference `#value` finds its element. Returns 0, or -1 when the value is already an ID there.
int actionlinks_xml_add_id(struct _xmlDoc *document, struct _xmlAttr *attribute, const char *value);

/// Whether the document has any DOCTYPE (internal or external subset).
int actionlinks_xml_has_dtd(struct _xmlDoc *document);

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
