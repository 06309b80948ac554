// The parts of libxml2 that ActionLinksEmail uses: the forgiving HTML parser and the tree it builds.
#ifndef CLIBXML2_SHIM_H
#define CLIBXML2_SHIM_H

// Debian's libxml2 is built with ICU, so its encoding.h declares ICU converters with the system's
// <unicode/*.h>, whose UErrorCode differs from the copy Foundation carries (_FoundationICU). A Swift
// module that sees both fails to build ("'UErrorCode' has different definitions in different
// modules"). Nothing we call touches a converter (xmlCharEncodingHandler's ICU fields), so the
// declarations are left out of this module.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#endif
