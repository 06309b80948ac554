// libxml2 (the tree xmlsec signs and checks) and zlib, for ActionLinksXMLSec; the libraries to link
// (xmlsec1-openssl, xmlsec1, OpenSSL, libxslt, libxml2) come from `pkg-config xmlsec1`.
#ifndef CXMLSEC_SHIM_H
#define CXMLSEC_SHIM_H

// As in CLibXML2's shim: Debian's libxml2 declares its ICU converters with the system's ICU headers,
// which clash with Foundation's copy in any module that sees both; nothing here uses a converter.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <zlib.h>

#endif
