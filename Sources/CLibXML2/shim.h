// The parts of libxml2 that ActionLinksEmail uses: the forgiving HTML parser and the tree it builds.
#ifndef CLIBXML2_SHIM_H
#define CLIBXML2_SHIM_H

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#endif
