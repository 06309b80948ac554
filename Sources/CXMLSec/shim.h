// libxml2 (the tree xmlsec signs and checks) and zlib, for ActionLinksXMLSec; the libraries to link
// (xmlsec1-openssl, xmlsec1, OpenSSL, libxslt, libxml2) come from `pkg-config xmlsec1`.
#ifndef CXMLSEC_SHIM_H
#define CXMLSEC_SHIM_H

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <zlib.h>

#endif
