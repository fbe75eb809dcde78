/*
 * t-fuzz-jobspec.c: a seeded mutation fuzzer of the job file parser
 * (runner/jobspec*.c) and of sweep expansion (runner/sweep.c). Starting
 * from the good files of tests/jobspec/ and a few sweeps, each round
 * mutates one (bytes flipped, spans deleted or repeated, tokens of the
 * syntax inserted: sections, keys, quotes, ${...}, bytes that are not
 * UTF-8, controls) and parses it; every round must hold:
 *  - no crash, no sanitizer report (build-aux/test-all --enable-sanitizers);
 *  - accepted (0, a spec, no error) or rejected (-1, no spec, 1 to 100
 *    errors), nothing else;
 *  - every error on a line of the file (0: the whole file), its message
 *    non-empty and itself text (valid UTF-8, no control character: no
 *    message echoes a broken byte to a terminal);
 *  - an accepted file parses again to the same spec, field by field;
 *  - an accepted sweep's trials (the first and the longest) expand, and
 *    their job files are accepted in turn: no sweep check-time passed
 *    lets a trial fail later.
 * Deterministic: the seed is fixed, so a failure is reproducible; SEED and
 * ROUNDS in the environment change them (for a longer run by hand).
 */
#include "config.h"

#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobspec.h"
#include "jobspec-text.h"
#include "sweep.h"
#include "util.h"
#include "tap.h"
#include "jobspec-util.h"

#define ROUNDS 12000

/* xorshift64*: reproducible on every platform. */
static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static const char *const tokens[] = {
	"[", "]", "=", ":", ";", "#", "\n", " ", "\t", "\"", "'", "\\", "..", ",", "-",
	"0", "9", "1h", "ms", "MiB", "$X", "~", ">", "\xef\xbb\xbf", "\r", "\r\n",
	"[job]", "[env]", "[sweep]", "[nope]", "name = x", "command = a", "shell = yes",
	"store = s3://b", "gpus = 1-8", "99999999999999999999", "1..100000", "1..3",
	"${lr}", "${", "$${", "${seed}", "${nope}", "}", "SPOTRUN_PARAM_LR = 1", "lr = 1, 2",
	"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "\xc3\xa9",
	"\xf0\x9f\x98\x80", "\x01", "\x7f", "\xc2\x85", "\x1b[0m", "\0",
};

/* Sweeps to start from, besides tests/jobspec/good-*.ini. */
static const char *const sweeps[] = {
	"[job]\nname = s\ncommand = train --lr ${lr} --seed ${seed} '$${x}'\n[env]\n"
	"A = ${lr}/${seed}\n[sweep]\nlr = 0.1, 0.01\nseed = 1..3\n",
	"[job]\nname = sh\nshell = yes\ncommand = echo ${a} \"${b}\" $$ > out\n[env]\nB = ${b}\n"
	"[sweep]\na = x, y\nb = 1..4, q r\n[checkpoint]\ninterval = 5m\n",
	/* a container and [data]: their checks reached too */
	"[job]\nname = d\ncommand = train --lr ${lr}\nimage = reg.example:5000/t:1\n"
	"container_runtime = podman\nsetup = pip install -r req.txt\n[data]\n"
	"data = s3://bucket/train/\n/data/x = file:///srv/x.bin\nsub/dir = gs://b/p/\n"
	"[checkpoint]\nsignal = USR2\n[sweep]\nlr = 1, 2\n",
};

struct corpus {
	char *text[16];
	size_t len[16], n;
};

static void
load_corpus(struct corpus *c, const char *datadir)
{
	static const char *const files[] = {
		"good-full.ini", "good-minimal.ini", "good-shell.ini", "good-bom-crlf.ini",
		"good-utf8.ini",
	};
	char path[PATH_MAX + 40];
	size_t i;

	c->n = 0;
	for (i = 0; i < SR_ARRAY_LEN(files); i++) {
		snprintf(path, sizeof path, "%s/%s", datadir, files[i]);
		if (sr_read_file(path, 1 << 20, &c->text[c->n], &c->len[c->n], NULL) == -1)
			sr_fatal("read %s", path);
		c->n++;
	}
	for (i = 0; i < SR_ARRAY_LEN(sweeps); i++) {
		c->text[c->n] = sr_strdup(sweeps[i]);
		c->len[c->n++] = strlen(sweeps[i]);
	}
}

/* 1 to 8 mutations of buf (len bytes, room for cap). */
static size_t
mutate(char *buf, size_t len, size_t cap, uint64_t *seed)
{
	int m, times = 1 + (int)(rnd(seed) % 8);
	size_t at, n, b;
	const char *t;

	for (m = 0; m < times; m++) {
		at = rnd(seed) % (len + 1);
		switch (rnd(seed) % 6) {
		case 0:		/* flip a byte */
			if (len > 0)
				buf[at % len] ^= (char)(1 + rnd(seed) % 255);
			break;
		case 1:		/* delete a run */
			n = rnd(seed) % 40;
			if (at + n > len)
				n = len - at;
			memmove(buf + at, buf + at + n, len - at - n);
			len -= n;
			break;
		case 2:		/* repeat a run */
			n = rnd(seed) % 60;
			if (at + n > len)
				n = len - at;
			if (len + n > cap)
				break;
			b = at + n;
			memmove(buf + b + n, buf + b, len - b);
			memcpy(buf + b, buf + at, n);
			len += n;
			break;
		default:	/* insert a token */
			t = tokens[rnd(seed) % SR_ARRAY_LEN(tokens)];
			n = t[0] == '\0' ? 1 : strlen(t);
			if (len + n > cap)
				break;
			memmove(buf + at + n, buf + at, len - at);
			memcpy(buf + at, t, n);
			len += n;
			break;
		}
	}
	return len;
}

struct tally {
	size_t accepted, rejected, sweeps, trials, bad;
};

/* Expand the first and the longest trial of an accepted sweep; each must
 * parse back. */
static void
check_trials(const struct sr_jobspec *js, struct tally *k, int round)
{
	struct sr_jobspec_errors errs;
	struct sr_sweep_trial tr;
	struct sr_jobspec *back;
	char err[SR_ERRMAX];
	size_t pick[2] = { 0, sr_sweep_longest(js) }, i;

	k->sweeps++;
	for (i = 0; i < 2; i++) {
		if (sr_sweep_trial(js, pick[i], &tr, err) == -1) {
			tap_diag("round %d: an accepted sweep's trial %zu does not expand: %s", round,
			    pick[i] + 1, err);
			k->bad++;
			continue;
		}
		if (sr_jobspec_parse("trial.ini", js->dir, tr.ini, tr.ini_len, &js->names, &back,
		    &errs) == -1) {
			tap_diag("round %d: trial %zu does not parse back:", round, pick[i] + 1);
			sr_jobspec_errors_print("trial.ini", &errs, stderr);
			k->bad++;
		} else if (strcmp(back->name, tr.name) != 0 || back->nsweep != 0) {
			tap_diag("round %d: trial %zu parses back as %s", round, pick[i] + 1, back->name);
			k->bad++;
		}
		k->trials++;
		sr_jobspec_errors_free(&errs);
		sr_jobspec_free(back);
		sr_sweep_trial_free(&tr);
	}
}

static void
one_round(const char *buf, size_t len, struct tally *k, int round, int from_file)
{
	struct sr_jobspec_errors errs, errs2;
	struct sr_jobspec *js = NULL, *again = NULL;
	size_t i, nlines, off, elen;
	char *d1, *d2;
	int r;

	for (nlines = 1, i = 0; i < len; i++)
		nlines += buf[i] == '\n';
	if (from_file) {
		FILE *f = fopen("fuzz.ini", "w");

		if (f == NULL || fwrite(buf, 1, len, f) != len || fclose(f) != 0)
			sr_fatal("write fuzz.ini");
		r = sr_jobspec_load("fuzz.ini", runner_names(), &js, &errs);
	} else
		r = sr_jobspec_parse("fuzz.ini", "/jobs", buf, len, runner_names(), &js, &errs);
	if (r == 0 && js != NULL && errs.n == 0 && js->name != NULL && js->argv != NULL &&
	    js->argv[0] != NULL && js->workdir != NULL && js->store != NULL)
		k->accepted++;
	else if (r == -1 && js == NULL && errs.n >= 1 && errs.n <= 100)
		k->rejected++;
	else {
		tap_diag("round %d: r = %d, js %s, %zu errors", round, r, js ? "set" : "NULL", errs.n);
		k->bad++;
	}
	for (i = 0; i < errs.n; i++) {
		if (errs.v[i].line < 0 || (size_t)errs.v[i].line > nlines || errs.v[i].msg[0] == '\0' ||
		    sr_js_text_scan(errs.v[i].msg, strlen(errs.v[i].msg), &off, &elen) != SR_TEXT_OK) {
			tap_diag("round %d: error %zu at line %d of %zu: %s", round, i,
			    errs.v[i].line, nlines, errs.v[i].msg);
			k->bad++;
		}
	}
	if (r == 0 && js != NULL) {
		/* The same bytes again: the same spec. */
		if (sr_jobspec_parse("fuzz.ini", js->dir, buf, len, &js->names, &again, &errs2) == -1) {
			tap_diag("round %d: accepted once, rejected the second time", round);
			k->bad++;
		} else {
			d1 = dump_spec(js, 0);
			d2 = dump_spec(again, 0);
			if (strcmp(d1, d2) != 0) {
				tap_diag("round %d: parsed twice, two specs:\n%s---\n%s", round, d1, d2);
				k->bad++;
			}
			free(d1);
			free(d2);
		}
		sr_jobspec_errors_free(&errs2);
		sr_jobspec_free(again);
		if (js->nsweep > 0)
			check_trials(js, k, round);
	}
	sr_jobspec_errors_free(&errs);
	sr_jobspec_free(js);
}

int
main(void)
{
	const char *env;
	char datadir[PATH_MAX], tmpdir[] = "/tmp/t-fuzz-jobspec.XXXXXX", *buf;
	struct tally k = { 0, 0, 0, 0, 0 };
	struct corpus c;
	uint64_t seed = 20251201, start;
	size_t len, cap = 1 << 16, pick;
	int rounds = ROUNDS, round;

	if ((env = getenv("SEED")) != NULL)
		seed = strtoull(env, NULL, 10);
	if ((env = getenv("ROUNDS")) != NULL)
		rounds = atoi(env);
	start = seed;
	jobspec_test_dirs(datadir, tmpdir);
	load_corpus(&c, datadir);
	buf = sr_malloc(cap);
	for (round = 0; round < rounds; round++) {
		pick = rnd(&seed) % c.n;
		if (c.len[pick] > cap / 2)
			sr_fatal("corpus file %zu is too long", pick);
		memcpy(buf, c.text[pick], c.len[pick]);
		len = mutate(buf, c.len[pick], cap, &seed);
		one_round(buf, len, &k, round, round % 50 == 0);
	}
	is_int(k.bad, 0, "fuzz (seed %" PRIu64 "): %d mutated files, each accepted whole (and the "
	    "same when parsed again) or rejected with 1-100 errors on its lines, in text "
	    "(%zu accepted, %zu rejected)", start, rounds, k.accepted, k.rejected);
	ok(k.accepted > (size_t)rounds / 50 && k.rejected > (size_t)rounds / 2,
	    "fuzz: the mutations reach both outcomes (%zu accepted, %zu rejected)", k.accepted,
	    k.rejected);
	ok(k.sweeps > 0 && k.trials == 2 * k.sweeps,
	    "fuzz: %zu accepted sweeps, the first and longest trial of each expanded and "
	    "parsed back (%zu trials)", k.sweeps, k.trials);
	for (pick = 0; pick < c.n; pick++)
		free(c.text[pick]);
	free(buf);
	unlink("fuzz.ini");
	if (chdir("/") == -1 || rmdir(tmpdir) == -1)
		tap_diag("could not remove %s", tmpdir);
	return tap_done();
}
