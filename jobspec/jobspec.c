/*
 * jobspec.c: reading a job file (INI) into a validated struct sr_jobspec.
 *
 * inih does the tokenising (sections, "key = value", comments), fed by our
 * own line reader. The reader exists because inih reports only the first
 * bad line and has no line numbers for its callback: the reader counts
 * lines, vets each one the way inih will read it (so every syntax error is
 * reported with its line, not only the first), and hands inih an empty line
 * in place of a bad one. Section headers are tracked by the reader too,
 * since inih does not tell the callback about a section that has no keys.
 *
 * Every error is collected; the caller gets a struct only when there are
 * none. The keys and the parsing of their values are in jobspec-keys.c;
 * this file checks what needs the whole file (required keys, defaults that
 * depend on other keys, backoff against backoff_max, argv).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "defaults.h"
#include "iniparse.h"
#include "jobspec-int.h"
#include "jobspec-msg.h"
#include "jobspec-text.h"
#include "similar.h"
#include "trace.h"
#include "util.h"
#include "words.h"

#define FILE_MAX	SR_JOBSPEC_FILE_MAX
#define LINE_MAX_LEN	SR_JOBSPEC_LINE_MAX

const char *const sr_js_section_names[NSECTIONS] = {
	"job", "env", "resources", "checkpoint", "provider", "retry", "sweep", "data"
};

/* Which section, other than sec, has a key of this name? -1 if none. */
static int
section_of_key(const char *name, int sec)
{
	size_t i;

	for (i = 0; i < sr_js_nkeys; i++) {
		if ((int)sr_js_keys[i].sec != sec && strcmp(sr_js_keys[i].name, name) == 0)
			return (int)sr_js_keys[i].sec;
	}
	return -1;
}

static void
unknown_key(struct sr_js_parse *p, const char *name)
{
	const char *keys[SR_JS_MAXKEYS];
	char msg[sizeof p->errs->v->msg];
	size_t i, n = 0;
	int other = section_of_key(name, p->section);

	if (other >= 0) {
		sr_js_error(p, p->line, "unknown key '%s' in [%s]; %s belongs in [%s]", name,
		    sr_js_section_names[p->section], name, sr_js_section_names[other]);
		return;
	}
	for (i = 0; i < sr_js_nkeys; i++) {
		if ((int)sr_js_keys[i].sec == p->section && n < SR_JS_MAXKEYS)
			keys[n++] = sr_js_keys[i].name;
	}
	sr_js_unknown_key_msg(msg, sizeof msg, name, sr_js_section_names[p->section], keys, n);
	sr_js_error(p, p->line, "%s", msg);
}

/* inih's callback: one "name = value" line of the current section. */
static int
on_key(void *user, const char *section, const char *name, const char *value)
{
	struct sr_js_parse *p = user;
	char b[SR_JS_SHOW_MAX + 4];
	size_t i;
	int sec;

	(void)section;	/* the reader tracks sections, bad headers included */
	if (p->section == SEC_UNKNOWN)
		return 1;	/* the header is already reported */
	if (*name == '\0') {
		sr_js_error(p, p->line, "no key name before '='; write key = value");
		return 1;
	}
	if (p->section == SEC_NONE) {
		sec = section_of_key(name, -1);
		if (sec >= 0)
			sr_js_error(p, p->line, "key '%s' is outside any section; put it under [%s]",
			    name, sr_js_section_names[sec]);
		else
			sr_js_error(p, p->line, "key '%s' is outside any section; put keys under "
			    "a section header such as [job]", sr_js_show(name, b));
		return 1;
	}
	if (p->line_bad && (p->section == SEC_ENV || p->section == SEC_SWEEP ||
	    p->section == SEC_DATA))
		return 1;
	if (p->section == SEC_DATA) {
		sr_js_set_data(p, name, value);
		return 1;
	}
	if (p->section == SEC_ENV) {
		sr_js_set_env(p, name, value);
		return 1;
	}
	if (p->section == SEC_SWEEP) {
		if (p->sweep_first_line == 0)
			p->sweep_first_line = p->line;
		sr_js_set_sweep(p, name, value);
		return 1;
	}
	for (i = 0; i < sr_js_nkeys; i++) {
		if ((int)sr_js_keys[i].sec == p->section && strcmp(sr_js_keys[i].name, name) == 0)
			break;
	}
	if (i == sr_js_nkeys) {
		unknown_key(p, name);
		return 1;
	}
	if (p->key_line[i] != 0) {
		sr_js_error(p, p->line, "duplicate key '%s' in [%s] (first set on line %d); keep one",
		    name, sr_js_section_names[p->section], p->key_line[i]);
		return 1;
	}
	p->key_line[i] = p->line;
	if (p->line_bad)
		return 1;	/* set, so not "missing", but its value is not text */
	p->raw[i] = sr_strdup(value);
	if (sr_js_keys[i].type == T_COMMAND)
		p->command_comment = p->line_comment;
	if (sr_js_keys[i].type == T_SHELL)
		p->setup_comment = p->line_comment;
	sr_js_set_value(p, &sr_js_keys[i], value);
	return 1;
}

/* ------------------------------------------------------------------ */
/* The line reader */

/* inih's rule for where a token ends: at one of chars, or at an inline
 * comment (';' or '#' after a blank: SR_INI_COMMENTS). Returns the
 * position, or e if none. */
static const char *
find_chars_or_comment(const char *s, const char *e, const char *chars)
{
	int was_space = 0;

	for (; s < e; s++) {
		if (chars != NULL && strchr(chars, *s) != NULL)
			return s;
		if (was_space && strchr(SR_INI_COMMENTS, *s) != NULL)
			return s;
		was_space = isspace((unsigned char)*s);
	}
	return e;
}

/* A "[name]" line: sets p->section. Returns 0 if inih must not see it. */
static int
section_header(struct sr_js_parse *p, const char *a, const char *e)
{
	char b[SR_JS_SHOW_MAX + 4], list[200] = "", name[64];
	const char *close = find_chars_or_comment(a + 1, e, "]"), *n, *ne, *rest;
	const char *suggest = NULL;
	int i;

	p->section = SEC_UNKNOWN;
	if (close == e || *close != ']') {
		sr_js_error(p, p->line, "section header %s has no closing ']'",
		    sr_js_show_span(a, (size_t)(e - a), b));
		return 0;
	}
	for (rest = close + 1; rest < e && isspace((unsigned char)*rest); rest++)
		;
	if (rest < e && *rest != ';' && *rest != '#') {
		sr_js_error(p, p->line, "text after the section header: %s; put comments after ';' "
		    "or '#'",
		    sr_js_show_span(rest, (size_t)(e - rest), b));
		return 1;
	}
	for (n = a + 1; n < close && isspace((unsigned char)*n); n++)
		;
	for (ne = close; ne > n && isspace((unsigned char)ne[-1]); ne--)
		;
	if (n == ne) {
		sr_js_error(p, p->line, "empty section name []; valid sections: [job], [env], "
		    "[resources], [checkpoint], [provider], [retry], [sweep], [data]");
		return 1;
	}
	for (i = 0; i < NSECTIONS; i++) {
		if (strlen(sr_js_section_names[i]) == (size_t)(ne - n) &&
		    memcmp(sr_js_section_names[i], n, (size_t)(ne - n)) == 0) {
			p->section = i;
			if (i == SEC_SWEEP) {
				p->sweep_header_line = sr_reallocarray(p->sweep_header_line,
				    p->nsweep_headers + 1, sizeof *p->sweep_header_line);
				p->sweep_header_line[p->nsweep_headers++] = p->line;
			}
			return 1;
		}
	}
	snprintf(name, sizeof name, "%.*s", (int)(ne - n), n);
	for (i = 0; i < NSECTIONS; i++) {
		if (suggest == NULL && (size_t)(ne - n) < sizeof name - 1 &&
		    sr_similar_close(name, sr_js_section_names[i], SR_SIMILAR_FOLD_CASE))
			suggest = sr_js_section_names[i];
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s[%s]",
		    i ? ", " : "", sr_js_section_names[i]);
	}
	if (suggest != NULL)
		sr_js_error(p, p->line, "unknown section [%s]; did you mean [%s]? Valid sections: %s",
		    sr_js_show_span(n, (size_t)(ne - n), b), suggest, list);
	else
		sr_js_error(p, p->line, "unknown section [%s]; valid sections: %s",
		    sr_js_show_span(n, (size_t)(ne - n), b), list);
	return 1;
}

/*
 * Vet one line (a..e, without its newline) the way inih will read it.
 * Returns 1 to pass it to inih, 0 when it was bad (and reported).
 */
static int
vet_line(struct sr_js_parse *p, const char *a, const char *e, int indented)
{
	char b[SR_JS_SHOW_MAX + 4];
	const char *sep, *cmt;

	while (e > a && isspace((unsigned char)e[-1]))
		e--;
	if (a == e || *a == ';' || *a == '#')
		return 1;
	if (*a == '[')
		return section_header(p, a, e);
	sep = find_chars_or_comment(a, e, "=:");
	/* Only a " ;" comment can cut a shell command short by surprise: after
	 * " #" the shell would have ignored the rest too. */
	if (sep != e && (*sep == '=' || *sep == ':')) {
		cmt = find_chars_or_comment(sep + 1, e, NULL);
		p->line_comment = cmt != e && *cmt == ';';
	}
	if (sep == e || (*sep != '=' && *sep != ':')) {
		if (indented)
			sr_js_error(p, p->line, "expected key = value: %s (a value cannot continue "
			    "on an indented line; put it on one line)", sr_js_show_span(a, (size_t)(e - a), b));
		else
			sr_js_error(p, p->line, "expected key = value or [section]: %s",
			    sr_js_show_span(a, (size_t)(e - a), b));
		return 0;
	}
	return 1;
}

/*
 * Check that the line (from its first byte, raw, to e; a: its first
 * non-blank) is text, and report the first fault with where it is: a
 * value (naming its key), a key name, a section header or a comment.
 * Returns 0 when the line may go on to be vetted (the fault, if any, is in
 * a comment, or in a value: then p->line_bad), -1 when inih must not see
 * it.
 */
static int
check_text(struct sr_js_parse *p, const char *line_start, const char *raw, const char *a,
    const char *e)
{
	char what[80], place[SR_JS_SHOW_MAX + 20], b[SR_JS_SHOW_MAX + 4];
	const char *bad, *sep, *ke, *cmt;
	enum sr_js_text t;
	size_t off, len;
	int r = -1;

	if (e > raw && e[-1] == '\r')
		e--;	/* a CRLF line end */
	if ((t = sr_js_text_scan(raw, (size_t)(e - raw), &off, &len)) == SR_TEXT_OK)
		return 0;
	bad = raw + off;
	if (bad < a) {
		snprintf(place, sizeof place, "the indentation");
		r = 0;		/* which goes anyway */
	} else if (*a == ';' || *a == '#')
		snprintf(place, sizeof place, "a comment");
	else if (*a == '[') {
		cmt = find_chars_or_comment(a + 1, e, "]");
		if (cmt < e && *cmt == ']')
			cmt = find_chars_or_comment(cmt + 1, e, NULL);
		snprintf(place, sizeof place, "%s", bad >= cmt ? "a comment" : "the section header");
		if (bad < cmt)
			p->section = SEC_UNKNOWN;	/* its keys are not checked */
		else
			r = 0;
	} else if ((sep = find_chars_or_comment(a, e, "=:")) == e || (*sep != '=' && *sep != ':') ||
	    bad < sep)
		snprintf(place, sizeof place, "the key name");
	else if (bad >= (cmt = find_chars_or_comment(sep + 1, e, NULL))) {
		snprintf(place, sizeof place, "a comment");
		r = 0;
	} else {
		for (ke = sep; ke > a && isspace((unsigned char)ke[-1]); ke--)
			;
		snprintf(place, sizeof place, "%s%s", p->section == SEC_ENV ? "[env] " :
		    p->section == SEC_SWEEP ? "[sweep] " :
		    p->section == SEC_DATA ? "[data] " : "",
		    sr_js_show_span(a, (size_t)(ke - a), b));
		p->line_bad = 1;
		r = 0;
	}
	sr_js_error(p, p->line, "%s: %s at byte %zu of the line; %s", place,
	    sr_js_text_describe(t, bad, len, what, sizeof what), (size_t)(bad - line_start) + 1,
	    sr_js_text_fix(t));
	return r;
}

/* inih's reader: one line of the file per call, vetted; see the top. */
static char *
read_line(char *str, int num, void *stream)
{
	struct sr_js_parse *p = stream;
	const char *a, *e, *raw, *line_start = p->buf + p->off;
	int indented = 0;

	p->line_bad = 0;
	if (!sr_ini_next_line(p->buf, p->len, &p->off, &p->line, &a, &e))
		return NULL;
	raw = a;
	/* Leading blanks go: inih would take an indented line as the
	 * continuation of the previous value, which is a trap in this format. */
	while (a < e && isspace((unsigned char)*a)) {
		a++;
		indented = 1;
	}
	if (memchr(a, '\0', (size_t)(e - a)) != NULL) {
		sr_js_error(p, p->line, "the line contains a NUL byte; a job file is text");
		a = e;
	} else if (e - a > LINE_MAX_LEN || e - a > num - 2) {
		sr_js_error(p, p->line, "the line is longer than %d characters",
		    e - a > LINE_MAX_LEN ? LINE_MAX_LEN : num - 2);
		a = e;
	} else if (check_text(p, line_start, raw, a, e) == -1 || !vet_line(p, a, e, indented))
		a = e;
	memcpy(str, a, (size_t)(e - a));
	str[e - a] = '\n';
	str[e - a + 1] = '\0';
	return str;
}

/* ------------------------------------------------------------------ */
/* Loading */

static void
set_defaults(struct sr_jobspec *js)
{
	js->request_signal = SIGUSR1;
	js->nodes_min = js->nodes_max = 1;
	js->write_timeout = 600;
	js->margin = 5;
	js->ckpt.keep = 3;
	js->ckpt.chunk_size = 0;	/* the save chooses (ckpt/chunksize.h) */
	js->ckpt.level = 1;
	js->provider.name = sr_strdup("auto");
	js->provider.window = 30;
	js->provider.grace = 30;
	js->provider.seed = 1;
	js->provider.trace_scale = 1;
	js->provider.max_preemptions = -1;
	js->early_checkpoint = 1;
	js->ship_workdir = 1;
	js->workdir_max = SR_JOBSPEC_WORKDIR_MAX;
	js->backoff = 1;
	js->backoff_max = 300;
	js->env = sr_calloc(1, sizeof *js->env);
}

/* The index of a key in sr_js_keys[]. */
static size_t
key_index(const char *name, enum section sec)
{
	size_t i;

	for (i = 0; i < sr_js_nkeys; i++) {
		if (sr_js_keys[i].sec == sec && strcmp(sr_js_keys[i].name, name) == 0)
			return i;
	}
	sr_fatal("jobspec: no key %s", name);
}

/* Added to a command's error when a " ;" cut the line: that is often why. */
#define COMMENT_NOTE " (note: a ';' after a blank starts a comment, which cut this line; " \
	"write \\; or ';' for a literal semicolon)"

/* The keys of the cloud providers go with the providers they serve (the
 * provider table says which take which): one that would have no effect is
 * an error, so a typo in name does not silently drop it. */
static void
check_cloud_keys(struct sr_js_parse *p)
{
	const struct sr_provider_conf *pc = &p->js->provider;
	size_t ke = key_index("endpoint", SEC_PROVIDER), kp = key_index("poll", SEC_PROVIDER);
	size_t k6 = key_index("ipv6", SEC_PROVIDER);
	struct sr_provider_kind kind;
	char b[SR_JS_SHOW_MAX + 4], names[128];

	if (sr_provider_kind(pc->name, &kind) == -1)
		return;		/* the name has its error already */
	sr_provider_names(SR_PROVIDER_KEY_ENDPOINT, names, sizeof names);
	if (p->key_line[ke] != 0 && pc->endpoint != NULL && !(kind.keys & SR_PROVIDER_KEY_ENDPOINT))
		sr_js_error(p, p->key_line[ke], "endpoint = %s: only for name = %s "
		    "(name is %s); name the cloud whose metadata service it is, or remove endpoint",
		    sr_js_show(pc->endpoint, b), names, pc->name);
	sr_provider_names(SR_PROVIDER_KEY_POLL, names, sizeof names);
	if (p->key_line[kp] != 0 && pc->poll > 0 && !(kind.keys & SR_PROVIDER_KEY_POLL))
		sr_js_error(p, p->key_line[kp], "poll = %s: only for name = %s "
		    "(name is %s%s); remove poll", sr_js_show(p->raw[kp], b), names, pc->name,
		    kind.poll_note);
	sr_provider_names(SR_PROVIDER_KEY_IPV6, names, sizeof names);
	if (p->key_line[k6] != 0 && pc->ipv6 && !(kind.keys & SR_PROVIDER_KEY_IPV6))
		sr_js_error(p, p->key_line[k6], "ipv6 = %s: only for name = %s (name is "
		    "%s); remove ipv6", sr_js_show(p->raw[k6], b), names, pc->name);
	else if (p->key_line[k6] != 0 && pc->ipv6 && pc->endpoint != NULL)
		sr_js_error(p, p->key_line[k6], "ipv6 = %s and endpoint = %s both choose the "
		    "address of the metadata service; keep one", sr_js_show(p->raw[k6], b),
		    sr_js_show(pc->endpoint, (char[SR_JS_SHOW_MAX + 4]){ 0 }));
}

/* A notice window no longer than the margin leaves no time for the
 * notice's checkpoint: every one would be skipped. The provider says which
 * key sets its window (local's window, signal's grace); the clouds set
 * theirs. */
static void
check_window(struct sr_js_parse *p)
{
	const struct sr_jobspec *js = p->js;
	struct sr_provider_kind kind;
	size_t kw, km = key_index("margin", SEC_CHECKPOINT);
	char wb[32], mb[32];
	double w;

	if (sr_provider_kind(js->provider.name, &kind) == -1 || kind.window_key == NULL)
		return;
	kw = key_index(kind.window_key, SEC_PROVIDER);
	w = *(const double *)((const char *)js + sr_js_keys[kw].off);
	if (w <= js->margin)
		sr_js_error(p, p->key_line[kw] ? p->key_line[kw] : p->key_line[km],
		    "%s = %s is not longer than margin = %s%s: a notice would leave no time "
		    "for a checkpoint; make %s longer or lower margin in [checkpoint]",
		    kind.window_key, sr_fmt_duration(w, wb, sizeof wb),
		    sr_fmt_duration(js->margin, mb, sizeof mb),
		    p->key_line[km] ? "" : " (the default)", kind.window_key);
}

/* procs against gpus and launch: who decides how many processes start; nodes
 * against launch. */
static void
check_resources(struct sr_js_parse *p)
{
	const struct sr_jobspec *js = p->js;
	size_t kp = key_index("procs", SEC_RESOURCES), kg = key_index("gpus", SEC_RESOURCES);
	size_t kn = key_index("nodes", SEC_RESOURCES);
	char b[SR_JS_SHOW_MAX + 4], b2[SR_JS_SHOW_MAX + 4];

	if (p->key_line[kn] != 0 && js->nodes_max > 1 && js->launch == SR_LAUNCH_ONCE)
		sr_js_error(p, p->key_line[kn], "nodes = %s with launch = once: spotrun starts "
		    "the ranks of every node of a gang and gives them torchrun's variables; set "
		    "launch = ranks, or remove nodes (one machine)", sr_js_show(p->raw[kn], b));
	if (p->key_line[kp] == 0 || js->procs_max == 0)
		return;
	if (js->launch == SR_LAUNCH_ONCE && js->procs_max > 1)
		sr_js_error(p, p->key_line[kp], "procs = %s with launch = once: once starts one "
		    "process, the job's own launcher (torchrun, mpirun) starts the others; remove "
		    "procs, or set launch = ranks to have spotrun start them",
		    sr_js_show(p->raw[kp], b));
	else if (js->launch == SR_LAUNCH_RANKS && js->gpus_max > 0)
		sr_js_error(p, p->key_line[kp], "procs = %s with gpus = %s: with GPUs spotrun "
		    "starts one process per GPU; remove procs (or set launch = once and start the "
		    "processes yourself)", sr_js_show(p->raw[kp], b),
		    sr_js_show(p->raw[kg], b2));
}

/* Checks that need the whole file, and the defaults that depend on keys. */
static void
finish(struct sr_js_parse *p)
{
	struct sr_jobspec *js = p->js;
	char err[SR_ERRMAX], b[SR_JS_SHOW_MAX + 4], b2[SR_JS_SHOW_MAX + 4];
	size_t kn = key_index("name", SEC_JOB), kc = key_index("command", SEC_JOB);
	size_t ks = key_index("store", SEC_CHECKPOINT), kb = key_index("backoff", SEC_RETRY);
	size_t kbm = key_index("backoff_max", SEC_RETRY);
	enum sr_trace_status tr;
	int r;

	/* A key that is there but bad has its error already. */
	if (p->key_line[kn] == 0)
		sr_js_error(p, 0, "missing required key 'name' in [job]; add e.g. name = llama-lora");
	if (p->key_line[kc] == 0)
		sr_js_error(p, 0, "missing required key 'command' in [job]; "
		    "add e.g. command = python3 train.py");
	if (js->workdir == NULL)
		js->workdir = sr_strdup(js->dir);
	if (js->command != NULL && js->shell && p->command_comment)
		/* "cd x ; ./run" would silently run only "cd x". */
		sr_js_error(p, p->key_line[kc], "command = %s: a ';' after a blank starts a "
		    "comment in a job file, so the shell would get only this; put no blank "
		    "before ';' (e.g. cd data; ./run), or put the comment on a line of its own",
		    sr_js_show(js->command, b));
	else if (js->command != NULL && js->nsweep == 0) {	/* a sweep's: each trial's */
		r = sr_js_argv(js->command, js->shell, &js->argv, err);
		if (r == -1)
			sr_js_error(p, p->key_line[kc], "command: %s%s", err,
			    p->command_comment ? COMMENT_NOTE : "");
		else if (r == -2)
			sr_js_error(p, p->key_line[kc], "command = %s: the program name is empty; %s%s",
			    sr_js_show(js->command, b), sr_js_keys[kc].hint,
			    p->command_comment ? COMMENT_NOTE : "");
	}
	if (js->setup != NULL && p->setup_comment)
		/* as for command: "pip install x ; ./fetch" would run only pip */
		sr_js_error(p, p->key_line[key_index("setup", SEC_JOB)], "setup = %s: a ';' after a "
		    "blank starts a comment in a job file, so the shell would get only this; put no "
		    "blank before ';' (e.g. pip install -r requirements.txt; ./fetch-data), or put "
		    "the comment on a line of its own", sr_js_show(js->setup, b));
	/* (raw is NULL when the value was not text: that error is said) */
	if (js->image == NULL && p->raw[key_index("container_runtime", SEC_JOB)] != NULL)
		sr_js_error(p, p->key_line[key_index("container_runtime", SEC_JOB)],
		    "container_runtime = %s without image: it names the runtime that runs the "
		    "job's image; add image = REF to [job], or remove container_runtime",
		    sr_js_show(p->raw[key_index("container_runtime", SEC_JOB)], b));
	/* In a container the request signal would reach the job through the
	 * runtime's client, which passes on every signal: spotrun cannot see
	 * whether the job catches it (SIGNALS in spotrun(1)), and one that
	 * does not would die of it. So the request file only, unless asked. */
	if (js->image != NULL && p->key_line[key_index("signal", SEC_CHECKPOINT)] == 0)
		js->request_signal = 0;
	if (js->local_dir == NULL && js->name != NULL)
		js->local_dir = sr_asprintf("%s/.spotrun/%s",
		    strcmp(js->workdir, "/") == 0 ? "" : js->workdir, js->name);
	if (js->store == NULL && p->key_line[ks] == 0)
		js->store = sr_default_store();
	js->store_line = p->key_line[ks];

	if (js->backoff > js->backoff_max && p->key_line[kbm] != 0)
		sr_js_error(p, p->key_line[kbm], "backoff_max = %s is shorter than backoff = %s; "
		    "make backoff_max at least backoff", sr_js_show(p->raw[kbm], b),
		    p->raw[kb] != NULL ? sr_js_show(p->raw[kb], b2) : "1s (the default)");
	else if (js->backoff > js->backoff_max)
		sr_js_error(p, p->key_line[kb], "backoff = %s is longer than backoff_max "
		    "(5m, the default); lower backoff or set backoff_max", sr_js_show(p->raw[kb], b));

	check_resources(p);

	if (js->provider.name != NULL) {
		check_window(p);
		check_cloud_keys(p);
	}
	if (js->provider.trace != NULL &&
	    (tr = sr_trace_check(js->provider.trace, js->provider.trace_start,
	    js->nodes_max > 1 ? js->nodes_max : 1, err)) >=
	    SR_TRACE_BAD_FILE) {	/* one that cannot be read yet is the run's to find */
		size_t kt = key_index(tr == SR_TRACE_BAD_START ? "trace_start" : "trace", SEC_PROVIDER);
		sr_js_error(p, p->key_line[kt], "%s = %s: %s", sr_js_keys[kt].name,
		    sr_js_show(p->raw[kt], b), err);
	}

	if (js->nsweep > 0)
		sr_js_check_sweep(p);
	if (js->ndata > 0)
		sr_js_check_data(p);
}

/* Sort errors by line (stable), those tied to no line last. */
static void
sort_errors(struct sr_jobspec_errors *e)
{
	struct sr_jobspec_error tmp;
	size_t i, j;

	for (i = 1; i < e->n; i++) {
		tmp = e->v[i];
		for (j = i; j > 0; j--) {
			unsigned prev = (unsigned)e->v[j - 1].line - 1, cur = (unsigned)tmp.line - 1;
			if (prev <= cur)	/* line 0 wraps to UINT_MAX: last */
				break;
			e->v[j] = e->v[j - 1];
		}
		e->v[j] = tmp;
	}
}

/* Read the whole file into *buf (NUL-terminated); an error on failure. */
static int
read_job_file(const char *path, char **buf, size_t *len, struct sr_js_parse *p)
{
	/* The kind first, and O_NONBLOCK: a FIFO without a writer must not
	 * hang `check` (a socket cannot be opened at all). */
	struct stat sb;
	int fd = stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) ? -2 :
	    open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	FILE *f;
	char *b;
	size_t n;

	if (fd == -2 || (fd != -1 && fstat(fd, &sb) == 0 && !S_ISREG(sb.st_mode))) {
		sr_js_error(p, 0, "is %s, not a regular file; a job file is a short text file",
		    sr_file_kind(sb.st_mode));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (fd == -1 || (f = fdopen(fd, "r")) == NULL) {
		sr_js_error(p, 0, "cannot open: %s", strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	b = sr_malloc(FILE_MAX + 2);
	n = fread(b, 1, FILE_MAX + 1, f);
	if (ferror(f)) {
		sr_js_error(p, 0, "cannot read: %s", strerror(errno));
		fclose(f);
		free(b);
		return -1;
	}
	fclose(f);
	if (n > FILE_MAX) {
		sr_js_error(p, 0, "larger than %d bytes; a job file is a short text file", FILE_MAX);
		free(b);
		return -1;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

/* The absolute directory holding path. */
static char *
job_dir(const char *path)
{
	char *copy = sr_strdup(path), *dir, *abs;

	dir = dirname(copy);
	abs = realpath(dir, NULL);
	free(copy);
	return abs;
}

/* Parse the file in p->buf (p->len bytes) into p->js, whose path and dir
 * are set; every error goes to p->errs. */
static void
parse(struct sr_js_parse *p)
{
	int r;

	set_defaults(p->js);
	p->js->mode = sr_strdup(p->names->methods[0]);
	/* inih's line buffer holds any line we accept; no multi-line values
	 * (the reader also strips indentation, so this holds with any build). */
	r = sr_ini_parse_stream(read_line, p, on_key, p, LINE_MAX_LEN, SR_INI_COMMENTS);
	if (r == -2)
		sr_fatal("jobspec: out of memory in inih");
	if (r > 0 && p->errs->n == 0)	/* the reader should have caught it */
		sr_js_error(p, r, "cannot parse this line");
	/* Where the keys are, for the sweep's checks and sweep.c; js owns it. */
	p->js->text_len = p->len;
	p->js->name_line = p->key_line[key_index("name", SEC_JOB)];
	p->js->command_line = p->key_line[key_index("command", SEC_JOB)];
	p->js->env_line = p->env_line;
	p->js->sweep_header_line = p->sweep_header_line;
	p->js->nsweep_headers = p->nsweep_headers;
	p->env_line = NULL;
	p->sweep_header_line = NULL;
	finish(p);
}

/* The end of a load: the errors capped and sorted, the parse's state
 * freed; *out gets the spec when there was no error. */
static int
conclude(struct sr_js_parse *p, struct sr_jobspec **out, struct sr_jobspec_errors *local)
{
	struct sr_jobspec_errors *errs = p->errs;
	size_t i;

	if (p->nerrs_dropped > 0) {
		errs->n = SR_JS_ERRORS_MAX - 1;
		sr_js_error(p, 0, "too many errors (%zu more not shown); fix these first",
		    p->nerrs_dropped + 1);
	}
	sort_errors(errs);
	for (i = 0; i < sr_js_nkeys; i++)
		free(p->raw[i]);
	free(p->env_index);
	free(p->env_line);
	free(p->sweep_header_line);
	if (errs->n > 0) {
		sr_jobspec_free(p->js);
		if (errs == local)
			sr_jobspec_errors_free(local);
		return -1;
	}
	*out = p->js;
	return 0;
}

/* What load and parse share: errs (or local) made empty, p set up. */
static struct sr_jobspec_errors *
begin(struct sr_js_parse *p, struct sr_jobspec **out, struct sr_jobspec_errors *errs,
    struct sr_jobspec_errors *local)
{
	*out = NULL;
	if (errs == NULL)
		errs = local;
	errs->v = NULL;
	errs->n = 0;
	memset(p, 0, sizeof *p);
	p->errs = errs;
	p->section = SEC_NONE;
	return errs;
}

/* A new spec for p to fill, owning the file's text buf (len bytes). */
static void
new_spec(struct sr_js_parse *p, const char *path, char *buf, size_t len,
    const struct sr_jobspec_names *names)
{
	if (names == NULL || names->methods[0] == NULL)
		sr_fatal("jobspec: parsed with no checkpoint method to name");
	p->buf = buf;
	p->len = len;
	p->js = sr_calloc(1, sizeof *p->js);
	p->js->names = *names;
	p->names = &p->js->names;
	p->js->path = sr_strdup(path);
	p->js->text = buf;
}

int
sr_jobspec_load(const char *path, const struct sr_jobspec_names *names, struct sr_jobspec **out,
    struct sr_jobspec_errors *errs)
{
	struct sr_jobspec_errors local = { NULL, 0 };
	struct sr_js_parse p;
	char *buf = NULL;
	size_t len;

	begin(&p, out, errs, &local);
	if (read_job_file(path, &buf, &len, &p) == -1)
		return conclude(&p, out, &local);
	new_spec(&p, path, buf, len, names);
	if ((p.js->dir = job_dir(path)) == NULL)
		sr_js_error(&p, 0, "cannot find the job file's directory: %s", strerror(errno));
	else
		parse(&p);
	return conclude(&p, out, &local);
}

int
sr_jobspec_parse(const char *path, const char *dir, const char *text, size_t len,
    const struct sr_jobspec_names *names, struct sr_jobspec **out,
    struct sr_jobspec_errors *errs)
{
	struct sr_jobspec_errors local = { NULL, 0 };
	struct sr_js_parse p;
	char *buf;

	begin(&p, out, errs, &local);
	if (len > FILE_MAX) {
		sr_js_error(&p, 0, "larger than %d bytes; a job file is a short text file", FILE_MAX);
		return conclude(&p, out, &local);
	}
	buf = sr_malloc(len + 1);
	memcpy(buf, text, len);
	buf[len] = '\0';
	new_spec(&p, path, buf, len, names);
	p.js->dir = dir != NULL ? sr_js_absolute_path("/", dir) : realpath(".", NULL);
	if (p.js->dir == NULL)
		sr_js_error(&p, 0, "cannot find the current directory: %s", strerror(errno));
	else
		parse(&p);
	return conclude(&p, out, &local);
}

void
sr_jobspec_free(struct sr_jobspec *js)
{
	size_t i, j;

	if (js == NULL)
		return;
	free(js->path);
	free(js->dir);
	free(js->name);
	free(js->command);
	sr_words_free(js->argv);
	free(js->workdir);
	free(js->setup);
	free(js->image);
	sr_words_free(js->env);
	free(js->gpu_type);
	free(js->store);
	free(js->mode);
	free(js->local_dir);
	free((char *)js->provider.name);
	free((char *)js->provider.endpoint);
	free((char *)js->provider.notice_file);
	free((char *)js->provider.trace);
	free(js->on_exit_codes);
	for (i = 0; i < js->nsweep; i++) {
		free(js->sweep[i].key);
		for (j = 0; j < js->sweep[i].nvalues; j++)
			free(js->sweep[i].values[j]);
		free(js->sweep[i].values);
	}
	free(js->sweep);
	for (i = 0; i < js->ndata; i++) {
		free(js->data[i].dest);
		free(js->data[i].url);
	}
	free(js->data);
	free(js->text);
	free(js->env_line);
	free(js->sweep_header_line);
	free(js);
}

void
sr_jobspec_errors_print(const char *path, const struct sr_jobspec_errors *errs, void *fp)
{
	size_t i;

	for (i = 0; i < errs->n; i++) {
		if (errs->v[i].line > 0)
			fprintf(fp, "%s:%d: %s\n", path, errs->v[i].line, errs->v[i].msg);
		else
			fprintf(fp, "%s: %s\n", path, errs->v[i].msg);
	}
}

void
sr_jobspec_errors_free(struct sr_jobspec_errors *errs)
{
	if (errs == NULL)
		return;
	free(errs->v);
	errs->v = NULL;
	errs->n = 0;
}
