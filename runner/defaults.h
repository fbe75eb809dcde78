/*
 * defaults.h: the embedded defaults that make spotrun work with no cloud:
 * the store is a directory under the user's data directory.
 */
#ifndef SR_DEFAULTS_H
#define SR_DEFAULTS_H

/* file://$XDG_DATA_HOME/spotrun, with XDG_DATA_HOME defaulting to
 * $HOME/.local/share (and HOME to the password database's entry). malloc'd. */
char *sr_default_store(void);

#endif
