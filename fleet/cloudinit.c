/*
 * cloudinit.c: the checks and the text of `spotrun cloud-init` (cloudinit.h):
 * the agent's command line quoted for systemd, the unit from its built-in
 * template, and the #cloud-config user-data with its install script quoted
 * for sh, each piece written once, here.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudinit.h"
#include "store.h"
#include "termsafe.h"
#include "units.h"
#include "util.h"

/* The variables that hold keys (the stores' credentials read them): never
 * written into user-data, and a value of theirs is refused in any option. */
static const char *const key_vars[] = {
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
	"AWS_SECURITY_TOKEN", "GS_ACCESS_KEY_ID", "GS_SECRET_ACCESS_KEY",
	"AZURE_STORAGE_KEY", "AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_CONNECTION_STRING",
};
/* A value of the environment this short is no key (real ones are 20 or more
 * characters): shorter ones are not looked for, or every option would match. */
#define KEY_VALUE_MIN 16

#define NO_KEYS_WHY "credentials come from the instance's role on the VM, never from " \
	"user-data, which anyone on the VM and the cloud's console can read"

enum source_kind { SOURCE_TARBALL, SOURCE_GIT };

/* --source taken apart. */
struct source {
	enum source_kind kind;
	char *url;		/* without #REF */
	char *ref;		/* git: the branch or tag, or NULL */
	const char *tar_package;	/* tarball: the package its compression needs, or NULL */
};

static int
is_upper_alnum(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Whether s holds prefix followed by at least min (and, with max > 0, at
 * most max) upper-case letters or digits, as a word of its own. */
static int
has_key_id(const char *s, const char *prefix, size_t min, size_t max)
{
	size_t plen = strlen(prefix);
	const char *p;

	for (p = strstr(s, prefix); p != NULL; p = strstr(p + 1, prefix)) {
		size_t n = 0;

		if (p > s && is_upper_alnum((unsigned char)p[-1]))
			continue;
		while (is_upper_alnum((unsigned char)p[plen + n]))
			n++;
		if (n >= min && (max == 0 || n <= max))
			return 1;
	}
	return 0;
}

/* Whether the URL u has user information (user[:password]@) before its host. */
static int
url_has_userinfo(const char *u)
{
	const char *auth = strstr(u, "://");
	size_t n;

	if (auth == NULL)
		return 0;
	auth += 3;
	n = strcspn(auth, "/?#");
	return memchr(auth, '@', n) != NULL;
}

/* Refuse a credential in the value v of option opt. */
static int
check_no_key(const char *opt, const char *v, char *err)
{
	size_t i;

	if (v == NULL)
		return 0;
	for (i = 0; i < SR_ARRAY_LEN(key_vars); i++) {
		const char *env = getenv(key_vars[i]);
		const char *p;
		size_t n = strlen(key_vars[i]);

		for (p = strstr(v, key_vars[i]); p != NULL; p = strstr(p + 1, key_vars[i])) {
			if (p[n] == '=')
				return sr_err(err, "%s sets %s: %s", opt, key_vars[i], NO_KEYS_WHY);
		}
		if (env != NULL && strlen(env) >= KEY_VALUE_MIN && strstr(v, env) != NULL)
			return sr_err(err, "%s holds the value of $%s: %s", opt, key_vars[i],
			    NO_KEYS_WHY);
	}
	/* AWS access key ids: AKIA (a user's) or ASIA (temporary) and 16 more. */
	if (has_key_id(v, "AKIA", 16, 16) || has_key_id(v, "ASIA", 16, 16))
		return sr_err(err, "%s holds what looks like an AWS access key id (AKIA..., "
		    "ASIA...): %s", opt, NO_KEYS_WHY);
	/* GCS HMAC access ids: GOOG and tens more (61 characters in all). */
	if (has_key_id(v, "GOOG", 20, 0))
		return sr_err(err, "%s holds what looks like a GCS HMAC access id (GOOG...): %s",
		    opt, NO_KEYS_WHY);
	if (url_has_userinfo(v))
		return sr_err(err, "%s has a user or password in the URL (USER:PASSWORD@HOST): %s",
		    opt, NO_KEYS_WHY);
	return 0;
}

/*
 * A value that goes into the user-data or the unit: printable ASCII only.
 * YAML ends a line, and so the block scalar the unit and the script are in,
 * at U+0085, U+2028 and U+2029 as at a newline; the text after one would
 * be top-level cloud-config (a bootcmd run as root); control characters
 * are structure to YAML, systemd and sh alike. So these are refused, never
 * quoted: nothing else needs them. A URL (url 1) can percent-encode them.
 */
static int
check_text(const char *opt, const char *v, int url, char *err)
{
	size_t n = strlen(v), i, k, j;
	char what[32], fix[64];
	uint32_t cp;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];

		if (c >= 0x20 && c < 0x7f)
			continue;
		k = sr_utf8_char(v + i, n - i, &cp);
		if (k > 1)
			snprintf(what, sizeof what, "U+%04X", (unsigned)cp);
		else
			snprintf(what, sizeof what, "%s\\x%02x%s", c < 0x80 ? "control character " :
			    "", c, c < 0x80 ? "" : " (not UTF-8)");
		k = k > 0 ? k : 1;
		if (url) {
			strlcpy(fix, "percent-encode it as ", sizeof fix);
			for (j = 0; j < k; j++)
				snprintf(fix + strlen(fix), sizeof fix - strlen(fix), "%%%02X",
				    (unsigned char)v[i + j]);
		} else {
			strlcpy(fix, c < 0x80 ? "remove it" : "write the value in ASCII", sizeof fix);
		}
		return sr_err(err, "%s has %s at byte %zu: the user-data and its unit take "
		    "printable ASCII only (YAML ends a line at U+0085, U+2028 and U+2029, and "
		    "reads control characters as structure); %s", opt, what, i + 1, fix);
	}
	return 0;
}

/* A value that goes on one line of a file: not empty, printable ASCII. */
static int
check_line(const char *opt, const char *v, int url, char *err)
{
	if (*v == '\0')
		return sr_err(err, "%s is empty", opt);
	return check_text(opt, v, url, err);
}

static int
ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && strncmp(s + len - n, suffix, n) == 0;
}

static void
source_free(struct source *s)
{
	free(s->url);
	free(s->ref);
}

/* Take --source apart into s: 0, or -1 with err. */
static int
source_parse(const char *v, struct source *s, char *err)
{
	static const struct { const char *suffix, *package; } tars[] = {
		{ ".tar.gz", NULL }, { ".tgz", NULL }, { ".tar.xz", "xz-utils" },
		{ ".tar.bz2", "bzip2" },
	};
	const char *hash = strchr(v, '#');
	size_t len, path_len, i;

	memset(s, 0, sizeof *s);
	if (check_line("--source", v, 1, err) == -1)
		return -1;
	if (strncmp(v, "https://", 8) != 0 && strncmp(v, "http://", 7) != 0)
		return sr_err(err, "--source '%s': not an https:// or http:// URL (the VM fetches "
		    "it with curl or git)", v);
	if (strchr(v, ' ') != NULL || strchr(v, '\'') != NULL)
		return sr_err(err, "--source '%s': a URL has no space or quote (encode them as "
		    "%%20, %%27)", v);
	len = hash != NULL ? (size_t)(hash - v) : strlen(v);
	path_len = strcspn(v, "?#");
	if (ends_with(v, path_len, ".git") || ends_with(v, path_len, ".git/")) {
		s->kind = SOURCE_GIT;
		if (hash != NULL) {
			const char *r = hash + 1;

			if (*r == '\0' || *r == '-' || strspn(r, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "abcdefghijklmnopqrstuvwxyz0123456789._/-") != strlen(r))
				return sr_err(err, "--source '%s': '#%s' is no branch or tag (letters, "
				    "digits, '.', '_', '/', '-', not first a '-')", v, r);
			s->ref = sr_strdup(r);
		}
		s->url = sr_strndup(v, len);
		return 0;
	}
	for (i = 0; i < SR_ARRAY_LEN(tars); i++) {
		if (!ends_with(v, path_len, tars[i].suffix))
			continue;
		if (hash != NULL)
			return sr_err(err, "--source '%s': a #REF picks a branch or tag of a git "
			    "repository; a tarball has none", v);
		s->kind = SOURCE_TARBALL;
		s->tar_package = tars[i].package;
		s->url = sr_strndup(v, len);
		return 0;
	}
	return sr_err(err, "--source '%s': neither a git repository (a path ending in .git) "
	    "nor a source tarball (.tar.gz, .tgz, .tar.xz, .tar.bz2)", v);
}

/* NAME=VALUE[,NAME=VALUE...]: names of letters, digits and _ . -, values
 * those and : / too. */
static int
check_labels(const char *v, char *err)
{
	static const char name_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_.-";
	const char *p = v;

	if (check_line("--labels", v, 0, err) == -1)
		return -1;
	for (;;) {
		size_t item = strcspn(p, ","), name = strspn(p, name_chars), value;

		value = name < item && p[name] == '=' ?
		    strspn(p + name + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			"0123456789_.-:/") : 0;
		if (name == 0 || name >= item || p[name] != '=' || name + 1 + value != item)
			return sr_err(err, "--labels '%s': '%.*s' is not NAME=VALUE (NAME of letters, "
			    "digits, '_', '.', '-'; VALUE of those, ':' and '/')", v, (int)item, p);
		if (p[item] == '\0')
			return 0;
		p += item + 1;
	}
}

int
sr_cinit_check(const struct sr_cinit_opts *o, void (*warn)(void *arg, const char *msg),
    void *arg, char *err)
{
	/* Every value that reaches the user-data; the URLs first. */
	const char *const values[][2] = {
		{ "--queue", o->queue }, { "--source", o->source }, { "--sha256", o->sha256 },
		{ "--idle-timeout", o->idle_timeout }, { "--idle-command", o->idle_command },
		{ "--labels", o->labels }, { "--url-expires", o->url_expires },
	};
	const size_t nurls = 2;
	struct source src;
	char msg[SR_ERRMAX];
	double secs;
	size_t i;

	/* Before anything that could show a value in a message. */
	for (i = 0; i < SR_ARRAY_LEN(values); i++) {
		if (check_no_key(values[i][0], values[i][1], err) == -1)
			return -1;
	}
	/* Before anything that could echo a value to the terminal. */
	for (i = 0; i < SR_ARRAY_LEN(values); i++) {
		if (values[i][1] != NULL && check_text(values[i][0], values[i][1], i < nurls,
		    err) == -1)
			return -1;
	}
	if (o->queue == NULL || *o->queue == '\0')
		return sr_err(err, "no queue: give --queue URL (or set SPOTRUN_QUEUE): the agent "
		    "claims its jobs from it");
	if (check_line("--queue", o->queue, 1, err) == -1)
		return -1;
	if (sr_store_url_check(o->queue, msg) == -1)
		return sr_err(err, "--queue: %s", msg);
	if (o->source == NULL && !o->unit_only && sr_store_url_local(o->queue))
		return sr_err(err, "--queue %s is a directory of this machine: a VM cannot fetch "
		    "spotrun's binary from it; give --source (a git repository or a source "
		    "tarball) to build it there", o->queue);
	if (o->url_expires != NULL) {
		if (o->source != NULL)
			return sr_err(err, "--url-expires goes with the prebuilt binary (no --source): "
			    "the VM builds a --source itself");
		int r = sr_parse_duration(o->url_expires, &secs);

		if (r == -1)
			return sr_err(err, "--url-expires '%s': not a duration (e.g. 7d, 12h)",
			    o->url_expires);
		if (r == -2 || secs < 60 || secs > SR_CINIT_URL_EXPIRES)
			return sr_err(err, "--url-expires %s: must be 1m to 7d (S3's and GCS's "
			    "longest presigned URL)", o->url_expires);
	}
	if (o->source != NULL) {
		if (source_parse(o->source, &src, err) == -1) {
			source_free(&src);
			return -1;
		}
		if (o->sha256 != NULL && src.kind == SOURCE_GIT) {
			source_free(&src);
			return sr_err(err, "--sha256 goes with a source tarball, not a git repository "
			    "(pin one with #TAG)");
		}
		if (warn != NULL && strncmp(o->source, "http://", 7) == 0 && o->sha256 == NULL) {
			snprintf(msg, sizeof msg, "--source is plain http: the VM builds and runs as "
			    "root what it fetches from it; give --sha256 (a tarball) or use https");
			warn(arg, msg);
		}
		source_free(&src);
	} else if (o->sha256 != NULL) {
		return sr_err(err, "--sha256 goes with --source (a tarball's checksum)");
	}
	if (o->sha256 != NULL && (strlen(o->sha256) != 64 ||
	    strspn(o->sha256, "0123456789abcdefABCDEF") != 64))
		return sr_err(err, "--sha256 '%s': not a SHA-256 (64 hex digits, as sha256sum "
		    "prints it)", o->sha256);
	if (o->idle_timeout != NULL) {
		if (sr_parse_duration(o->idle_timeout, &secs) == -1)
			return sr_err(err, "--idle-timeout '%s': not a duration (e.g. 30m, 1h30m, "
			    "90s)", o->idle_timeout);
		if (secs <= 0)
			return sr_err(err, "--idle-timeout %s: must be more than 0 (without it the "
			    "agent waits for work as long as it runs)", o->idle_timeout);
	}
	if (o->idle_command != NULL) {
		if (check_line("--idle-command", o->idle_command, 0, err) == -1)
			return -1;
		if (o->idle_timeout == NULL)
			return sr_err(err, "--idle-command needs --idle-timeout: the agent runs it "
			    "once it has been idle that long");
	}
	if (o->labels != NULL && check_labels(o->labels, err) == -1)
		return -1;
	if (warn != NULL && sr_store_url_local(o->queue)) {
		snprintf(msg, sizeof msg, "--queue %s is a directory on each VM: agents share it "
		    "only where it is a shared file system (NFS) mounted at that path", o->queue);
		warn(arg, msg);
	}
	if (warn != NULL && sr_store_url_vm_note(o->queue) != NULL) {
		snprintf(msg, sizeof msg, "--queue %s: %s; the VM needs them from elsewhere "
		    "(spotrun-job(5), store)", o->queue, sr_store_url_vm_note(o->queue));
		warn(arg, msg);
	}
	return 0;
}

/* One argument of ExecStart=, in double quotes: systemd reads \ and " as
 * escapes there, expands %-specifiers and $VARIABLES, so each is doubled or
 * escaped to stay literal. */
static void
put_systemd_arg(FILE *fp, const char *v)
{
	fputs(" \"", fp);
	for (; *v != '\0'; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', fp);
		else if (*v == '%' || *v == '$')
			fputc(*v, fp);
		fputc(*v, fp);
	}
	fputc('"', fp);
}

/* The options after `spotrun agent`, each with a leading space. */
static void
put_agent_args(FILE *fp, const struct sr_cinit_opts *o)
{
	const char *const opts[][2] = {
		{ "--queue", o->queue }, { "--idle-timeout", o->idle_timeout },
		{ "--idle-command", o->idle_command }, { "--labels", o->labels },
	};
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(opts); i++) {
		if (opts[i][1] == NULL)
			continue;
		fprintf(fp, " %s", opts[i][0]);
		put_systemd_arg(fp, opts[i][1]);
	}
}

/* The template with its two placeholders filled, each line but an empty
 * one after indent. */
static void
put_unit(FILE *fp, const struct sr_cinit_opts *o, const char *indent)
{
	const char *p = sr_cinit_unit_template;
	int line_start = 1;

	while (*p != '\0') {
		size_t n = strcspn(p, "\n@");

		if (line_start && *p != '\n')
			fputs(indent, fp);
		fwrite(p, 1, n, fp);
		p += n;
		line_start = *p == '\n';
		if (strncmp(p, "@bindir@", 8) == 0) {
			fputs(SR_CINIT_PREFIX "/bin", fp);
			p += 8;
		} else if (strncmp(p, "@agent_args@", 12) == 0) {
			put_agent_args(fp, o);
			p += 12;
		} else if (*p != '\0') {
			fputc(*p++, fp);
		}
	}
}

void
sr_cinit_write_unit(const struct sr_cinit_opts *o, FILE *fp)
{
	put_unit(fp, o, "");
}

/* s in single quotes for sh. */
static void
put_sh_quoted(FILE *fp, const char *s)
{
	fputc('\'', fp);
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			fputs("'\\''", fp);
		else
			fputc(*s, fp);
	}
	fputc('\'', fp);
}

/* The install scripts' end: the unit started. */
static void
put_script_end(FILE *fp, const char *in)
{
	fprintf(fp, "%scd /\n"
	    "%srm -rf \"$dir\"\n"
	    "%ssystemctl daemon-reload\n"
	    "%ssystemctl enable spotrun-agent.service\n"
	    "%ssystemctl start spotrun-agent.service\n", in, in, in, in, in);
}

/* The install script, each line indented for the YAML block it is in. */
static void
put_install_script(FILE *fp, const struct source *src, const char *sha256)
{
	const char *in = "      ";

	fprintf(fp, "%s#!/bin/sh\n"
	    "%s# spotrun-install: build spotrun from its source, install it and start\n"
	    "%s# spotrun-agent.service (written by spotrun cloud-init, run once by\n"
	    "%s# cloud-init's runcmd; its output is in /var/log/cloud-init-output.log).\n"
	    "%sset -eu\n", in, in, in, in, in);
	fprintf(fp, "%ssrc=", in);
	put_sh_quoted(fp, src->url);
	fprintf(fp, "\n%sdir=/var/tmp/spotrun-source\n"
	    "%srm -rf \"$dir\"\n"
	    "%smkdir -p \"$dir\"\n"
	    "%scd \"$dir\"\n", in, in, in, in);
	if (src->kind == SOURCE_GIT) {
		fprintf(fp, "%sgit clone -q --depth 1 ", in);
		if (src->ref != NULL) {
			fputs("--branch ", fp);
			put_sh_quoted(fp, src->ref);
			fputc(' ', fp);
		}
		fputs("\"$src\" src\n", fp);
	} else {
		fprintf(fp, "%scurl -fsSL --retry 5 --retry-connrefused -o source.tar \"$src\"\n", in);
		if (sha256 != NULL)
			fprintf(fp, "%secho '%s  source.tar' | sha256sum -c -\n", in, sha256);
		fprintf(fp, "%smkdir src\n"
		    "%star -xf source.tar -C src --strip-components=1\n", in, in);
	}
	fprintf(fp, "%scd src\n"
	    "%s./build-aux/install-deps --runtime\n"
	    "%s[ -x configure ] || autoreconf -fi\n"
	    "%s# The unit is the one this user-data wrote, with the agent's options.\n"
	    "%s./configure -q --prefix=" SR_CINIT_PREFIX " --with-systemdsystemunitdir=no\n"
	    "%smake -j\"$(nproc)\"\n"
	    "%smake install\n",
	    in, in, in, in, in, in, in);
	put_script_end(fp, in);
}

/* The prebuilt install script: fetch, check, install, start. */
static void
put_bin_script(FILE *fp, const char *url, const char *sha256)
{
	const char *in = "      ";

	fprintf(fp, "%s#!/bin/sh\n"
	    "%s# spotrun-install: fetch the prebuilt spotrun, check its SHA-256, install\n"
	    "%s# it and start spotrun-agent.service (written by spotrun cloud-init, run\n"
	    "%s# once by cloud-init's runcmd; its output is in\n"
	    "%s# /var/log/cloud-init-output.log). The URL is presigned: it expires.\n"
	    "%sset -eu\n", in, in, in, in, in, in);
	fprintf(fp, "%surl=", in);
	put_sh_quoted(fp, url);
	fprintf(fp, "\n%ssum=%s\n"
	    "%sdir=/var/tmp/spotrun-bin\n"
	    "%srm -rf \"$dir\"\n"
	    "%smkdir -p \"$dir\"\n"
	    "%scd \"$dir\"\n"
	    "%scurl -fsSL --retry 5 --retry-connrefused -o spotrun \"$url\"\n"
	    "%secho \"$sum  spotrun\" | sha256sum -c -\n"
	    "%sinstall -m 0755 spotrun " SR_CINIT_PREFIX "/bin/spotrun\n",
	    in, sha256, in, in, in, in, in, in, in);
	put_script_end(fp, in);
}

/* The user-data's write_files: the unit, then the install script's
 * header (its content follows). */
static void
put_files(FILE *fp, const struct sr_cinit_opts *o)
{
	fputs("write_files:\n"
	    "  - path: " SR_CINIT_UNIT_PATH "\n"
	    "    owner: root:root\n"
	    "    permissions: '0644'\n"
	    "    content: |\n", fp);
	put_unit(fp, o, "      ");
	fputs("  - path: " SR_CINIT_INSTALL_PATH "\n"
	    "    owner: root:root\n"
	    "    permissions: '0755'\n"
	    "    content: |\n", fp);
}

/* The prebuilt binary's user-data. */
static void
write_bin_userdata(const struct sr_cinit_opts *o, FILE *fp)
{
	static const char *const pkgs[] = { "ca-certificates", "curl",
		SR_CINIT_RUNTIME_PACKAGES };
	size_t i;

	fputs("#cloud-config\n"
	    "# spotrun cloud-init: user-data for a Debian 12, Ubuntu 22.04 or 24.04 VM\n"
	    "# that installs a prebuilt spotrun, fetched from the queue's store with\n"
	    "# a presigned URL and checked against its SHA-256, and runs its agent as\n"
	    "# spotrun-agent.service, whose ExecStart names the queue. It holds no\n"
	    "# secret key: the URL is signed for that one object, and the agent finds\n"
	    "# its keys on the VM (the instance's role).\n", fp);
	fputs("package_update: true\n"
	    "packages:\n", fp);
	for (i = 0; i < SR_ARRAY_LEN(pkgs); i++)
		fprintf(fp, "  - %s\n", pkgs[i]);
	put_files(fp, o);
	put_bin_script(fp, o->bin_url, o->bin_sha256);
	fputs("runcmd:\n"
	    "  - [" SR_CINIT_INSTALL_PATH "]\n", fp);
}

void
sr_cinit_write_userdata(const struct sr_cinit_opts *o, FILE *fp)
{
	struct source src;
	char err[SR_ERRMAX];

	if (o->source == NULL) {
		if (o->bin_url == NULL || o->bin_sha256 == NULL)
			sr_fatal("sr_cinit_write_userdata: neither a source nor a binary (a bug)");
		write_bin_userdata(o, fp);
		return;
	}
	if (source_parse(o->source, &src, err) == -1)
		sr_fatal("sr_cinit_write_userdata: %s (not checked)", err);
	fputs("#cloud-config\n"
	    "# spotrun cloud-init: user-data for a Debian 12, Ubuntu 22.04 or 24.04 VM\n"
	    "# that builds spotrun from its source and runs its agent as\n"
	    "# spotrun-agent.service, whose ExecStart names the queue. It holds no\n"
	    "# credential: the agent finds its keys on the VM (the instance's role).\n", fp);
	fputs("package_update: true\n"
	    "packages:\n"
	    "  - ca-certificates\n", fp);
	fputs(src.kind == SOURCE_GIT ? "  - git\n" : "  - curl\n", fp);
	if (src.tar_package != NULL)
		fprintf(fp, "  - %s\n", src.tar_package);
	put_files(fp, o);
	put_install_script(fp, &src, o->sha256);
	fputs("runcmd:\n"
	    "  - [" SR_CINIT_INSTALL_PATH "]\n", fp);
	source_free(&src);
}
