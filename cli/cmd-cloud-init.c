/*
 * cmd-cloud-init.c: `spotrun cloud-init --queue URL --source URL [options]`:
 * print #cloud-config user-data that builds spotrun from its source on a
 * fresh Debian 12, Ubuntu 22.04 or 24.04 VM and starts its agent on the
 * queue as spotrun-agent.service; with --unit, that unit alone. The text is
 * cloudinit.c's; this file maps options and failures to the exit codes.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudinit.h"
#include "cmd.h"
#include "util.h"

enum { CI_QUEUE, CI_SOURCE, CI_SHA256, CI_IDLE_TIMEOUT, CI_IDLE_COMMAND, CI_LABELS, CI_UNIT };

static const struct sr_opt ci_opts[] = {
	[CI_QUEUE] = { 0, "queue", "URL", "the agent's queue (default: $SPOTRUN_QUEUE)" },
	[CI_SOURCE] = { 0, "source", "URL", "spotrun's source: URL.git[#TAG] or a tarball" },
	[CI_SHA256] = { 0, "sha256", "HEX", "the tarball's SHA-256, checked on the VM" },
	[CI_IDLE_TIMEOUT] = { 0, "idle-timeout", "DURATION", "the agent's idle timeout (30m, 1h30m)" },
	[CI_IDLE_COMMAND] = { 0, "idle-command", "COMMAND", "run by the agent once idle "
	    "('systemctl poweroff')" },
	[CI_LABELS] = { 0, "labels", "LIST", "the agent's labels, NAME=VALUE,..." },
	[CI_UNIT] = { 0, "unit", NULL, "print the agent's systemd unit, not the user-data" },
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
	};
	char err[SR_ERRMAX];

	if (o.queue == NULL)
		o.queue = getenv("SPOTRUN_QUEUE");
	if (sr_cinit_check(&o, ci_warn, NULL, err) == -1) {
		fprintf(stderr, "spotrun cloud-init: %s\n", err);
		return SR_EXIT_USAGE;
	}
	if (o.unit_only)
		sr_cinit_write_unit(&o, stdout);
	else
		sr_cinit_write_userdata(&o, stdout);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		sr_errno(err, "write standard output");
		fprintf(stderr, "spotrun cloud-init: %s\n", err);
		return SR_EXIT_IOERR;
	}
	return 0;
}

const struct sr_cmd_entry sr_cmd_cloud_init_entry = {
	.name = "cloud-init",
	.args = { .opts = ci_opts, .operands = "", .min = 0, .max = 0 },
	.summary = "print user-data that makes a cloud VM an agent of a queue",
	.help = "Print #cloud-config user-data for a fresh Debian 12, Ubuntu 22.04 or 24.04\n"
	    "VM: it fetches spotrun's source (--source: a git repository or a make dist\n"
	    "tarball, over https), builds and installs it with its build-aux/install-deps\n"
	    "--runtime, and starts `spotrun agent --queue URL` with the options given as\n"
	    "spotrun-agent.service. No credential is written: the agent uses the\n"
	    "instance's role, and a key given in an option is refused (exit 64).",
	.exec = cmd_cloud_init_exec,
};
