/*
 * cmd-cloud-init.c: `spotrun cloud-init --queue URL [--source URL]
 * [options]`: print #cloud-config user-data that installs spotrun on a
 * fresh Debian 12, Ubuntu 22.04 or 24.04 VM (this very binary, put into
 * the queue's store and fetched with a presigned URL; or, with --source,
 * built there from its source) and starts its agent on the queue as
 * spotrun-agent.service; with --unit, that unit alone. The text is
 * cloudinit.c's; this file maps options and failures to the exit codes.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudinit.h"
#include "cmd.h"
#include "units.h"
#include "util.h"

enum { CI_QUEUE, CI_SOURCE, CI_SHA256, CI_IDLE_TIMEOUT, CI_IDLE_COMMAND, CI_LABELS, CI_UNIT,
	CI_URL_EXPIRES };

static const struct sr_opt ci_opts[] = {
	[CI_QUEUE] = { 0, "queue", "URL", "the agent's queue (default: $SPOTRUN_QUEUE)" },
	[CI_SOURCE] = { 0, "source", "URL", "spotrun's source: URL.git[#TAG] or a tarball" },
	[CI_SHA256] = { 0, "sha256", "HEX", "the tarball's SHA-256, checked on the VM" },
	[CI_IDLE_TIMEOUT] = { 0, "idle-timeout", "DURATION", "the agent's idle timeout (30m, 1h30m)" },
	[CI_IDLE_COMMAND] = { 0, "idle-command", "COMMAND", "run by the agent once idle "
	    "('systemctl poweroff')" },
	[CI_LABELS] = { 0, "labels", "LIST", "the agent's labels, NAME=VALUE,..." },
	[CI_UNIT] = { 0, "unit", NULL, "print the agent's systemd unit, not the user-data" },
	[CI_URL_EXPIRES] = { 0, "url-expires", "DURATION", "without --source: the binary's "
	    "URL's life (7d)" },
	{ 0 }
};

static void
ci_warn(void *arg, const char *msg)
{
	fprintf(stderr, "spotrun cloud-init: warning: %s\n", msg);
}

static int
cmd_cloud_init_exec(const struct sr_args *a)
{
	struct sr_cinit_opts o = {
		.queue = sr_args_get(a, CI_QUEUE),
		.source = sr_args_get(a, CI_SOURCE),
		.sha256 = sr_args_get(a, CI_SHA256),
		.idle_timeout = sr_args_get(a, CI_IDLE_TIMEOUT),
		.idle_command = sr_args_get(a, CI_IDLE_COMMAND),
		.labels = sr_args_get(a, CI_LABELS),
		.unit_only = sr_args_has(a, CI_UNIT),
		.url_expires = sr_args_get(a, CI_URL_EXPIRES),
	};
	char err[SR_ERRMAX], sha[65], key[SR_CINIT_BIN_KEY_MAX], *url = NULL;
	double expires = SR_CINIT_URL_EXPIRES;
	int rc = 0;

	if (o.queue == NULL)
		o.queue = getenv("SPOTRUN_QUEUE");
	if (sr_cinit_check(&o, ci_warn, NULL, err) == -1) {
		fprintf(stderr, "spotrun cloud-init: %s\n", err);
		return SR_EXIT_USAGE;
	}
	if (!o.unit_only && o.source == NULL) {
		/* checked by sr_cinit_check */
		if (o.url_expires != NULL && sr_parse_duration(o.url_expires, &expires) != 0)
			sr_fatal("cloud-init: --url-expires %s (not checked)", o.url_expires);
		if (sr_cinit_publish(o.queue, "/proc/self/exe", expires, &url, sha, key,
		    err) == -1) {
			fprintf(stderr, "spotrun cloud-init: %s\n", err);
			return SR_EXIT_IOERR;
		}
		o.bin_url = url;
		o.bin_sha256 = sha;
	}
	if (o.unit_only)
		sr_cinit_write_unit(&o, stdout);
	else
		sr_cinit_write_userdata(&o, stdout);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		sr_errno(err, "write standard output");
		fprintf(stderr, "spotrun cloud-init: %s\n", err);
		rc = SR_EXIT_IOERR;
	}
	free(url);
	return rc;
}

const struct sr_cmd_entry sr_cmd_cloud_init_entry = {
	.name = "cloud-init",
	.args = { .opts = ci_opts, .operands = "", .min = 0, .max = 0 },
	.summary = "print user-data that makes a cloud VM an agent of a queue",
	.help = "Print #cloud-config user-data for a fresh Debian 12, Ubuntu 22.04 or 24.04\n"
	    "VM. Without --source it installs this spotrun: the binary is put into the\n"
	    "queue's store (bin/spotrun-VERSION-SHA, once) and the VM fetches it with\n"
	    "a presigned URL that expires (--url-expires, 7d: VMs booting later cannot\n"
	    "install), checks its SHA-256 and installs the runtime libraries alone.\n"
	    "With --source (a git repository or a make dist tarball, over https) the VM\n"
	    "builds spotrun itself. Either way it starts `spotrun agent --queue URL`\n"
	    "with the options given as spotrun-agent.service. No key is written: the\n"
	    "agent uses the instance's role, and a key given in an option is refused\n"
	    "(exit 64).",
	.exec = cmd_cloud_init_exec,
};
