/*
 * cloudinit.h: the text `spotrun cloud-init` prints: #cloud-config user-data
 * that builds spotrun from its source on a fresh Debian 12, Ubuntu 22.04 or
 * 24.04 cloud image and starts the agent as spotrun-agent.service, and that
 * unit on its own. The unit's one template is dist/spotrun-agent.service.in,
 * built into the binary (sr_cinit_unit_template), so the user-data can never
 * carry another version of it than the one `make install` installs.
 *
 * No credential is ever written: the agent finds its keys on the VM (the
 * instance's role), and sr_cinit_check refuses options that carry one.
 */
#ifndef SR_CLOUDINIT_H
#define SR_CLOUDINIT_H

#include <stdio.h>

/* Where the user-data installs spotrun on the VM (./configure --prefix). */
#define SR_CINIT_PREFIX "/usr/local"
/* Where the user-data writes the unit and the install script. */
#define SR_CINIT_UNIT_PATH "/etc/systemd/system/spotrun-agent.service"
#define SR_CINIT_INSTALL_PATH "/usr/local/sbin/spotrun-install"

/* The text of dist/spotrun-agent.service.in: @bindir@ is where spotrun is
 * installed, @agent_args@ the options after `spotrun agent` (with a leading
 * space), empty in the unit `make install` installs. */
extern const char sr_cinit_unit_template[];

/* What the command was given; NULL: not given. */
struct sr_cinit_opts {
	const char *queue;		/* the agent's queue (a store URL) */
	const char *source;		/* spotrun's source: URL.git[#REF] or a tarball's URL */
	const char *sha256;		/* the tarball's SHA-256, hex */
	const char *idle_timeout;	/* a duration (units.h) */
	const char *idle_command;	/* one line, run by the agent once idle that long */
	const char *labels;		/* NAME=VALUE[,NAME=VALUE...] */
	int unit_only;			/* the unit is asked for: no source needed */
};

/*
 * Check o as the command's options: 0, or -1 with err (SR_ERRMAX) naming the
 * option, what is wrong and what would do. A value that carries a
 * credential (an AWS or GCS key variable set in it, a value of one of those
 * variables in this process's environment, an AWS or GCS access key id, a
 * user or password in a URL) is refused before anything else, and the
 * message never shows it. Then a value with a character outside printable
 * ASCII (YAML ends a line at U+0085, U+2028, U+2029; control characters are
 * structure) is refused, naming the character and its byte, never showing
 * the value. warn, when not NULL, is called with what is
 * allowed but likely wrong (plain http without --sha256, a file:// queue,
 * gs:// without keys on the VM).
 */
int sr_cinit_check(const struct sr_cinit_opts *o, void (*warn)(void *arg, const char *msg),
    void *arg, char *err);

/* The agent's unit, its ExecStart running `spotrun agent` with o's options,
 * to fp. o must have passed sr_cinit_check. */
void sr_cinit_write_unit(const struct sr_cinit_opts *o, FILE *fp);

/* The #cloud-config user-data to fp: the packages that fetch the source,
 * the unit and an install script (write_files), and runcmd running the
 * script (fetch, check, build-aux/install-deps --runtime, configure, make
 * install, systemctl enable and start). o must have passed sr_cinit_check and
 * have a source. */
void sr_cinit_write_userdata(const struct sr_cinit_opts *o, FILE *fp);

#endif
