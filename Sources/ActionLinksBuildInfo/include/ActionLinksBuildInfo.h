#ifndef ACTIONLINKS_BUILD_INFO_H
#define ACTIONLINKS_BUILD_INFO_H

/// The commit the binary was built from: `-Xcc -DACTIONLINKS_COMMIT='"<sha>"'` at build time
/// (scripts/image.sh and the Containerfile pass it), else "unknown".
const char *actionlinks_build_commit(void);

#endif
