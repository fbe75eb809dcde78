/*
 * jobspec-keys.c: the keys of a job file (one table: section, name, type,
 * field, range, and the words of its error messages) and the parsing of
 * each value into struct sr_jobspec, including the free-form [env] and
 * [sweep] sections. doc/spotrun-job.5 documents the same table; keep them
 * together.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jobspec-int.h"
#include "jobspec-msg.h"
#include "store.h"
#include "sweep.h"
#include "units.h"
#include "util.h"
#include "words.h"

#define SWEEP_VALUES_MAX 10000		/* values of one sweep parameter */
#define SWEEP_BOUND	1000000000LL	/* the bounds of a range LOW..HIGH */
#define DURATION_LIMIT	(365 * 86400.0)	/* longest duration any key takes */

/* What a bad value is "not", by type: "interval = 20 minutes: not a duration". */
static const char *const type_nouns[] = {
	[T_NAME] = "not a valid job name",
	[T_COMMAND] = "not a command",
	[T_SHELL] = "not a shell command",
	[T_BOOL] = "not a yes/no value",
	[T_PATH] = "not a path",
	[T_STRING] = "not a value",
	[T_GPUS] = "not a GPU count",
	[T_MODE] = "not a checkpoint mode",
	[T_DURATION] = "not a duration",
	[T_INT] = "not a whole number",
	[T_STORE] = "not a store URL",
	[T_SIGNAL] = "not a signal the job can catch",
	[T_SIZE] = "not a size",
	[T_PROVIDER] = "not a provider",
	[T_UINT64] = "not a whole number",
	[T_POSITIVE] = "not a positive number",
	[T_PREEMPTIONS] = "not a count",
	[T_EXITCODES] = "not a list of exit codes",
	[T_URL] = "not a base URL",
	[T_PROCS] = "not a process count",
	[T_LAUNCH] = "not a launch mode",
	[T_NODES] = "not a node count",
	[T_IMAGE] = "not an image reference",
	[T_RUNTIME] = "not a container runtime",
};

#define DUR_HINT(e) "use a number with a unit s, m, h (e.g. " e ")"

#define F(field) offsetof(struct sr_jobspec, field)

const struct key sr_js_keys[] = {
	{ SEC_JOB, "name", T_NAME, F(name), 0, 0, 0,
	  "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit "
	  "(e.g. llama-lora)", NULL },
	{ SEC_JOB, "command", T_COMMAND, F(command), 0, 0, 0, SR_JS_COMMAND_HINT, NULL },
	{ SEC_JOB, "shell", T_BOOL, F(shell), 0, 0, 0,
	  "use yes or no (or true/false, on/off, 1/0)", NULL },
	{ SEC_JOB, "workdir", T_PATH, F(workdir), 0, 0, 0,
	  "give a directory, absolute or relative to the job file (e.g. . or /data/run1)", NULL },
	{ SEC_JOB, "ship_workdir", T_BOOL, F(ship_workdir), 0, 0, 0,
	  "use yes or no (or true/false, on/off, 1/0)", NULL },
	{ SEC_JOB, "workdir_max", T_SIZE, F(workdir_max), 1, 1099511627776.0, 0,
	  "use a number with a unit KiB, MiB or GiB (e.g. 4GiB)",
	  "use a size from 1B to 1TiB (e.g. 4GiB)" },
	{ SEC_JOB, "setup", T_SHELL, F(setup), 0, 0, 0,
	  "give a shell command run once per machine before the job "
	  "(e.g. pip install -r requirements.txt)", NULL },
	{ SEC_JOB, "image", T_IMAGE, F(image), 0, 0, 0,
	  "give an image as docker or podman name it, letters, digits and ._-/:@ "
	  "(e.g. nvcr.io/nvidia/pytorch:24.05-py3)", NULL },
	{ SEC_JOB, "container_runtime", T_RUNTIME, F(container_runtime), 0, 0, 0,
	  "use auto, podman or docker (e.g. podman)", NULL },

	{ SEC_RESOURCES, "gpus", T_GPUS, 0, 0, 64, 0,
	  "use a number from 0 to 64 or a range MIN-MAX (e.g. 8 or 1-8)", NULL },
	{ SEC_RESOURCES, "gpu_type", T_STRING, F(gpu_type), 0, 0, 0,
	  "give a GPU model (e.g. H100), or remove the line", NULL },
	{ SEC_RESOURCES, "procs", T_PROCS, 0, 1, SR_JOBSPEC_PROCS_MAX, 0,
	  "use a number from 1 to 256 or a range MIN-MAX (e.g. 4 or 2-8)", NULL },
	{ SEC_RESOURCES, "nodes", T_NODES, 0, 1, SR_JOBSPEC_NODES_MAX, 0,
	  "use a number from 1 to 64 or a range MIN-MAX (e.g. 2 or 2-4)", NULL },
	{ SEC_RESOURCES, "launch", T_LAUNCH, F(launch), 0, 0, 0,
	  "use ranks or once (e.g. once, for a job that runs torchrun itself)", NULL },

	{ SEC_CHECKPOINT, "mode", T_MODE, F(mode), 0, 0, 0,
	  NULL, NULL },		/* the hint lists the caller's methods: hint_of() */
	{ SEC_CHECKPOINT, "interval", T_DURATION, F(interval), 1, DURATION_LIMIT, 1,
	  DUR_HINT("20m"), "use 0 (off) or from 1s to 365d (e.g. 20m)" },
	{ SEC_CHECKPOINT, "keep", T_INT, F(ckpt.keep), 1, 1000000, 0,
	  "use a whole number from 1 to 1000000 (e.g. 3)", NULL },
	{ SEC_CHECKPOINT, "store", T_STORE, F(store), 0, 0, 0,
	  NULL, NULL },		/* the hint lists the store's URL forms: hint_of() */
	{ SEC_CHECKPOINT, "local_dir", T_PATH, F(local_dir), 0, 0, 0,
	  "give a directory, absolute or relative to the job file (e.g. /scratch/ckpt)", NULL },
	{ SEC_CHECKPOINT, "signal", T_SIGNAL, F(request_signal), 0, 0, 0,
	  "use USR1, USR2, HUP, INT, QUIT, TERM, ALRM, WINCH or none (e.g. USR1)", NULL },
	{ SEC_CHECKPOINT, "write_timeout", T_DURATION, F(write_timeout), 1, DURATION_LIMIT, 0,
	  DUR_HINT("10m"), "use from 1s to 365d (e.g. 10m)" },
	{ SEC_CHECKPOINT, "chunk_size", T_SIZE, F(ckpt.chunk_size), 1 << 20, 256 << 20, 0,
	  "use a number with a unit KiB, MiB or GiB (e.g. 64MiB)",
	  "use a size from 1MiB to 256MiB (e.g. 16MiB)" },
	{ SEC_CHECKPOINT, "level", T_INT, F(ckpt.level), 1, 19, 0,
	  "use a whole number from 1 to 19 (e.g. 1)", NULL },
	{ SEC_CHECKPOINT, "margin", T_DURATION, F(margin), 0, DURATION_LIMIT, 0,
	  DUR_HINT("5s"), "use at most 365d (e.g. 5s)" },

	{ SEC_PROVIDER, "name", T_PROVIDER, F(provider.name), 0, 0, 0,
	  NULL, NULL },		/* the hint lists the provider table's names: hint_of() */
	{ SEC_PROVIDER, "window", T_DURATION, F(provider.window), 0, DURATION_LIMIT, 0,
	  DUR_HINT("30s"), "use at most 365d (e.g. 30s)" },
	{ SEC_PROVIDER, "grace", T_DURATION, F(provider.grace), 0, DURATION_LIMIT, 0,
	  DUR_HINT("30s"), "use at most 365d (e.g. 30s)" },
	{ SEC_PROVIDER, "after", T_DURATION, F(provider.after), 0, DURATION_LIMIT, 0,
	  DUR_HINT("10m"), "use 0 (off) or at most 365d (e.g. 10m)" },
	{ SEC_PROVIDER, "random_mean", T_DURATION, F(provider.random_mean), 0, DURATION_LIMIT, 0,
	  DUR_HINT("1h"), "use 0 (off) or at most 365d (e.g. 1h)" },
	{ SEC_PROVIDER, "seed", T_UINT64, F(provider.seed), 0, 0, 0,
	  "use a whole number from 0 to 18446744073709551615 (e.g. 1)", NULL },
	{ SEC_PROVIDER, "notice_file", T_PATH, F(provider.notice_file), 0, 0, 0,
	  "give a file, absolute or relative to the job file (e.g. /tmp/preempt-now)", NULL },
	{ SEC_PROVIDER, "trace", T_PATH, F(provider.trace), 0, 0, 0,
	  "give a file, absolute or relative to the job file (e.g. traces/spot.json)", NULL },
	{ SEC_PROVIDER, "trace_scale", T_POSITIVE, F(provider.trace_scale), 0, 1000000, 0,
	  "use a number greater than 0 and at most 1000000 (e.g. 60 or 0.5)", NULL },
	{ SEC_PROVIDER, "trace_start", T_DURATION, F(provider.trace_start), 0, DURATION_LIMIT, 0,
	  DUR_HINT("2h"), "use at most 365d (e.g. 2h)" },
	{ SEC_PROVIDER, "preemptions", T_PREEMPTIONS, F(provider.max_preemptions), 0, 1000000, 0,
	  "use a whole number from 0 to 1000000, or unlimited (e.g. 3)", NULL },
	{ SEC_PROVIDER, "endpoint", T_URL, F(provider.endpoint), 1, 65535, 0,
	  "use http://HOST[:PORT] or https://HOST[:PORT] (e.g. http://169.254.169.254)",
	  "use a port from 1 to 65535 (e.g. http://127.0.0.1:8080)" },
	{ SEC_PROVIDER, "poll", T_DURATION, F(provider.poll), 0.05, 3600, 0,
	  DUR_HINT("1s"), "use from 50ms to 1h (e.g. 1s)" },
	{ SEC_PROVIDER, "ipv6", T_BOOL, F(provider.ipv6), 0, 0, 0,
	  "use yes or no (or true/false, on/off, 1/0)", NULL },
	{ SEC_PROVIDER, "early_checkpoint", T_BOOL, F(early_checkpoint), 0, 0, 0,
	  "use yes or no (or true/false, on/off, 1/0)", NULL },

	{ SEC_RETRY, "max_restarts", T_INT, F(max_restarts), 0, 1000000, 0,
	  "use a whole number from 0 to 1000000 (e.g. 10)", NULL },
	{ SEC_RETRY, "on_exit_codes", T_EXITCODES, 0, 1, 255, 0,
	  "use a comma-separated list of exit codes from 1 to 255 (e.g. 1, 137)", NULL },
	{ SEC_RETRY, "backoff", T_DURATION, F(backoff), 0, DURATION_LIMIT, 0,
	  DUR_HINT("1s"), "use at most 365d (e.g. 1s)" },
	{ SEC_RETRY, "backoff_max", T_DURATION, F(backoff_max), 0, DURATION_LIMIT, 0,
	  DUR_HINT("5m"), "use at most 365d (e.g. 5m)" },
};

const size_t sr_js_nkeys = SR_ARRAY_LEN(sr_js_keys);
_Static_assert(SR_ARRAY_LEN(sr_js_keys) <= SR_JS_MAXKEYS, "raise SR_JS_MAXKEYS");


/* ------------------------------------------------------------------ */
/* Values */

static int
is_env_name(const char *s)
{
	size_t i;

	if (!(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return 0;
	for (i = 1; s[i] != '\0'; i++) {
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return 0;
	}
	return 1;
}

static int
is_job_name(const char *s)
{
	size_t i;

	if (!isalnum((unsigned char)s[0]))
		return 0;
	for (i = 1; s[i] != '\0'; i++) {
		if (i >= 64 || !(isalnum((unsigned char)s[i]) || strchr("._-", s[i]) != NULL))
			return 0;
	}
	return 1;
}

/* Parse a whole decimal number in [min, max]: 0, -1 (not a number) or
 * -2 (out of range). */
static int
parse_int(const char *s, long long min, long long max, long long *out)
{
	const char *p = s;
	long long v = 0;
	int neg = 0;

	if (*p == '-') {
		neg = 1;
		p++;
	}
	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (LLONG_MAX - (*p - '0')) / 10)
			v = LLONG_MAX;	/* still digits: out of range, not a syntax error */
		else
			v = v * 10 + (*p - '0');
	}
	if (*p != '\0')
		return -1;
	if (neg)
		v = -v;
	if (v < min || v > max)
		return -2;
	*out = v;
	return 0;
}

static int
parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return -1;
}

static const struct {
	const char *name;
	int signo;
} catchable_signals[] = {
	{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT },
	{ "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "ALRM", SIGALRM },
	{ "TERM", SIGTERM }, { "WINCH", SIGWINCH },
};

/* "USR1", "SIGUSR1", "usr1" -> SIGUSR1; "none" -> 0; -1 if none of those. */
static int
parse_signal(const char *s, int *out)
{
	size_t i;

	if (strcasecmp(s, "none") == 0) {
		*out = 0;
		return 0;
	}
	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	for (i = 0; i < SR_ARRAY_LEN(catchable_signals); i++) {
		if (strcasecmp(s, catchable_signals[i].name) == 0) {
			*out = catchable_signals[i].signo;
			return 0;
		}
	}
	return -1;
}

char *
sr_js_absolute_path(const char *dir, const char *p)
{
	char *joined, *out, *part, *save = NULL;
	size_t n = 0;

	joined = p[0] == '/' ? sr_strdup(p) : sr_asprintf("%s/%s", dir, p);
	out = sr_malloc(strlen(joined) + 2);
	for (part = strtok_r(joined, "/", &save); part != NULL;
	    part = strtok_r(NULL, "/", &save)) {
		if (strcmp(part, ".") == 0)
			continue;
		out[n++] = '/';
		memcpy(out + n, part, strlen(part));
		n += strlen(part);
	}
	if (n == 0)
		out[n++] = '/';
	out[n] = '\0';
	free(joined);
	return out;
}

int
sr_js_argv(const char *command, int shell, char ***argv, char *err)
{
	if (shell) {
		*argv = sr_calloc(4, sizeof **argv);
		(*argv)[0] = sr_strdup("/bin/sh");
		(*argv)[1] = sr_strdup("-c");
		(*argv)[2] = sr_strdup(command);
		return 0;
	}
	if (sr_words_split(command, SR_WORDS_STRICT, argv, NULL, err) == -1)
		return -1;
	return (*argv)[0] == NULL || (*argv)[0][0] == '\0' ? -2 : 0;
}

/* ------------------------------------------------------------------ */
/* Setting keys */

#define FIELD(js, k, t) ((t *)(void *)((char *)(js) + (k)->off))

/* Replace the string field of k with v (malloc'd), freeing the old one.
 * Through memcpy, as some of the fields are the modules' const char *
 * (struct sr_provider_conf), which the job spec owns all the same. */
static void
set_string(struct sr_jobspec *js, const struct key *k, char *v)
{
	char *old;

	memcpy(&old, (char *)js + k->off, sizeof old);
	free(old);
	memcpy((char *)js + k->off, &v, sizeof v);
}

/* What to write instead: the key's hint, or what the module that owns
 * the values says is valid (the provider table's names, the store's URL
 * forms). */
static const char *
hint_of(const struct sr_js_parse *p, const struct key *k, char *buf, size_t len)
{
	char names[192];

	if (k->type == T_PROVIDER) {
		sr_provider_names(0, names, sizeof names);
		snprintf(buf, len, "use %s (e.g. auto)", names);
	} else if (k->type == T_MODE) {
		const char *const *m = p->names->methods;
		size_t i, n;

		for (n = 0; m[n] != NULL; n++)
			;
		buf[0] = '\0';
		strlcat(buf, "use ", len);
		for (i = 0; i < n; i++) {
			if (i > 0)
				strlcat(buf, i + 1 == n ? " or " : ", ", len);
			strlcat(buf, m[i], len);
		}
		strlcat(buf, " (e.g. ", len);
		strlcat(buf, m[0], len);
		strlcat(buf, ")", len);
	} else if (k->type == T_STORE) {
		sr_store_url_forms(names, sizeof names);
		snprintf(buf, len, "use an absolute path or %s (e.g. file:///srv/spotrun)", names);
	} else
		return k->hint;
	return buf;
}

static void
bad_value(struct sr_js_parse *p, const struct key *k, const char *v)
{
	char b[SR_JS_SHOW_MAX + 4], h[256];

	sr_js_error(p, p->line, "%s = %s: %s; %s", k->name, sr_js_show(v, b), type_nouns[k->type],
	    hint_of(p, k, h, sizeof h));
}

static void
out_of_range(struct sr_js_parse *p, const struct key *k, const char *v)
{
	char b[SR_JS_SHOW_MAX + 4];

	sr_js_error(p, p->line, "%s = %s: out of range; %s", k->name, sr_js_show(v, b),
	    k->range != NULL ? k->range : k->hint);
}

/* A count or a range MIN-MAX of key k, within [k->min, k->max] (units:
 * what it counts, for "at most 64 GPUs"): 0 with *lo and *hi set, or -1
 * with the error recorded. */
static int
parse_count(struct sr_js_parse *p, const struct key *k, const char *v, const char *units,
    int *lo_out, int *hi_out)
{
	char b[SR_JS_SHOW_MAX + 4];
	long long lo, hi;
	const char *dash = strchr(v, '-');
	char *first;
	int r1, r2;

	if (dash == NULL) {
		r1 = parse_int(v, 0, LLONG_MAX, &lo);
		r2 = r1;
		hi = lo;
	} else {
		first = sr_strndup(v, (size_t)(dash - v));
		r1 = parse_int(first, 0, LLONG_MAX, &lo);
		r2 = parse_int(dash + 1, 0, LLONG_MAX, &hi);
		free(first);
	}
	if (r1 == -1 || r2 == -1) {
		bad_value(p, k, v);
		return -1;
	}
	if (r1 == -2 || r2 == -2 || hi > (long long)k->max) {
		sr_js_error(p, p->line, "%s = %s: too many; at most %d %s", k->name, sr_js_show(v, b),
		    (int)k->max, units);
		return -1;
	}
	if (lo > hi) {
		sr_js_error(p, p->line, "%s = %s: the range is reversed; write MIN-MAX (e.g. %lld-%lld)",
		    k->name, sr_js_show(v, b), hi, lo);
		return -1;
	}
	if (lo < (long long)k->min) {
		out_of_range(p, k, v);
		return -1;
	}
	*lo_out = (int)lo;
	*hi_out = (int)hi;
	return 0;
}

/* An absolute path names the file store ("/srv/x" and "file:///srv/x"
 * alike, normalised); any other URL is the store module's to judge. */
static void
set_store(struct sr_js_parse *p, const struct key *k, const char *v)
{
	struct sr_store_url_problem pb;
	char b[SR_JS_SHOW_MAX + 4];
	const char *local = v[0] == '/' ? v : sr_store_url_path(v);
	char *path;

	if (local != NULL) {
		path = sr_js_absolute_path("/", local);
		set_string(p->js, k, sr_asprintf("file://%s", path));
		free(path);
		return;
	}
	switch (sr_store_url_explain(v, &pb)) {
	case SR_STORE_URL_OK:
		set_string(p->js, k, sr_strdup(v));
		return;
	case SR_STORE_URL_UNKNOWN:
		bad_value(p, k, v);
		return;
	case SR_STORE_URL_NO_ROOT:
	case SR_STORE_URL_BAD:
		sr_js_error(p, p->line, "store = %s: %s%s%s", sr_js_show(v, b), pb.reason,
		    pb.fix[0] != '\0' ? "; " : "", pb.fix);
		return;
	}
}

/* The item of a comma-separated list that starts at s, blanks trimmed:
 * [*a, *e). Returns the comma after it, or NULL for the last item. */
static const char *
list_item(const char *s, const char **a, const char **e)
{
	const char *comma = strchr(s, ',');

	*e = comma != NULL ? comma : s + strlen(s);
	for (*a = s; *a < *e && isspace((unsigned char)**a); (*a)++)
		;
	while (*e > *a && isspace((unsigned char)(*e)[-1]))
		(*e)--;
	return comma;
}

static void
set_exit_codes(struct sr_js_parse *p, const struct key *k, const char *v)
{
	char b[SR_JS_SHOW_MAX + 4], *item;
	const char *s = v, *comma, *a, *e;
	int *codes = NULL;
	size_t n = 0, i;
	long long code;
	int r;

	for (;;) {
		comma = list_item(s, &a, &e);
		if (a == e) {
			sr_js_error(p, p->line, "on_exit_codes = %s: an item is empty; %s",
			    sr_js_show(v, b), k->hint);
			goto fail;
		}
		item = sr_strndup(a, (size_t)(e - a));
		r = parse_int(item, 1, 255, &code);	/* a long run of digits: -2 */
		free(item);
		if (r == -1) {
			sr_js_error(p, p->line, "on_exit_codes = %s: %s is not an exit code; %s",
			    sr_js_show(v, b), sr_js_show_span(a, (size_t)(e - a), (char[SR_JS_SHOW_MAX + 4]){ 0 }),
			    k->hint);
			goto fail;
		}
		if (r == -2) {
			sr_js_error(p, p->line, "on_exit_codes = %s: %s is out of range; %s",
			    sr_js_show(v, b), sr_js_show_span(a, (size_t)(e - a),
			    (char[SR_JS_SHOW_MAX + 4]){ 0 }), k->hint);
			goto fail;
		}
		for (i = 0; i < n; i++) {
			if (codes[i] == (int)code) {
				sr_js_error(p, p->line, "on_exit_codes = %s: %d is listed twice",
				    sr_js_show(v, b), (int)code);
				goto fail;
			}
		}
		codes = sr_reallocarray(codes, n + 1, sizeof *codes);
		codes[n++] = (int)code;
		if (comma == NULL)
			break;
		s = comma + 1;
	}
	free(p->js->on_exit_codes);
	p->js->on_exit_codes = codes;
	p->js->n_on_exit_codes = n;
	return;
fail:
	free(codes);
}

/* A metadata service's base URL: http(s)://HOST[:PORT][/], HOST a name,
 * an IPv4 address or an [IPv6] literal. No path: the providers add the
 * service's own paths to it. */
static void
set_endpoint(struct sr_js_parse *p, const struct key *k, const char *v)
{
	char b[SR_JS_SHOW_MAX + 4];
	const char *h, *e;
	long long port;
	char *digits;
	int r;

	if (strncmp(v, "http://", 7) == 0)
		h = v + 7;
	else if (strncmp(v, "https://", 8) == 0)
		h = v + 8;
	else {
		bad_value(p, k, v);
		return;
	}
	if (*h == '[') {
		e = h + 1 + strspn(h + 1, "0123456789abcdefABCDEF:.");
		if (*e != ']' || e == h + 1 || memchr(h, ':', (size_t)(e - h)) == NULL) {
			bad_value(p, k, v);
			return;
		}
		e++;
	} else {
		e = h + strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789.-");
		if (e == h || *h == '.' || *h == '-') {
			bad_value(p, k, v);
			return;
		}
	}
	if (*e == ':') {
		h = e + 1;
		e = h + strspn(h, "0123456789");
		digits = sr_strndup(h, (size_t)(e - h));
		r = e - h > 5 ? -2 : parse_int(digits, (long long)k->min, (long long)k->max, &port);
		free(digits);
		if (r == -1) {
			bad_value(p, k, v);
			return;
		}
		if (r == -2) {
			out_of_range(p, k, v);
			return;
		}
	}
	if (*e == '/' && e[1] == '\0')
		e++;
	if (*e == '/') {
		sr_js_error(p, p->line, "%s = %s: a base URL has no path; spotrun adds the "
		    "metadata service's paths (e.g. http://169.254.169.254)", k->name,
		    sr_js_show(v, b));
		return;
	}
	if (*e != '\0') {
		bad_value(p, k, v);
		return;
	}
	set_string(p->js, k, sr_strdup(v));
}

void
sr_js_set_value(struct sr_js_parse *p, const struct key *k, const char *v)
{
	struct sr_jobspec *js = p->js;
	char b[SR_JS_SHOW_MAX + 4];
	long long ll;
	uint64_t u;
	double d;
	char *end;
	int i, r;

	if (*v == '\0') {
		sr_js_error(p, p->line, "%s has no value; %s", k->name,
		    hint_of(p, k, (char[256]){ 0 }, 256));
		return;
	}
	switch (k->type) {
	case T_NAME:
	case T_COMMAND:		/* split once shell = is known: see finish() */
	case T_SHELL:		/* /bin/sh's to parse; a " ;" comment: finish() */
	case T_STRING:
		if (k->type == T_NAME && !is_job_name(v)) {
			bad_value(p, k, v);
			return;
		}
		set_string(js, k, sr_strdup(v));
		return;
	case T_PROVIDER:
		if (sr_provider_kind(v, &(struct sr_provider_kind){ 0 }) == -1) {
			bad_value(p, k, v);
			return;
		}
		set_string(js, k, sr_strdup(v));
		return;
	case T_PATH:
		if (v[0] == '~') {
			sr_js_error(p, p->line, "%s = %s: ~ is not expanded; give an absolute path "
			    "or one relative to the job file", k->name, sr_js_show(v, b));
			return;
		}
		set_string(js, k, sr_js_absolute_path(js->dir, v));
		return;
	case T_BOOL:
		if (parse_bool(v, &i) == -1)
			bad_value(p, k, v);
		else
			*FIELD(js, k, int) = i;
		return;
	case T_GPUS:
		(void)parse_count(p, k, v, "GPUs", &js->gpus_min, &js->gpus_max);
		return;
	case T_PROCS:
		(void)parse_count(p, k, v, "processes", &js->procs_min, &js->procs_max);
		return;
	case T_NODES:
		(void)parse_count(p, k, v, "nodes", &js->nodes_min, &js->nodes_max);
		return;
	case T_IMAGE:
		/* What a runtime could take for an option or a second word is
		 * refused here; the runtime judges the rest when it pulls. */
		if (v[0] == '-' || v[0] == '/' || v[0] == ':' || v[0] == '@' ||
		    v[strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789._-/:@")] != '\0')
			bad_value(p, k, v);
		else
			set_string(js, k, sr_strdup(v));
		return;
	case T_RUNTIME:
		if (strcmp(v, "auto") == 0)
			js->container_runtime = SR_CONTAINER_AUTO;
		else if (strcmp(v, "podman") == 0)
			js->container_runtime = SR_CONTAINER_PODMAN;
		else if (strcmp(v, "docker") == 0)
			js->container_runtime = SR_CONTAINER_DOCKER;
		else
			bad_value(p, k, v);
		return;
	case T_LAUNCH:
		if (strcmp(v, "ranks") == 0)
			js->launch = SR_LAUNCH_RANKS;
		else if (strcmp(v, "once") == 0)
			js->launch = SR_LAUNCH_ONCE;
		else
			bad_value(p, k, v);
		return;
	case T_MODE:
		for (i = 0; p->names->methods[i] != NULL; i++)
			if (strcmp(v, p->names->methods[i]) == 0) {
				set_string(js, k, sr_strdup(v));
				return;
			}
		bad_value(p, k, v);
		return;
	case T_DURATION:
		if ((r = sr_parse_duration(v, &d)) == -1)
			bad_value(p, k, v);
		else if (r == -2 || (d < k->min && !(d == 0 && k->zero_ok)) || d > k->max)
			out_of_range(p, k, v);
		else
			*FIELD(js, k, double) = d;
		return;
	case T_INT:
	case T_PREEMPTIONS:
		if (k->type == T_PREEMPTIONS && (strcmp(v, "unlimited") == 0 || strcmp(v, "-1") == 0)) {
			js->provider.max_preemptions = -1;
			return;
		}
		r = parse_int(v, (long long)k->min, (long long)k->max, &ll);
		if (r == -1)
			bad_value(p, k, v);
		else if (r == -2)
			out_of_range(p, k, v);
		else
			*FIELD(js, k, int) = (int)ll;
		return;
	case T_STORE:
		set_store(p, k, v);
		return;
	case T_SIGNAL:
		if (parse_signal(v, &i) == 0)
			js->request_signal = i;
		else if (strcasecmp(v, "KILL") == 0 || strcasecmp(v, "SIGKILL") == 0 ||
		    strcasecmp(v, "STOP") == 0 || strcasecmp(v, "SIGSTOP") == 0)
			sr_js_error(p, p->line, "signal = %s: cannot be caught, so the job could not "
			    "checkpoint; %s", v, k->hint);
		else
			bad_value(p, k, v);
		return;
	case T_SIZE:
		if ((r = sr_parse_size(v, &u)) == -1)
			bad_value(p, k, v);
		else if (r == -2 || (double)u < k->min || (double)u > k->max)
			out_of_range(p, k, v);
		else
			*FIELD(js, k, size_t) = (size_t)u;
		return;
	case T_UINT64:
		if (v[0] == '-' && v[1] != '\0' && strspn(v + 1, "0123456789") == strlen(v + 1)) {
			out_of_range(p, k, v);	/* a whole number, below 0 */
			return;
		}
		if (strspn(v, "0123456789") != strlen(v)) {	/* strtoull takes "-1" */
			bad_value(p, k, v);
			return;
		}
		errno = 0;
		u = strtoull(v, &end, 10);
		if (errno == ERANGE)
			out_of_range(p, k, v);
		else
			*FIELD(js, k, uint64_t) = u;
		return;
	case T_POSITIVE:
		/* strtod alone would take "inf", "nan", hex and leading blanks. */
		errno = 0;
		if (strspn(v, "0123456789.eE+-") != strlen(v) || (d = strtod(v, &end), *end != '\0'))
			bad_value(p, k, v);
		else if (errno == ERANGE && v[0] != '-')
			out_of_range(p, k, v);	/* a number too large or too small for a double */
		else if (!(d > 0))
			bad_value(p, k, v);
		else if (d > k->max)
			out_of_range(p, k, v);
		else
			*FIELD(js, k, double) = d;
		return;
	case T_EXITCODES:
		set_exit_codes(p, k, v);
		return;
	case T_URL:
		set_endpoint(p, k, v);
		return;
	}
}

/* FNV-1a of the n bytes at s: the slot of an [env] name. */
static size_t
name_hash(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ULL;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return (size_t)h;
}

/* The js->env index of the variable named by the n bytes at name, or
 * SIZE_MAX if it is not set yet. */
static size_t
env_find(const struct sr_js_parse *p, const char *name, size_t n)
{
	size_t mask = p->env_slots - 1, i, k;
	const char *e;

	if (p->env_slots == 0)
		return SIZE_MAX;
	for (i = name_hash(name, n) & mask; (k = p->env_index[i]) != 0; i = (i + 1) & mask) {
		e = p->js->env[k - 1];
		if (strncmp(e, name, n) == 0 && e[n] == '=')
			return k - 1;
	}
	return SIZE_MAX;
}

/* Put js->env[k], a name not in the table, into a free slot. */
static void
env_slot_put(struct sr_js_parse *p, size_t k)
{
	size_t mask = p->env_slots - 1, i;
	const char *e = p->js->env[k];

	for (i = name_hash(e, strcspn(e, "=")) & mask; p->env_index[i] != 0; i = (i + 1) & mask)
		;
	p->env_index[i] = k + 1;
}

/* Index js->env[k], the newest entry, growing the table to keep it at most
 * half full. */
static void
env_index_add(struct sr_js_parse *p, size_t k)
{
	size_t j;

	if (2 * (k + 1) > p->env_slots) {
		free(p->env_index);
		p->env_slots = p->env_slots < 64 ? 64 : p->env_slots * 2;
		p->env_index = sr_calloc(p->env_slots, sizeof *p->env_index);
		for (j = 0; j < k; j++)
			env_slot_put(p, j);
	}
	env_slot_put(p, k);
}

void
sr_js_set_env(struct sr_js_parse *p, const char *name, const char *v)
{
	struct sr_jobspec *js = p->js;
	char b[SR_JS_SHOW_MAX + 4];
	size_t i, n = strlen(name);

	if (!is_env_name(name)) {
		sr_js_error(p, p->line, "[env] %s: not a valid variable name; use letters, digits "
		    "and _, not starting with a digit (e.g. DATA_DIR)", sr_js_show(name, b));
		return;
	}
	/* SPOTRUN_PARAM_ is how a sweep's trial carries its parameters
	 * (sweep.h); spotrun sets no variable of that name itself. */
	if (strncmp(name, "SPOTRUN_", 8) == 0 && strncmp(name, "SPOTRUN_PARAM_", 14) != 0) {
		sr_js_error(p, p->line, "[env] %s: names starting with SPOTRUN_ are reserved for "
		    "spotrun's own variables (SPOTRUN_PARAM_ excepted); rename it",
		    sr_js_show(name, b));
		return;
	}
	if ((i = env_find(p, name, n)) != SIZE_MAX) {
		sr_js_error(p, p->line, "duplicate key '%s' in [env] (first set on line %d); "
		    "keep one", sr_js_show(name, b), p->env_line[i]);
		return;
	}
	if (p->nenv + 2 > p->env_cap) {
		p->env_cap = p->env_cap < 16 ? 16 : p->env_cap * 2;
		js->env = sr_reallocarray(js->env, p->env_cap, sizeof *js->env);
		p->env_line = sr_reallocarray(p->env_line, p->env_cap, sizeof *p->env_line);
	}
	js->env[p->nenv] = sr_asprintf("%s=%s", name, v);
	p->env_line[p->nenv] = p->line;
	js->env[++p->nenv] = NULL;
	env_index_add(p, p->nenv - 1);
}

/* "SPOTRUN_PARAM_" + name, the variable of a sweep's parameter: its name in
 * upper case into buf (SR_JS_SHOW_MAX + 4 bytes, cut if longer). */
static const char *
upper_name(const char *name, char buf[SR_JS_SHOW_MAX + 4])
{
	size_t i;

	for (i = 0; name[i] != '\0' && i < SR_JS_SHOW_MAX; i++)
		buf[i] = (char)toupper((unsigned char)name[i]);
	buf[i] = '\0';
	return buf;
}

/* Add one sweep item to values: a value, or an integer range LOW..HIGH. */
static int
sweep_item(struct sr_js_parse *p, const char *name, const char *v, const char *a, size_t n,
    char ***values, size_t *nvalues)
{
	char b[SR_JS_SHOW_MAX + 4], b2[SR_JS_SHOW_MAX + 4], *item = sr_strndup(a, n), *dots;
	long long lo, hi, x;
	int r1, r2;

	dots = strstr(item, "..");
	if (dots == NULL) {
		*values = sr_reallocarray(*values, *nvalues + 1, sizeof **values);
		(*values)[(*nvalues)++] = item;
		return 0;
	}
	*dots = '\0';
	r1 = parse_int(item, -SWEEP_BOUND, SWEEP_BOUND, &lo);
	r2 = parse_int(dots + 2, -SWEEP_BOUND, SWEEP_BOUND, &hi);
	*dots = '.';
	if (r1 == -1 || r2 == -1) {
		sr_js_error(p, p->line, "%s = %s: %s is not an integer range; write LOW..HIGH "
		    "with whole numbers (e.g. 1..3), or list the values", sr_js_show(name, b),
		    sr_js_show(v, b2), sr_js_show(item, (char[SR_JS_SHOW_MAX + 4]){ 0 }));
		free(item);
		return -1;
	}
	if (r1 == -2 || r2 == -2) {
		sr_js_error(p, p->line, "%s = %s: the range %s is out of range; use bounds "
		    "from %lld to %lld", sr_js_show(name, b), sr_js_show(v, b2),
		    sr_js_show(item, (char[SR_JS_SHOW_MAX + 4]){ 0 }), -SWEEP_BOUND, SWEEP_BOUND);
		free(item);
		return -1;
	}
	if (lo > hi) {
		sr_js_error(p, p->line, "%s = %s: the range %s is reversed; write LOW..HIGH "
		    "(e.g. %lld..%lld)", sr_js_show(name, b), sr_js_show(v, b2), item, hi, lo);
		free(item);
		return -1;
	}
	if (hi - lo + 1 > SWEEP_VALUES_MAX - (long long)*nvalues) {
		sr_js_error(p, p->line, "%s = %s: too many values; at most %d per parameter",
		    sr_js_show(name, b), sr_js_show(v, b2), SWEEP_VALUES_MAX);
		free(item);
		return -1;
	}
	free(item);
	for (x = lo; x <= hi; x++) {
		*values = sr_reallocarray(*values, *nvalues + 1, sizeof **values);
		(*values)[(*nvalues)++] = sr_asprintf("%lld", x);
	}
	return 0;
}

void
sr_js_set_sweep(struct sr_js_parse *p, const char *name, const char *v)
{
	struct sr_jobspec *js = p->js;
	struct sr_sweep_param *sp;
	char b[SR_JS_SHOW_MAX + 4], b2[SR_JS_SHOW_MAX + 4];
	const char *s = v, *comma, *a, *e;
	char **values = NULL;
	size_t nvalues = 0, i;

	if (!is_env_name(name) || strlen(name) > SR_SWEEP_NAME_MAX) {
		sr_js_error(p, p->line, "[sweep] %s: not a valid parameter name; use 1-%d letters, "
		    "digits and _, not starting with a digit (e.g. lr)", sr_js_show(name, b),
		    SR_SWEEP_NAME_MAX);
		return;
	}
	for (i = 0; i < js->nsweep; i++) {
		if (strcmp(js->sweep[i].key, name) == 0) {
			sr_js_error(p, p->line, "duplicate key '%s' in [sweep] (first set on line %d); "
			    "keep one", name, js->sweep[i].line);
			return;
		}
		if (strcasecmp(js->sweep[i].key, name) == 0) {
			sr_js_error(p, p->line, "[sweep] %s: %s (line %d) differs only in case, and "
			    "both would be SPOTRUN_PARAM_%s in the job's environment; rename one",
			    name, js->sweep[i].key, js->sweep[i].line, upper_name(name, b2));
			return;
		}
	}
	if (js->nsweep == SR_SWEEP_PARAMS_MAX) {
		sr_js_error(p, p->line, "[sweep] %s: more than %d parameters; split the sweep into "
		    "several job files", name, SR_SWEEP_PARAMS_MAX);
		return;
	}
	if (*v == '\0') {
		sr_js_error(p, p->line, "%s has no values; list them separated by commas "
		    "(e.g. 1e-4, 3e-4) or give a range (e.g. 1..3)", name);
		return;
	}
	for (;;) {
		comma = list_item(s, &a, &e);
		if (a == e) {
			sr_js_error(p, p->line, "%s = %s: an item is empty; list values separated "
			    "by commas (e.g. 1e-4, 3e-4)", name, sr_js_show(v, b2));
			goto fail;
		}
		if (*a == ';' || *a == '#') {
			/* After a blank in a trial's command it would start a comment. */
			sr_js_error(p, p->line, "%s = %s: a value cannot start with '%c'; quote it "
			    "where it is used, or drop the '%c'", name, sr_js_show(v, b2), *a, *a);
			goto fail;
		}
		if ((size_t)(e - a) > SR_SWEEP_VALUE_MAX) {
			sr_js_error(p, p->line, "%s = %s: a value is longer than %d bytes", name,
			    sr_js_show(v, b2), SR_SWEEP_VALUE_MAX);
			goto fail;
		}
		if (sweep_item(p, name, v, a, (size_t)(e - a), &values, &nvalues) == -1)
			goto fail;
		if (nvalues > SWEEP_VALUES_MAX) {
			sr_js_error(p, p->line, "%s = %s: too many values; at most %d per parameter",
			    name, sr_js_show(v, b2), SWEEP_VALUES_MAX);
			goto fail;
		}
		if (comma == NULL)
			break;
		s = comma + 1;
	}
	js->sweep = sr_reallocarray(js->sweep, js->nsweep + 1, sizeof *js->sweep);
	sp = &js->sweep[js->nsweep++];
	sp->key = sr_strdup(name);
	sp->values = values;
	sp->nvalues = nvalues;
	sp->line = p->line;
	return;
fail:
	for (i = 0; i < nvalues; i++)
		free(values[i]);
	free(values);
}
