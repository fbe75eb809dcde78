/*
 * t-sweep.c: a sweep file's trials (runner/sweep.c) and the parser's checks
 * of sweep files (runner/jobspec-sweep.c):
 *  - expansion: the number of trials, the grid's order (the first
 *    parameter slowest), each trial's values, the longest trial;
 *  - names NAME.NNN padded to the width of the count, within 64 characters;
 *  - substitution of ${name}, the $${ escape, and its errors, exact;
 *  - limits: trials, parameters, name and value lengths, with the exact
 *    messages at the file's lines;
 *  - ids: the SHA-256 of the file, the same for the same bytes only;
 *  - the trials' job files: an exact one, deterministic, and each trial of
 *    several sweeps parses back to the trial's spec, field by field.
 */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jobspec.h"
#include "sweep.h"
#include "util.h"
#include "words.h"
#include "tap.h"
#include "jobspec-util.h"
#include "mdemu-util.h"

#define JOB "[job]\nname = t\ncommand = true\n"

/* Parse text as DIR/job.ini; *printed gets the errors as `spotrun check`
 * prints them ("" when none). */
static struct sr_jobspec *
parse(const char *text, char **printed)
{
	struct sr_jobspec_errors errs = { NULL, 0 };
	struct sr_jobspec *js = NULL;
	size_t len;
	FILE *mem = open_memstream(printed, &len);

	sr_jobspec_parse("job.ini", "/jobs", text, strlen(text), runner_names(), &js, &errs);
	sr_jobspec_errors_print("job.ini", &errs, mem);
	fclose(mem);
	sr_jobspec_errors_free(&errs);
	return js;
}

/* text must be refused with exactly want. */
static void
rejected(const char *text, const char *want, const char *what)
{
	char *printed;
	struct sr_jobspec *js = parse(text, &printed);

	ok(js == NULL, "%s: rejected", what);
	is_str(printed, want, "%s: exact messages", what);
	free(printed);
	sr_jobspec_free(js);
}

static struct sr_jobspec *
parse_good(const char *text, const char *what)
{
	char *printed;
	struct sr_jobspec *js = parse(text, &printed);

	if (!ok(js != NULL, "%s: accepted", what))
		tap_diag("%s", printed);
	free(printed);
	return js;
}

/* Sweeps, how many trials they make, and the name of one trial. */
static const struct {
	const char *text;
	size_t count, t;
	const char *want;
} names[] = {
	{ JOB "[sweep]\nlr = 0.1, 0.01\nseed = 1..3\n", 6, 0, "t.1" },
	{ JOB "[sweep]\nlr = 0.1, 0.01\nseed = 1..3\n", 6, 5, "t.6" },
	{ JOB "[sweep]\na = 1..10\n", 10, 0, "t.01" },
	{ JOB "[sweep]\na = 1..10\n", 10, 9, "t.10" },
	{ JOB "[sweep]\na = 1..100\nb = x\n", 100, 6, "t.007" },	/* one value: x 1 */
	{ JOB "[sweep]\nonly = x\n", 1, 0, "t.1" },
	{ "[job]\nname = a234567890123456789012345678901234567890123456789012345678901\n"
	  "command = x\n[sweep]\ns = 1..10\n", 10, 9,
	  "a234567890123456789012345678901234567890123456789012345678901.10" },	/* 64 */
};

static void
test_grid(void)
{
	struct sr_jobspec *js;
	char name[SR_JOBSPEC_NAME_MAX + 1], err[SR_ERRMAX], got[400] = "";
	size_t t, i;

	js = parse_good(JOB "[sweep]\nlr = 0.1, 0.01\nseed = 1..3\n", "a 2 x 3 grid");
	if (js == NULL)
		return;
	is_int(sr_sweep_count(js), 6, "2 x 3: 6 trials");
	for (t = 0; t < 6; t++)
		snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s/%s", t ? " " : "",
		    sr_sweep_value(js, t, 0), sr_sweep_value(js, t, 1));
	is_str(got, "0.1/1 0.1/2 0.1/3 0.01/1 0.01/2 0.01/3",
	    "the grid in order: the first parameter slowest, the last fastest");
	sr_jobspec_free(js);
	for (i = 0; i < SR_ARRAY_LEN(names); i++) {
		js = parse_good(names[i].text, names[i].want);
		if (js == NULL)
			continue;
		is_int(sr_sweep_count(js), names[i].count, "%s: %zu trials", names[i].want,
		    names[i].count);
		name[0] = '\0';
		ok(sr_sweep_trial_name(js, names[i].t, name, err) == 0, "%s: named", names[i].want);
		is_str(name, names[i].want, "trial %zu of %zu: its name, padded to the count's "
		    "width", names[i].t + 1, names[i].count);
		sr_jobspec_free(js);
	}
	js = parse_good(JOB, "no [sweep]");
	if (js != NULL)
		is_int(sr_sweep_count(js), 0, "a file without [sweep] has 0 trials");
	sr_jobspec_free(js);

	js = parse_good(JOB "[sweep]\na = 1, 22, 3\nb = xx, y\nc = 1..3, 1000\n", "longest");
	if (js != NULL) {
		t = sr_sweep_longest(js);
		ok(strcmp(sr_sweep_value(js, t, 0), "22") == 0 &&
		    strcmp(sr_sweep_value(js, t, 1), "xx") == 0 &&
		    strcmp(sr_sweep_value(js, t, 2), "1000") == 0,
		    "the longest trial has each parameter's longest value (trial %zu)", t + 1);
	}
	sr_jobspec_free(js);
}

static const struct {
	const char *in, *want;	/* want: the result, or the error */
	int ok;
} substs[] = {
	{ "train --lr ${lr} --seed ${seed}", "train --lr 0.01 --seed 7", 1 },
	{ "${lr}${seed}${lr}", "0.017" "0.01", 1 },
	{ "--tag=${lr}_x", "--tag=0.01_x", 1 },
	{ "echo $${lr} $${", "echo ${lr} ${", 1 },
	{ "echo $$ $HOME $ $$$ cost$", "echo $$ $HOME $ $$$ cost$", 1 },
	{ "a$${lr}b${lr}", "a${lr}b0.01", 1 },
	{ "", "", 1 },
	{ "${lrr}", "${lrr} is not a parameter of [sweep] (lr, seed); write $${lrr} for a literal "
	  "${lrr}", 0 },
	{ "${LR}", "${LR} is not a parameter of [sweep] (lr, seed); write $${LR} for a literal "
	  "${LR}", 0 },
	{ "x ${1}", "${1} at character 3 is not a reference to a parameter; write ${NAME} with a "
	  "name from [sweep] (lr, seed), or $${ for a literal ${", 0 },
	{ "${}", "${} at character 1 is not a reference to a parameter; write ${NAME} with a "
	  "name from [sweep] (lr, seed), or $${ for a literal ${", 0 },
	{ "${lr", "${lr at character 1 is not a reference to a parameter; write ${NAME} with a "
	  "name from [sweep] (lr, seed), or $${ for a literal ${", 0 },
	{ "${HOME:-/tmp}", "${HOME: at character 1 is not a reference to a parameter; write "
	  "${NAME} with a name from [sweep] (lr, seed), or $${ for a literal ${", 0 },
	{ "${ lr }", "${  at character 1 is not a reference to a parameter; write ${NAME} with a "
	  "name from [sweep] (lr, seed), or $${ for a literal ${", 0 },
};

static void
test_subst(void)
{
	struct sr_jobspec *js;
	char err[SR_ERRMAX], *out, *big;
	size_t i, t;

	js = parse_good(JOB "[sweep]\nlr = 0.1, 0.01\nseed = 5..7\n", "substitution's sweep");
	if (js == NULL)
		return;
	t = 5;	/* lr = 0.01, seed = 7 */
	for (i = 0; i < SR_ARRAY_LEN(substs); i++) {
		out = NULL;
		if (substs[i].ok) {
			if (ok(sr_sweep_subst(js, t, substs[i].in, &out, err) == 0,
			    "subst [%s]", substs[i].in))
				is_str(out, substs[i].want, "subst [%s]: result", substs[i].in);
			else
				tap_diag("%s", err);
			ok(sr_sweep_subst(js, SR_SWEEP_CHECK, substs[i].in, NULL, err) == 0,
			    "subst [%s]: the check alone passes", substs[i].in);
		} else {
			ok(sr_sweep_subst(js, t, substs[i].in, &out, err) == -1 && out == NULL,
			    "subst [%s] fails, *out untouched", substs[i].in);
			is_str(err, substs[i].want, "subst [%s]: message", substs[i].in);
		}
		free(out);
	}
	sr_jobspec_free(js);

	/* A result longer than a line of a job file. */
	js = parse_good(JOB "[sweep]\nv = 0123456789abcdefghij\n", "a sweep of a long value");
	if (js == NULL)
		return;
	big = sr_malloc(SR_JOBSPEC_LINE_MAX);
	for (i = 0; i + 4 < SR_JOBSPEC_LINE_MAX; i += 4)
		memcpy(big + i, "${v}", 4);
	big[i] = '\0';
	out = NULL;
	err[0] = '\0';
	ok(sr_sweep_subst(js, 0, big, &out, err) == -1 && out == NULL,
	    "subst: a result over %d bytes fails", SR_JOBSPEC_LINE_MAX);
	is_str(err, "longer than 65536 bytes once the values are substituted",
	    "subst: too long: message");
	ok(sr_sweep_subst(js, SR_SWEEP_CHECK, big, NULL, err) == 0,
	    "subst: the check of references alone does not expand");
	free(big);
	sr_jobspec_free(js);
}

/* Files a sweep's checks refuse, and exactly what `spotrun check` prints. */
static const struct {
	const char *text, *want;
} bad_sweeps[] = {
	{ "[job]\nname = t\ncommand = train --lr ${lrr}\n[sweep]\nlr = 1, 2\n",
	  "job.ini:3: command: ${lrr} is not a parameter of [sweep] (lr); write $${lrr} for a "
	  "literal ${lrr}\n" },
	{ JOB "[env]\nA = ${x}\nB = ok\nC = ${HOME:-x}\n[sweep]\nlr = 1\n",
	  "job.ini:5: [env] A: ${x} is not a parameter of [sweep] (lr); write $${x} for a literal "
	  "${x}\n"
	  "job.ini:7: [env] C: ${HOME: at character 1 is not a reference to a parameter; write "
	  "${NAME} with a name from [sweep] (lr), or $${ for a literal ${\n" },
	{ JOB "[env]\nSPOTRUN_PARAM_LR = 3\n[sweep]\nlr = 1\n",
	  "job.ini:5: [env] SPOTRUN_PARAM_LR: the sweep's parameter lr (line 7) sets it in every "
	  "trial; remove it here\n" },
	{ JOB "[sweep]\nlr = 1\nLR = 2\n",
	  "job.ini:6: [sweep] LR: lr (line 5) differs only in case, and both would be "
	  "SPOTRUN_PARAM_LR in the job's environment; rename one\n" },
	{ JOB "[sweep]\na = 1..10\nb = 1..10\nc = 1..10\nd = 1..11\n",
	  "job.ini:5: the sweep has 11000 trials, more than 10000; split it into several job "
	  "files\n" },
	{ JOB "[sweep]\nlr = 1,;2\n",
	  "job.ini:5: lr = 1,;2: a value cannot start with ';'; quote it where it is used, or "
	  "drop the ';'\n" },
	{ JOB "[sweep]\nlr = 1,#2\n",
	  "job.ini:5: lr = 1,#2: a value cannot start with '#'; quote it where it is used, or "
	  "drop the '#'\n" },
	{ "[job]\nname = a2345678901234567890123456789012345678901234567890123456789012\n"
	  "command = x\n[sweep]\ns = 1..10\n",
	  "job.ini:2: name = a23456789012345678901234567890123456789012345678...: too long for a "
	  "sweep: its 10 trials are named NAME.01 to NAME.10, and a job name has at most 64 "
	  "characters; use at most 61\n" },
	{ "[job]\nname = t\ncommand = echo ${x} y\n[sweep]\nx = a, \"b, c\n",
	  "job.ini:3: command of trial t.2 (x = \"b): unterminated double quote at character 6; "
	  "close it, or write \\\" for a literal quote\n" },
	{ "[job]\nname = t\ncommand = ${prog} --x\n[sweep]\nprog = ./a, '', ./c\n",
	  "job.ini:3: command of trial t.2 (prog = ''): the program name is empty; give the "
	  "program and its arguments (e.g. python3 train.py --epochs 3)\n" },
	{ "[job]\nname = t\ncommand = echo $${HOME}\n[sweep]\nx = 1\n",
	  "job.ini:3: command of trial t.1 (x = 1): ${HOME} is not expanded without a shell; set "
	  "shell = yes, or write '${HOME}' to pass it literally\n" },
};

static void
test_bad(void)
{
	struct sr_jobspec *js;
	char *text, *p, what[40];
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(bad_sweeps); i++) {
		snprintf(what, sizeof what, "bad sweep %zu", i + 1);
		rejected(bad_sweeps[i].text, bad_sweeps[i].want, what);
	}

	/* 100 parameters, then one more. */
	text = sr_malloc(64 * 1024);
	p = text + sprintf(text, JOB "[sweep]\n");
	for (i = 0; i < SR_SWEEP_PARAMS_MAX; i++)
		p += sprintf(p, "p%zu = x\n", i);
	js = parse_good(text, "100 parameters");
	sr_jobspec_free(js);
	sprintf(p, "extra = y\n");
	rejected(text, "job.ini:105: [sweep] extra: more than 100 parameters; split the sweep "
	    "into several job files\n", "101 parameters");

	/* Exactly 10000 trials, and a value of 4096 bytes, then 4097. */
	js = parse_good(JOB "[sweep]\na = 1..100\nb = 1..100\n", "10000 trials");
	if (js != NULL)
		is_int(sr_sweep_count(js), 10000, "10000 trials: the most");
	sr_jobspec_free(js);
	p = text + sprintf(text, JOB "[sweep]\nv = ");
	memset(p, 'v', 4096);
	strcpy(p + 4096, "\n");
	js = parse_good(text, "a value of 4096 bytes");
	sr_jobspec_free(js);
	strcpy(p + 4096, "w\n");
	rejected(text, "job.ini:5: v = vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv...: a value "
	    "is longer than 4096 bytes\n", "a value of 4097 bytes");

	/* A trial's file over 1 MiB: 20 [env] lines of 14 references each
	 * to a 4096-byte value. */
	p = text + sprintf(text, JOB "[sweep]\nv = a, ");
	memset(p, 'v', 4096);
	p += 4096;
	p += sprintf(p, "\n[env]\n");
	for (i = 0; i < 20; i++)
		p += sprintf(p, "E%zu = ${v}${v}${v}${v}${v}${v}${v}${v}${v}${v}${v}${v}${v}${v}\n", i);
	rejected(text, "job.ini:5: expand trial t.2: its job file would be 1155593 bytes, more "
	    "than 1048576; shorten the values or the lines that use them\n",
	    "a trial's file over 1 MiB (the longest trial named)");
	free(text);
}

static void
test_ids(void)
{
	char id[SR_SWEEP_ID_LEN + 1], id2[SR_SWEEP_ID_LEN + 1];
	struct sr_sweep_trial tr;
	struct sr_jobspec *js;
	char err[SR_ERRMAX];
	const char *text = JOB "[sweep]\nlr = 1..12\n";

	sr_sweep_id("abc", 3, id);
	is_str(id, "ba7816bf8f01cfea", "id: the first 16 hex digits of SHA-256 (FIPS 180-2's abc)");
	sr_sweep_id(text, strlen(text), id);
	sr_sweep_id(text, strlen(text), id2);
	is_str(id, id2, "id: the same bytes, the same id");
	sr_sweep_id(text, strlen(text) - 1, id2);
	ok(strcmp(id, id2) != 0, "id: a byte less, another id");
	js = parse_good(text, "ids' sweep");
	if (js == NULL)
		return;
	if (ok(sr_sweep_trial(js, 8, &tr, err) == 0, "trial 9 expands")) {
		char want[64];

		snprintf(want, sizeof want, "%s.09", id);
		is_str(tr.id, want, "a trial's id: the sweep's, '.', its number");
		is_str(tr.name, "t.09", "its name");
		is_int(tr.index, 8, "its index");
	}
	sr_sweep_trial_free(&tr);
	ok(sr_sweep_trial(js, 12, &tr, err) == -1, "trial 13 of 12 does not expand");
	is_str(err, "expand trial 13 of t: the sweep has 12 trials", "no such trial: message");
	sr_jobspec_free(js);
}

/* One sweep's trial 4, exactly; and twice the same bytes. */
static void
test_exact(void)
{
	static const char sweep[] =
	    "\xef\xbb\xbf; lora: a sweep\r\n"
	    "[job]\r\n"
	    "name = lora\r\n"
	    "command = python3 train.py --lr ${lr} --seed ${seed} --out '$${HOME}/x' ; note\r\n"
	    "[env]\r\n"
	    "PLAIN = a $${b}\r\n"
	    "  TAG=lr${lr}   ; tagged\r\n"
	    "EMPTY =\r\n"
	    "[sweep]   ; the grid\r\n"
	    "lr = 0.1, 0.01\r\n"
	    "; between\r\n"
	    "seed = 1..3\r\n"
	    "[resources]\r\n"
	    "gpus = 1\r\n"
	    "[sweep]\r\n"
	    "opt = adam";
	char id[SR_SWEEP_ID_LEN + 1], err[SR_ERRMAX], *want;
	struct sr_sweep_trial tr, tr2;
	struct sr_jobspec *js;

	js = parse_good(sweep, "a sweep with a BOM, CRLF, comments, two [sweep] sections");
	if (js == NULL)
		return;
	is_int(sr_sweep_count(js), 6, "2 x 3 x 1 trials");
	sr_sweep_id(sweep, sizeof sweep - 1, id);
	want = sr_asprintf(
	    "; spotrun: trial 4 of 6 of sweep lora (id %s), expanded from its job\n"
	    "; file: [sweep] is commented out, this trial's values replace ${NAME} in the\n"
	    "; command and [env], and [env] at the end sets them as SPOTRUN_PARAM_<NAME>.\n"
	    "; lr = 0.01\n"
	    "; seed = 1\n"
	    "; opt = adam\n"
	    "; lora: a sweep\n"
	    "[job]\n"
	    "name = lora.4\n"
	    "command = python3 train.py --lr 0.01 --seed 1 --out '${HOME}/x'\n"
	    "[env]\n"
	    "PLAIN = a ${b}\n"
	    "TAG = lr0.01\n"
	    "EMPTY =\n"
	    "; [sweep] (expanded: this trial's values are at the top)\n"
	    "; lr: a parameter of the sweep\n"
	    "; between\n"
	    "; seed: a parameter of the sweep\n"
	    "[resources]\n"
	    "gpus = 1\n"
	    "; [sweep] (expanded: this trial's values are at the top)\n"
	    "; opt: a parameter of the sweep\n"
	    "[env]\n"
	    "SPOTRUN_PARAM_LR = 0.01\n"
	    "SPOTRUN_PARAM_SEED = 1\n"
	    "SPOTRUN_PARAM_OPT = adam\n", id);
	if (ok(sr_sweep_trial(js, 3, &tr, err) == 0, "trial 4 expands")) {
		is_str(tr.ini, want, "trial 4's job file, exactly");
		ok(tr.ini_len == strlen(tr.ini), "ini_len is its length");
		ok(sr_sweep_trial(js, 3, &tr2, err) == 0 && tr2.ini_len == tr.ini_len &&
		    memcmp(tr.ini, tr2.ini, tr.ini_len) == 0, "expanded twice: the same bytes");
		sr_sweep_trial_free(&tr2);
		ok(strcmp(tr.values[0], "0.01") == 0 && strcmp(tr.values[1], "1") == 0 &&
		    strcmp(tr.values[2], "adam") == 0 && tr.values[3] == NULL,
		    "its values, NULL-terminated");
	} else
		tap_diag("%s", err);
	sr_sweep_trial_free(&tr);
	free(want);
	sr_jobspec_free(js);
}

/* Join words with '|' for comparing. */
static char *
joined(char *const *v, size_t skip)
{
	char *s = sr_strdup(""), *t;
	size_t i;

	for (i = skip; v[i] != NULL; i++) {
		t = sr_asprintf("%s%s%s", s, i > skip ? "|" : "", v[i]);
		free(s);
		s = t;
	}
	return s;
}

/* Every trial of text parses back, from its job file, to the trial's
 * spec: what the sweep's spec is but for the name, the command (and argv),
 * [env] (substituted, SPOTRUN_PARAM_ added), local_dir and [sweep]. */
static void
round_trip(const char *what, const char *text)
{
	struct sr_jobspec *js, *back;
	struct sr_sweep_trial tr;
	char err[SR_ERRMAX], *printed, *want, *got, *sub, **argv, *e, *eq, *name;
	size_t n, t, i, k, bad = 0;

	js = parse_good(text, what);
	if (js == NULL)
		return;
	n = sr_sweep_count(js);
	for (t = 0; t < n; t++) {
		if (sr_sweep_trial(js, t, &tr, err) == -1) {
			tap_diag("%s: trial %zu: %s", what, t + 1, err);
			bad++;
			continue;
		}
		back = parse(tr.ini, &printed);
		if (back == NULL) {
			tap_diag("%s: trial %zu does not parse back: %s", what, t + 1, printed);
			bad++;
		} else {
			want = dump_spec(js, DUMP_NO_IDENTITY);
			got = dump_spec(back, DUMP_NO_IDENTITY);
			bad += strcmp(want, got) != 0;
			if (strcmp(want, got) != 0)
				tap_diag("%s: trial %zu differs:\n%s\n---\n%s", what, t + 1, want, got);
			free(want);
			free(got);
			bad += strcmp(back->name, tr.name) != 0 || back->nsweep != 0;
			sr_sweep_subst(js, t, js->command, &sub, err);
			bad += strcmp(back->command, sub) != 0;
			if (js->shell)
				bad += strcmp(back->argv[2], sub) != 0;
			else if (sr_words_split(sub, SR_WORDS_STRICT, &argv, NULL, err) == 0) {
				want = joined(argv, 0);
				got = joined(back->argv, 0);
				bad += strcmp(want, got) != 0;
				free(want);
				free(got);
				sr_words_free(argv);
			} else
				bad++;
			free(sub);
			for (i = 0; js->env[i] != NULL; i++) {
				eq = strchr(js->env[i], '=');
				sr_sweep_subst(js, t, eq + 1, &sub, err);
				e = sr_asprintf("%.*s=%s", (int)(eq - js->env[i] + 0), js->env[i], sub);
				bad += back->env[i] == NULL || strcmp(back->env[i], e) != 0;
				free(e);
				free(sub);
			}
			for (k = 0; k < js->nsweep; k++, i++) {
				name = sr_asprintf("SPOTRUN_PARAM_%s", js->sweep[k].key);
				for (e = name; *e != '\0'; e++)
					*e = (char)toupper((unsigned char)*e);
				e = sr_asprintf("%s=%s", name, sr_sweep_value(js, t, k));
				bad += back->env[i] == NULL || strcmp(back->env[i], e) != 0;
				free(e);
				free(name);
			}
			bad += back->env[i] != NULL;
			want = sr_asprintf("%s/.spotrun/%s", js->workdir, tr.name);
			bad += strcmp(back->local_dir, want) != 0 &&
			    strcmp(back->local_dir, js->local_dir) != 0;
			free(want);
		}
		free(printed);
		sr_jobspec_free(back);
		sr_sweep_trial_free(&tr);
	}
	is_int(bad, 0, "%s: all %zu trials parse back to their specs", what, n);
	sr_jobspec_free(js);
}

static void
test_round_trips(void)
{
	round_trip("lists and ranges", JOB "[env]\nA = ${lr}/${seed}\n[sweep]\n"
	    "lr = 1e-4, 3e-4\nseed = -2..2\n");
	round_trip("every section", "; all\n[job]\nname = full\ncommand = python3 train.py --lr "
	    "${lr} --opt \"${opt}\" 'lit $${x}'\nworkdir = sub/dir\n[env]\nDATA = /d/${opt}\n"
	    "N = 1\n[resources]\ngpus = 1-8\ngpu_type = H100\n[checkpoint]\ninterval = 20m\n"
	    "keep = 5\nstore = /srv/spotrun\nsignal = USR2\nchunk_size = 64MiB\nlevel = 3\n"
	    "margin = 2s\n[provider]\nname = local\nwindow = 45s\nafter = 1h\nseed = 9\n"
	    "notice_file = n/now\npreemptions = 2\n[retry]\nmax_restarts = 4\n"
	    "on_exit_codes = 1, 137\nbackoff = 2s\nbackoff_max = 1m\n[sweep]\n"
	    "lr = 0.1, 0.2, 0.3\nopt = adam w, sgd\n");
	round_trip("shell = yes", "[job]\nname = sh\nshell = yes\ncommand = echo $$ ${a} "
	    "$${HOME} > out-${a}.txt\n[sweep]\na = x, y;z, 'q'\n");
	round_trip("a command that starts with ';'", "[job]\nname = semi\nshell = yes\n"
	    "command =;echo ${a}\n[sweep]\na = 1, 2\n");
	round_trip("values with tabs, quotes, UTF-8, '=' and '#'", "[job]\nname = v\n"
	    "command = run \"${v}\"\n[env]\nV = <${v}>\n[sweep]\n"
	    "v = a\tb, caf\xc3\xa9, x=y, h#, \\\\\n");	/* " #h" would be a comment */
	round_trip("a value of $${ in [env]", "[job]\nname = e\ncommand = run\n[env]\n"
	    "V = ${v}.$${v}\n[sweep]\nv = $${, x\n");
	round_trip("local_dir set", "[job]\nname = ld\ncommand = run ${a}\n[checkpoint]\n"
	    "local_dir = /scratch/x\n[sweep]\na = 1..3\n");
	round_trip("no newline at the end", "[job]\nname = nl\ncommand = run ${a}\n[sweep]\n"
	    "a = 1..2");
}

/* A trial's job file is a job `spotrun run` runs as that trial: its
 * name, the value in its command, SPOTRUN_PARAM_ in its environment. */
static void
test_run_trial(void)
{
	const char *spotrun = getenv("SPOTRUN");
	char tmpdir[] = "/tmp/t-sweep.XXXXXX", err[SR_ERRMAX], *text, *cmd, *out = NULL;
	struct sr_sweep_trial tr;
	struct sr_jobspec *js;
	FILE *f;
	int st;

	if (spotrun == NULL || access(spotrun, X_OK) != 0) {
		ok(1, "# SKIP a trial run: no $SPOTRUN (run under make check)");
		return;
	}
	if (mkdtemp(tmpdir) == NULL)
		sr_fatal("mkdtemp");
	text = sr_asprintf("[job]\nname = trial-run\nshell = yes\ncommand = printf '%%s %%s %%s "
	    "%%s\\n' \"${lr}\" \"$SPOTRUN_PARAM_LR\" \"$SPOTRUN_JOB\" \"$${x}\" > out\n"
	    "[checkpoint]\nstore = %s/store\n[provider]\nname = local\n[sweep]\n"
	    "lr = 0.1, 0.01\n", tmpdir);
	js = parse_good(text, "a sweep to run a trial of");
	if (js != NULL && ok(sr_sweep_trial(js, 1, &tr, err) == 0, "trial 2 expands")) {
		cmd = sr_asprintf("%s/trial.ini", tmpdir);
		if ((f = fopen(cmd, "w")) == NULL || fwrite(tr.ini, 1, tr.ini_len, f) != tr.ini_len ||
		    fclose(f) != 0)
			sr_fatal("write %s", cmd);
		free(cmd);
		cmd = sr_asprintf("cd %s && XDG_DATA_HOME=%s/xdg x=unset '%s' run -q trial.ini "
		    "> run.out 2>&1", tmpdir, tmpdir, spotrun);
		st = system(cmd);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "spotrun run trial.ini: exit 0");
		free(cmd);
		cmd = sr_asprintf("%s/out", tmpdir);
		if (sr_read_file(cmd, 4096, &out, NULL, err) == -1)
			tap_diag("%s", err);
		is_str(out, "0.01 0.01 trial-run.2 unset\n",
		    "the trial ran with its value, SPOTRUN_PARAM_LR, its name, and $${x} as ${x}");
		free(out);
		free(cmd);
		sr_sweep_trial_free(&tr);
	}
	sr_jobspec_free(js);
	free(text);
	sr_rmtree(tmpdir, NULL);
}

int
main(void)
{
	no_cloud();
	test_grid();
	test_subst();
	test_bad();
	test_ids();
	test_exact();
	test_round_trips();
	test_run_trial();
	return tap_done();
}
