/*
 * t-cloudinit.c: the text of `spotrun cloud-init` (cli/cloudinit.c): every
 * option check against its exact message, the refusal in every option of what
 * YAML or systemd could read as structure (U+0085, U+2028, U+2029, C0 and C1
 * controls, bytes that are not UTF-8), the refusal of credentials (named,
 * from the environment, by their shape, in a URL) without showing them, the
 * warnings, the agent's command line as systemd will read it, the unit as
 * the template with only its ExecStart filled, the template as the file of
 * the source tree, and the parts of the user-data that change with the
 * source (git or tarball, #REF, --sha256, compression). The whole user-data
 * is compared with golden files by tests/t12-cloud-init.sh.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudinit.h"
#include "util.h"
#include "tap.h"

#define TARBALL "https://example.org/spotrun-0.1.0.tar.gz"
#define SHA "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
/* The middle of every message refusing a character of a value. */
#define ASCII_ONLY "the user-data and its unit take printable ASCII only (YAML ends a " \
	"line at U+0085, U+2028 and U+2029, and reads control characters as structure)"

struct warnings {
	int n;
	char last[SR_ERRMAX];
};

static void
note_warning(void *arg, const char *msg)
{
	struct warnings *w = arg;

	w->n++;
	snprintf(w->last, sizeof w->last, "%s", msg);
}

/* A check that must fail with exactly want. */
static void
refused(const struct sr_cinit_opts *o, const char *want, const char *what)
{
	char err[SR_ERRMAX] = "";
	int r = sr_cinit_check(o, NULL, NULL, err);

	ok(r == -1, "%s: refused", what);
	is_str(err, want, "%s: message", what);
}

static char *
render(const struct sr_cinit_opts *o, int unit)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	if (fp == NULL)
		sr_fatal("open_memstream failed");
	if (unit)
		sr_cinit_write_unit(o, fp);
	else
		sr_cinit_write_userdata(o, fp);
	fclose(fp);
	return buf;
}

/* The line of text that starts with prefix (malloc'd, without its newline),
 * or NULL; *count gets how many lines start so. */
static char *
line_with(const char *text, const char *prefix, int *count)
{
	const char *p = text;
	char *found = NULL;

	*count = 0;
	while (*p != '\0') {
		size_t n = strcspn(p, "\n");

		if (strncmp(p, prefix, strlen(prefix)) == 0) {
			(*count)++;
			if (found == NULL)
				found = sr_strndup(p, n);
		}
		p += n + (p[n] == '\n');
	}
	return found;
}

static void
test_checks(void)
{
	static const struct {
		struct sr_cinit_opts o;
		const char *want;
	} cases[] = {
		{ { .source = TARBALL },
		  "no queue: give --queue URL (or set SPOTRUN_QUEUE): the agent claims its jobs "
		  "from it" },
		{ { .queue = "", .source = TARBALL },
		  "no queue: give --queue URL (or set SPOTRUN_QUEUE): the agent claims its jobs "
		  "from it" },
		{ { .queue = "s3://" , .source = TARBALL },
		  "--queue: open store s3://: bucket \"\": a bucket name has 3 to 63 characters" },
		{ { .queue = "ftp://host/q", .source = TARBALL },
		  "--queue: open store ftp://host/q: unsupported scheme \"ftp\" (supported: file://, s3://, "
		  "gs://, az://)" },
		{ { .queue = "s3://bkt/q\nx", .source = TARBALL },
		  "--queue has control character \\x0a at byte 11: " ASCII_ONLY "; percent-encode it "
		  "as %0A" },
		{ { .queue = "file:///srv/q" },
		  "--queue file:///srv/q is a directory of this machine: a VM cannot fetch "
		  "spotrun's binary from it; give --source (a git repository or a source "
		  "tarball) to build it there" },
		{ { .queue = "s3://bkt/q", .source = TARBALL, .url_expires = "1d" },
		  "--url-expires goes with the prebuilt binary (no --source): the VM builds a "
		  "--source itself" },
		{ { .queue = "s3://bkt/q", .url_expires = "soon" },
		  "--url-expires 'soon': not a duration (e.g. 7d, 12h)" },
		{ { .queue = "s3://bkt/q", .url_expires = "8d" },
		  "--url-expires 8d: must be 1m to 7d (S3's and GCS's longest presigned URL)" },
		{ { .queue = "s3://bkt/q", .url_expires = "59s" },
		  "--url-expires 59s: must be 1m to 7d (S3's and GCS's longest presigned URL)" },
		{ { .queue = "s3://bkt/q", .source = "ftp://example.org/spotrun.tar.gz" },
		  "--source 'ftp://example.org/spotrun.tar.gz': not an https:// or http:// URL (the "
		  "VM fetches it with curl or git)" },
		{ { .queue = "s3://bkt/q", .source = "git@example.org:spotrun.git" },
		  "--source 'git@example.org:spotrun.git': not an https:// or http:// URL (the VM "
		  "fetches it with curl or git)" },
		{ { .queue = "s3://bkt/q", .source = "https://example.org/spotrun" },
		  "--source 'https://example.org/spotrun': neither a git repository (a path ending "
		  "in .git) nor a source tarball (.tar.gz, .tgz, .tar.xz, .tar.bz2)" },
		{ { .queue = "s3://bkt/q", .source = "https://example.org/spot run.tar.gz" },
		  "--source 'https://example.org/spot run.tar.gz': a URL has no space or quote "
		  "(encode them as %20, %27)" },
		{ { .queue = "s3://bkt/q", .source = "https://example.org/it's.tar.gz" },
		  "--source 'https://example.org/it's.tar.gz': a URL has no space or quote (encode "
		  "them as %20, %27)" },
		{ { .queue = "s3://bkt/q", .source = TARBALL "#v1" },
		  "--source '" TARBALL "#v1': a #REF picks a branch or tag of a git repository; a "
		  "tarball has none" },
		{ { .queue = "s3://bkt/q", .source = "https://example.org/spotrun.git#-x" },
		  "--source 'https://example.org/spotrun.git#-x': '#-x' is no branch or tag "
		  "(letters, digits, '.', '_', '/', '-', not first a '-')" },
		{ { .queue = "s3://bkt/q", .source = "https://example.org/spotrun.git#" },
		  "--source 'https://example.org/spotrun.git#': '#' is no branch or tag (letters, "
		  "digits, '.', '_', '/', '-', not first a '-')" },
		{ { .queue = "s3://bkt/q", .source = "https://example.org/spotrun.git#a;b" },
		  "--source 'https://example.org/spotrun.git#a;b': '#a;b' is no branch or tag "
		  "(letters, digits, '.', '_', '/', '-', not first a '-')" },
		{ { .queue = "s3://bkt/q", .source = "https://example.org/spotrun.git", .sha256 = SHA },
		  "--sha256 goes with a source tarball, not a git repository (pin one with #TAG)" },
		{ { .queue = "s3://bkt/q", .sha256 = SHA, .unit_only = 1 },
		  "--sha256 goes with --source (a tarball's checksum)" },
		{ { .queue = "s3://bkt/q", .source = TARBALL, .sha256 = "abc" },
		  "--sha256 'abc': not a SHA-256 (64 hex digits, as sha256sum prints it)" },
		{ { .queue = "s3://bkt/q", .source = TARBALL, .sha256 = SHA "0" },
		  "--sha256 '" SHA "0': not a SHA-256 (64 hex digits, as sha256sum prints it)" },
		{ { .queue = "s3://bkt/q", .source = TARBALL, .idle_timeout = "5x" },
		  "--idle-timeout '5x': not a duration (e.g. 30m, 1h30m, 90s)" },
		{ { .queue = "s3://bkt/q", .source = TARBALL, .idle_timeout = "0" },
		  "--idle-timeout 0: must be more than 0 (without it the agent waits for work as "
		  "long as it runs)" },
		{ { .queue = "s3://bkt/q", .source = TARBALL, .idle_command = "poweroff" },
		  "--idle-command needs --idle-timeout: the agent runs it once it has been idle "
		  "that long" },
		{ { .queue = "s3://bkt/q", .source = TARBALL, .idle_timeout = "1m", .idle_command = "" },
		  "--idle-command is empty" },
		{ { .queue = "s3://bkt/q", .source = TARBALL, .idle_timeout = "1m",
		    .idle_command = "a\tb" },
		  "--idle-command has control character \\x09 at byte 2: " ASCII_ONLY "; remove it" },
		{ { .queue = "s3://bkt/q", .source = TARBALL, .labels = "a=b,c" },
		  "--labels 'a=b,c': 'c' is not NAME=VALUE (NAME of letters, digits, '_', '.', '-'; "
		  "VALUE of those, ':' and '/')" },
		{ { .queue = "s3://bkt/q", .source = TARBALL, .labels = "=b" },
		  "--labels '=b': '=b' is not NAME=VALUE (NAME of letters, digits, '_', '.', '-'; "
		  "VALUE of those, ':' and '/')" },
		{ { .queue = "s3://bkt/q", .source = TARBALL, .labels = "a=b," },
		  "--labels 'a=b,': '' is not NAME=VALUE (NAME of letters, digits, '_', '.', '-'; "
		  "VALUE of those, ':' and '/')" },
		{ { .queue = "s3://bkt/q", .source = TARBALL, .labels = "a=b c" },
		  "--labels 'a=b c': 'a=b c' is not NAME=VALUE (NAME of letters, digits, '_', '.', "
		  "'-'; VALUE of those, ':' and '/')" },
		{ { .queue = "s3://bkt/q", .source = TARBALL, .labels = "a=b=c" },
		  "--labels 'a=b=c': 'a=b=c' is not NAME=VALUE (NAME of letters, digits, '_', '.', "
		  "'-'; VALUE of those, ':' and '/')" },
	};
	static const struct sr_cinit_opts good[] = {
		{ .queue = "s3://bkt/q", .source = TARBALL },
		{ .queue = "s3://bkt/q?region=eu-west-1&attempts=3", .source = TARBALL, .sha256 = SHA,
		  .idle_timeout = "1h30m", .idle_command = "systemctl poweroff",
		  .labels = "team=ml,zone=eu-west-1a,url=a:/b" },
		{ .queue = "gs://bkt", .source = "https://example.org/x/spotrun.git#release/0.1" },
		{ .queue = "file:///srv/queue", .unit_only = 1 },
		{ .queue = "file:///srv/queue", .source = "http://127.0.0.1:8000/s.tar.xz",
		  .sha256 = SHA },
	};
	char err[SR_ERRMAX];
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(cases); i++) {
		char what[64];

		snprintf(what, sizeof what, "bad options %zu", i + 1);
		refused(&cases[i].o, cases[i].want, what);
	}
	for (i = 0; i < SR_ARRAY_LEN(good); i++) {
		err[0] = '\0';
		is_int(sr_cinit_check(&good[i], NULL, NULL, err), 0, "good options %zu pass%s%s",
		    i + 1, *err ? ": " : "", err);
	}
}

/* Each option that reaches the user-data or the unit, with each character
 * YAML or systemd could read as structure put in it: refused, naming the
 * option, the character, its byte and the fix. */
static void
test_hostile_text(void)
{
	static const struct {
		const char *bytes, *what, *url_fix, *fix;
	} chars[] = {
		{ "\xc2\x85", "U+0085", "%C2%85", "write the value in ASCII" },
		{ "\xe2\x80\xa8", "U+2028", "%E2%80%A8", "write the value in ASCII" },
		{ "\xe2\x80\xa9", "U+2029", "%E2%80%A9", "write the value in ASCII" },
		{ "\xc2\x9b", "U+009B", "%C2%9B", "write the value in ASCII" },
		{ "\x9b", "\\x9b (not UTF-8)", "%9B", "write the value in ASCII" },
		{ "\x1b", "control character \\x1b", "%1B", "remove it" },
		{ "\x7f", "control character \\x7f", "%7F", "remove it" },
	};
	/* The option, the text before the character and after it. */
	static const struct {
		const char *opt, *before, *after;
		int url;
	} opts[] = {
		{ "--queue", "s3://bkt/q", "x", 1 },
		{ "--source", "https://example.org/", "s.tar.gz", 1 },
		{ "--sha256", "", SHA, 0 },
		{ "--idle-timeout", "30m", "", 0 },
		{ "--idle-command", "systemctl poweroff", "bootcmd: [[sh, -c, 'curl x | sh']]", 0 },
		{ "--labels", "team=ml", ",runcmd=x", 0 },
	};
	size_t i, j;

	for (i = 0; i < SR_ARRAY_LEN(opts); i++) {
		for (j = 0; j < SR_ARRAY_LEN(chars); j++) {
			struct sr_cinit_opts o = { .queue = "s3://bkt/q", .source = TARBALL,
			    .idle_timeout = "1m" };
			char *v = sr_asprintf("%s%s%s", opts[i].before, chars[j].bytes, opts[i].after);
			char *want = sr_asprintf("%s has %s at byte %zu: " ASCII_ONLY "; %s%s",
			    opts[i].opt, chars[j].what, strlen(opts[i].before) + 1,
			    opts[i].url ? "percent-encode it as " : "",
			    opts[i].url ? chars[j].url_fix : chars[j].fix);
			char what[96];
			const char **field[] = { &o.queue, &o.source, &o.sha256, &o.idle_timeout,
			    &o.idle_command, &o.labels };

			*field[i] = v;
			snprintf(what, sizeof what, "%s with %s", opts[i].opt, chars[j].what);
			refused(&o, want, what);
			free(want);
			free(v);
		}
	}
	/* The messages in full, once each kind. */
	{
		struct sr_cinit_opts o = { .queue = "s3://bkt/q", .source = TARBALL,
		    .idle_timeout = "1m", .idle_command = "poweroff\xe2\x80\xa8" "bootcmd: [reboot]" };

		refused(&o, "--idle-command has U+2028 at byte 9: the user-data and its unit take "
		    "printable ASCII only (YAML ends a line at U+0085, U+2028 and U+2029, and reads "
		    "control characters as structure); write the value in ASCII",
		    "U+2028 ending the idle command's line");
		o.idle_command = "poweroff";
		o.queue = "s3://bkt/q\xc2\x85" "x";
		refused(&o, "--queue has U+0085 at byte 11: the user-data and its unit take "
		    "printable ASCII only (YAML ends a line at U+0085, U+2028 and U+2029, and reads "
		    "control characters as structure); percent-encode it as %C2%85",
		    "U+0085 in the queue URL's prefix");
		o.queue = "s3://bkt/q";
		o.labels = "a=\x1b]0;x\a";
		refused(&o, "--labels has control character \\x1b at byte 3: the user-data and its "
		    "unit take printable ASCII only (YAML ends a line at U+0085, U+2028 and U+2029, "
		    "and reads control characters as structure); remove it", "ESC in the labels");
	}
	/* Plain ASCII, every printable character of it, still passes. */
	{
		char all[0x7f - 0x20 + 1], err[SR_ERRMAX] = "";
		struct sr_cinit_opts o = { .queue = "s3://bkt/q%20x?region=eu-west-1&attempts=3",
		    .source = TARBALL, .sha256 = SHA, .idle_timeout = "1h30m", .idle_command = all,
		    .labels = "team=ml,zone=eu-west-1a" };
		char *ud, *l;
		int n, c;

		for (c = 0x20; c < 0x7f; c++)
			all[c - 0x20] = (char)c;
		all[0x7f - 0x20] = '\0';
		is_int(sr_cinit_check(&o, NULL, NULL, err), 0, "every printable ASCII character "
		    "in the idle command passes %s", err);
		ud = render(&o, 0);
		l = line_with(ud, "      ExecStart=", &n);
		is_int(n, 1, "... on the one ExecStart line of the unit in the user-data");
		free(l);
		free(ud);
	}
}

static void
test_credentials(void)
{
	static const char secret[] = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
	static const char token[] = "IQoJb3JpZ2luX2VjEXAMPLETOKENvalue1234567890";
	static const char why[] = "credentials come from the instance's role on the VM, never "
	    "from user-data, which anyone on the VM and the cloud's console can read";
	struct sr_cinit_opts o = { .queue = "s3://bkt/q", .source = TARBALL, .idle_timeout = "1m" };
	char want[SR_ERRMAX], err[SR_ERRMAX];

	setenv("AWS_SECRET_ACCESS_KEY", secret, 1);
	setenv("AWS_SESSION_TOKEN", token, 1);
	setenv("GS_SECRET_ACCESS_KEY", "short", 1);	/* too short to look for */

	o.idle_command = "env AWS_SECRET_ACCESS_KEY=abc poweroff";
	snprintf(want, sizeof want, "--idle-command sets AWS_SECRET_ACCESS_KEY: %s", why);
	refused(&o, want, "a key variable set in the idle command");
	o.idle_command = "env GS_ACCESS_KEY_ID=GOOG poweroff";
	snprintf(want, sizeof want, "--idle-command sets GS_ACCESS_KEY_ID: %s", why);
	refused(&o, want, "a GCS key variable set in the idle command");
	o.idle_command = "env AZURE_STORAGE_SAS_TOKEN=sv=x poweroff";
	snprintf(want, sizeof want, "--idle-command sets AZURE_STORAGE_SAS_TOKEN: %s", why);
	refused(&o, want, "an Azure SAS variable set in the idle command");

	o.idle_command = sr_asprintf("curl -H 'x: %s' http://x", secret);
	snprintf(want, sizeof want, "--idle-command holds the value of $AWS_SECRET_ACCESS_KEY: %s",
	    why);
	refused(&o, want, "the environment's secret key in the idle command");
	sr_cinit_check(&o, NULL, NULL, err);
	ok(strstr(err, secret) == NULL, "the message does not show the secret");
	free((char *)o.idle_command);
	o.idle_command = "poweroff";

	o.labels = sr_asprintf("token=%s", token);
	snprintf(want, sizeof want, "--labels holds the value of $AWS_SESSION_TOKEN: %s", why);
	refused(&o, want, "the environment's session token in the labels");
	free((char *)o.labels);
	o.labels = "a=short";
	err[0] = '\0';
	is_int(sr_cinit_check(&o, NULL, NULL, err), 0,
	    "a value of 5 characters in the environment is not looked for %s", err);
	o.labels = NULL;

	o.source = "https://example.org/spotrun.tar.gz?X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F"
	    "20260101";
	snprintf(want, sizeof want, "--source holds what looks like an AWS access key id (AKIA..., "
	    "ASIA...): %s", why);
	refused(&o, want, "an AWS access key id in a presigned source URL");
	o.source = TARBALL;
	o.queue = "s3://bkt/q?profile=ASIAIOSFODNN7EXAMPLE";
	snprintf(want, sizeof want, "--queue holds what looks like an AWS access key id (AKIA..., "
	    "ASIA...): %s", why);
	refused(&o, want, "a temporary AWS access key id in the queue URL");
	o.queue = "s3://bkt/q?profile=XAKIAIOSFODNN7EXAMPLE";
	is_int(sr_cinit_check(&o, NULL, NULL, err), 0, "AKIA inside a longer word is no key id");
	o.queue = "s3://bkt/q";
	o.idle_command = "echo GOOG1EABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ABCDEFGHIJKLMNOPQRS";
	snprintf(want, sizeof want, "--idle-command holds what looks like a GCS HMAC access id "
	    "(GOOG...): %s", why);
	refused(&o, want, "a GCS HMAC access id in the idle command");
	o.idle_command = "poweroff";

	o.source = "https://deploy:hunter2@git.example.org/spotrun.git";
	snprintf(want, sizeof want, "--source has a user or password in the URL "
	    "(USER:PASSWORD@HOST): %s", why);
	refused(&o, want, "a password in the source URL");
	sr_cinit_check(&o, NULL, NULL, err);
	ok(strstr(err, "hunter2") == NULL, "the message does not show the password");
	o.source = "https://git.example.org/a@b/spotrun.git";
	is_int(sr_cinit_check(&o, NULL, NULL, err), 0, "an @ in the path is no user");

	/* Before any other check: a bad value that also holds a key is
	 * refused for the key, so the value is never echoed. */
	o.source = TARBALL;
	o.idle_timeout = sr_asprintf("%s", secret);
	snprintf(want, sizeof want, "--idle-timeout holds the value of $AWS_SECRET_ACCESS_KEY: %s",
	    why);
	refused(&o, want, "a key where a duration goes: refused as a key, not echoed");
	free((char *)o.idle_timeout);

	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("AWS_SESSION_TOKEN");
	unsetenv("GS_SECRET_ACCESS_KEY");
}

static void
test_warnings(void)
{
	struct sr_cinit_opts o = { .queue = "s3://bkt/q", .source = "http://127.0.0.1:8000/s.tar.gz" };
	struct warnings w = { 0 };
	char err[SR_ERRMAX];

	is_int(sr_cinit_check(&o, note_warning, &w, err), 0, "plain http without --sha256 passes");
	is_int(w.n, 1, "with one warning");
	is_str(w.last, "--source is plain http: the VM builds and runs as root what it fetches "
	    "from it; give --sha256 (a tarball) or use https", "which says why");
	w.n = 0;
	o.sha256 = SHA;
	sr_cinit_check(&o, note_warning, &w, err);
	is_int(w.n, 0, "plain http with --sha256: no warning");
	o.sha256 = NULL;
	o.source = TARBALL;
	o.queue = "file:///srv/queue";
	sr_cinit_check(&o, note_warning, &w, err);
	is_int(w.n, 1, "a file:// queue warns");
	is_str(w.last, "--queue file:///srv/queue is a directory on each VM: agents share it only "
	    "where it is a shared file system (NFS) mounted at that path", "that it is the VM's");
	w.n = 0;
	o.queue = "gs://bucket/q";
	sr_cinit_check(&o, note_warning, &w, err);
	is_int(w.n, 1, "a gs:// queue warns");
	is_str(w.last, "--queue gs://bucket/q: spotrun reaches gs:// with HMAC keys "
	    "(GS_ACCESS_KEY_ID, ~/.boto), which a Compute Engine service account does not give; "
	    "the VM needs them from elsewhere (spotrun-job(5), store)", "that it needs HMAC keys");
	w.n = 0;
	o.queue = "s3://bkt/q";
	sr_cinit_check(&o, note_warning, &w, err);
	is_int(w.n, 0, "s3:// over https: no warning");
}

static void
test_unit(void)
{
	struct sr_cinit_opts o = {
		.queue = "s3://bkt/q%20x?region=eu-west-1&attempts=3",
		.idle_timeout = "30m",
		.idle_command = "sh -c \"echo $HOME\\\\n 100%\" && poweroff",
		.labels = "team=ml",
		.unit_only = 1,
	};
	char *unit, *exec, *tmpl, *p, *q, path[4096];
	int n;
	size_t len;
	char err[SR_ERRMAX];

	is_int(sr_cinit_check(&o, NULL, NULL, err), 0, "options with quotes, $, %% and \\ pass");
	unit = render(&o, 1);
	exec = line_with(unit, "ExecStart=", &n);
	is_int(n, 1, "the unit has one ExecStart");
	is_str(exec, "ExecStart=/usr/local/bin/spotrun agent --queue \"s3://bkt/q%%20x?region="
	    "eu-west-1&attempts=3\" --idle-timeout \"30m\" --idle-command \"sh -c \\\"echo "
	    "$$HOME\\\\\\\\n 100%%\\\" && poweroff\" --labels \"team=ml\"",
	    "each option quoted for systemd: \\ and \" escaped, %% and $ doubled");
	free(exec);
	ok(strchr(unit, '@') == NULL, "no placeholder is left");

	/* The unit is the template but for its ExecStart line. */
	tmpl = sr_strdup(sr_cinit_unit_template);
	p = strstr(tmpl, "ExecStart=@bindir@/spotrun agent@agent_args@\n");
	ok(p != NULL, "the template's ExecStart has both placeholders");
	q = strstr(unit, "ExecStart=");
	if (p != NULL && q != NULL) {
		ok(strncmp(tmpl, unit, (size_t)(p - tmpl)) == 0 && (size_t)(q - unit) ==
		    (size_t)(p - tmpl), "the unit up to ExecStart is the template's");
		ok(strcmp(strchr(p, '\n'), strchr(q, '\n')) == 0,
		    "the unit after ExecStart is the template's");
	}
	free(tmpl);
	free(unit);

	o.idle_timeout = NULL;
	o.idle_command = NULL;
	o.labels = NULL;
	o.queue = "s3://bkt/q";
	unit = render(&o, 1);
	exec = line_with(unit, "ExecStart=", &n);
	is_str(exec, "ExecStart=/usr/local/bin/spotrun agent --queue \"s3://bkt/q\"",
	    "the queue alone");
	free(exec);
	free(unit);

	/* The built-in template is the source tree's file. */
	snprintf(path, sizeof path, "%s/dist/spotrun-agent.service.in", SR_TOP_SRCDIR);
	p = NULL;
	if (sr_read_file(path, 1 << 20, &p, &len, err) == -1)
		tap_diag("%s", err);
	ok(p != NULL && strlen(sr_cinit_unit_template) == len &&
	    memcmp(p, sr_cinit_unit_template, len) == 0,
	    "sr_cinit_unit_template is dist/spotrun-agent.service.in");
	free(p);
}

static void
test_userdata(void)
{
	struct sr_cinit_opts o = { .queue = "s3://bkt/q", .source = "https://example.org/spotrun.git#v0.1.0" };
	char *ud, *l;
	int n;

	ud = render(&o, 0);
	ok(strncmp(ud, "#cloud-config\n", 14) == 0, "the user-data starts with #cloud-config");
	ok(strstr(ud, "packages:\n  - ca-certificates\n  - git\nwrite_files:\n") != NULL,
	    "a git source: the packages are ca-certificates and git");
	l = line_with(ud, "      git clone", &n);
	is_str(l, "      git clone -q --depth 1 --branch 'v0.1.0' \"$src\" src",
	    "#REF: a shallow clone of that branch or tag");
	free(l);
	l = line_with(ud, "      src=", &n);
	is_str(l, "      src='https://example.org/spotrun.git'", "the URL without its #REF");
	free(l);
	l = line_with(ud, "      curl", &n);
	ok(l == NULL && strstr(ud, "sha256sum") == NULL, "no curl and no checksum for git");
	free(l);
	free(ud);

	o.source = "https://example.org/spotrun.git";
	ud = render(&o, 0);
	l = line_with(ud, "      git clone", &n);
	is_str(l, "      git clone -q --depth 1 \"$src\" src", "no #REF: the default branch");
	free(l);
	free(ud);

	o.source = "https://example.org/spotrun-0.1.0.tar.xz?dl=1";
	o.sha256 = SHA;
	ud = render(&o, 0);
	ok(strstr(ud, "packages:\n  - ca-certificates\n  - curl\n  - xz-utils\nwrite_files:\n")
	    != NULL, "a .tar.xz: curl and xz-utils");
	l = line_with(ud, "      echo", &n);
	is_str(l, "      echo '" SHA "  source.tar' | sha256sum -c -",
	    "--sha256: checked before it is unpacked");
	free(l);
	l = line_with(ud, "      src=", &n);
	is_str(l, "      src='https://example.org/spotrun-0.1.0.tar.xz?dl=1'", "the query kept");
	free(l);
	free(ud);

	o.source = "https://example.org/spotrun-0.1.0.tar.bz2";
	o.sha256 = NULL;
	ud = render(&o, 0);
	ok(strstr(ud, "  - curl\n  - bzip2\nwrite_files:\n") != NULL, "a .tar.bz2: bzip2");
	free(ud);
}

/* The prebuilt binary's user-data, byte for byte: the runtime libraries
 * and no compiler, the URL single-quoted for sh (a quote in it too), the
 * checksum checked before anything is installed. */
static void
test_prebuilt(void)
{
	struct sr_cinit_opts o = { .queue = "s3://spotrun-fleet/queue?region=eu-west-1",
		.idle_timeout = "30m",
		.bin_url = "https://spotrun-fleet.s3.eu-west-1.amazonaws.com/queue/bin/"
		    "spotrun-0.1.0-0123456789abcdef?X-Amz-Algorithm=AWS4-HMAC-SHA256&"
		    "X-Amz-Signature=ab'cd",
		.bin_sha256 = "5f2b1a0c9e8d7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a" };
	char err[SR_ERRMAX], *want = NULL, *ud;
	size_t len;

	is_int(sr_cinit_check(&o, NULL, NULL, err), 0, "no --source: the prebuilt binary");
	if (sr_read_file(SR_TOP_SRCDIR "/tests/cloud-init/prebuilt.yaml", 1 << 20, &want, &len,
	    err) == -1)
		sr_fatal("%s", err);
	ud = render(&o, 0);
	is_str(ud, want, "the prebuilt user-data is tests/cloud-init/prebuilt.yaml");
	ok(strstr(ud, "\n      make") == NULL && strstr(ud, "build-essential") == NULL &&
	    strstr(ud, "configure") == NULL && strstr(ud, "install-deps") == NULL,
	    "no build step");
	free(ud);
	free(want);
}

int
main(void)
{
	test_checks();
	test_hostile_text();
	test_credentials();
	test_warnings();
	test_unit();
	test_userdata();
	test_prebuilt();
	return tap_done();
}
