/*
 * cloudinit.h: the text `spotrun cloud-init` prints: #cloud-config user-data
 * that installs spotrun on a fresh Debian 12, Ubuntu 22.04 or 24.04 cloud
 * image (a prebuilt binary fetched from the queue's store with a presigned
 * URL, or built from its source) and starts the agent as
 * spotrun-agent.service, and that unit on its own. The unit's one template is dist/spotrun-agent.service.in,
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
	/* Without a source, the prebuilt binary: the presigned URL's life
	 * (a duration, at most 7d; NULL: SR_CINIT_URL_EXPIRES), and, for
	 * sr_cinit_write_userdata, the URL and the binary's SHA-256 (hex)
	 * that sr_cinit_publish gave. */
	const char *url_expires;
	const char *bin_url;
	const char *bin_sha256;
};

/* The presigned URL's default life: 7 days, the longest S3 and GCS sign. */
#define SR_CINIT_URL_EXPIRES (7 * 24 * 3600)
/* The runtime libraries the prebuilt binary links (ldd spotrun), as
 * Debian 12 and Ubuntu 22.04 name their packages; Ubuntu 24.04's
 * libcurl4t64 and libssl3t64 provide the first two names. */
#define SR_CINIT_RUNTIME_PACKAGES "libcurl4", "libssl3", "libexpat1", "libzstd1", \
	"libjansson4", "libinih1", "libxxhash0"
/* Longest key sr_cinit_publish makes, with its NUL. */
#define SR_CINIT_BIN_KEY_MAX 96

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

/* The #cloud-config user-data to fp: the packages that fetch the source
 * (with bin_url: the runtime libraries and curl), the unit and an install
 * script (write_files), and runcmd running the script (with a source:
 * fetch, check, build-aux/install-deps --runtime, configure, make install;
 * with bin_url: fetch the binary, sha256sum -c against bin_sha256,
 * install it in SR_CINIT_PREFIX/bin; then systemctl enable and start). o
 * must have passed sr_cinit_check and have a source or a bin_url (the
 * URL is single-quoted for sh and YAML's block keeps it as it is). */
void sr_cinit_write_userdata(const struct sr_cinit_opts *o, FILE *fp);

/* The prebuilt binary for the user-data: read the executable exe (this
 * spotrun's, /proc/self/exe), compute its SHA-256 (64 hex digits into
 * sha256), put it into the store of queue under key
 * "bin/spotrun-VERSION-SHA16" (the first 16 hex digits; into key) unless
 * an object of its size is there already, and presign a GET of it for
 * expires seconds (sr_store_presign) into *url (malloc'd). A store that
 * cannot presign (file://) fails here. 0, or -1 with err ("publish
 * spotrun: reason"). */
int sr_cinit_publish(const char *queue, const char *exe, double expires, char **url,
    char sha256[65], char key[SR_CINIT_BIN_KEY_MAX], char *err);

#endif
