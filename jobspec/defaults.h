/*
 * defaults.h: the embedded defaults that make spotrun work with no cloud:
 * the store is a directory under the user's data directory.
 */
#ifndef SR_DEFAULTS_H
#define SR_DEFAULTS_H

/* file://$XDG_DATA_HOME/spotrun, with XDG_DATA_HOME defaulting to
 * $HOME/.local/share (and HOME to the password database's entry). malloc'd. */
char *sr_default_store(void);

/* The source tree's python/ folder, which holds the `spotrun` module, when
 * this spotrun is the binary of the build tree it was built in (a build
 * that was not installed), else NULL: any other copy writes out the module
 * it carries (runner/pymodule.h). Static storage. */
const char *sr_default_python_dir(void);

#endif
