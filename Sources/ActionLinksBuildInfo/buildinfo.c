#include "ActionLinksBuildInfo.h"

// A C target, because a C macro is the one value a build command can give the code without a
// generated file: `swift build -Xcc -DACTIONLINKS_COMMIT='"<sha>"'`.
#ifndef ACTIONLINKS_COMMIT
#define ACTIONLINKS_COMMIT "unknown"
#endif

const char *actionlinks_build_commit(void) { return ACTIONLINKS_COMMIT; }
