/*
 * t-units-words.c: the job file's value syntax helpers: durations and
 * sizes (runner/units.c) and the shell-like splitting of `command` into
 * argv (runner/words.c), each against a table of inputs and exact results.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "units.h"
#include "util.h"
#include "words.h"
#include "tap.h"

static const struct {
	const char *in;
	int r;			/* what the parser returns: 0, -1 or -2 */
	double want;
} durations[] = {
	{ "0", 0, 0 },
	{ "90s", 0, 90 },
	{ "20m", 0, 1200 },
	{ "1h", 0, 3600 },
	{ "1h30m", 0, 5400 },
	{ "250ms", 0, 0.25 },
	{ "1.5h", 0, 5400 },
	{ "2d", 0, 172800 },
	{ "1d2h3m4s5ms", 0, 93784.005 },
	{ "0s", 0, 0 },
	{ "0.5s", 0, 0.5 },
	{ "1m30ms", 0, 60.03 },
	{ "", -1, 0 },
	{ "20", -1, 0 },			/* a unit is required except for 0 */
	{ "20 minutes", -1, 0 },
	{ "20 m", -1, 0 },
	{ "20M", -1, 0 },		/* units are lower case */
	{ "30m1h", -1, 0 },		/* largest first */
	{ "1h1h", -1, 0 },		/* once each */
	{ "-5s", -1, 0 },
	{ "+5s", -1, 0 },
	{ ".5s", -1, 0 },
	{ "5.s", -1, 0 },
	{ "5sec", -1, 0 },
	{ "5us", -1, 0 },
	{ "h", -1, 0 },
	{ "5s ", -1, 0 },
	{ "1e3s", -1, 0 },
	{ "99999999999h", -2, 0 },	/* a duration, but beyond 1e9 s */
	{ "99999999999999999999s", -2, 0 },
	{ "1000000000s", 0, 1e9 },	/* the longest */
	{ "1000000000s1ms", -2, 0 },
	{ "99999999999999999999sx", -1, 0 },	/* a typo after it: not a duration */
	{ "99999999999999999999", -1, 0 },	/* no unit */
};

static const struct {
	const char *in;
	int r;			/* 0, -1 (not a size) or -2 (too large) */
	uint64_t want;
} sizes[] = {
	{ "4096", 0, 4096 },
	{ "0", 0, 0 },
	{ "64MiB", 0, 64ULL << 20 },
	{ "1GiB", 0, 1ULL << 30 },
	{ "512KiB", 0, 512ULL << 10 },
	{ "2TiB", 0, 2ULL << 40 },
	{ "100B", 0, 100 },
	{ "16mib", 0, 16ULL << 20 },
	{ "16MB", 0, 16000000 },
	{ "3kB", 0, 3000 },
	{ "18446744073709551615", 0, UINT64_MAX },
	{ "18446744073709551616", -2, 0 },	/* a size, but over 64 bits */
	{ "99999999999999999999999MiB", -2, 0 },
	{ "17179869184GiB", -2, 0 },	/* 2^64 bytes */
	{ "99999999999999999999999Mob", -1, 0 },	/* no such unit */
	{ "", -1, 0 },
	{ "MiB", -1, 0 },
	{ "5M", -1, 0 },			/* binary or decimal? say which */
	{ "1.5GiB", -1, 0 },
	{ "16 MiB", -1, 0 },
	{ "-1", -1, 0 },
	{ "64Mib ", -1, 0 },
};

/* in -> words joined by '|' (so "" words show), or the error text. */
static const struct {
	const char *in;
	int strict;
	const char *want;
} splits[] = {
	{ "python3 train.py --epochs 3", 1, "python3|train.py|--epochs|3" },
	{ "  a\t b  ", 1, "a|b" },
	{ "", 1, "" },
	{ "a 'b c' d", 1, "a|b c|d" },
	{ "a \"b c\" d", 1, "a|b c|d" },
	{ "'it''s'", 1, "its" },
	{ "x'y'\"z\"w", 1, "xyzw" },
	{ "'' \"\" a", 1, "||a" },
	{ "a\\ b", 1, "a b" },
	{ "\\'x\\\"", 1, "'x\"" },
	{ "\"a\\\"b\"", 1, "a\"b" },
	{ "\"a\\\\b\"", 1, "a\\b" },
	{ "\"a\\nb\"", 1, "a\\nb" },		/* other backslashes stay in "" */
	{ "'a\\nb'", 1, "a\\nb" },		/* and everything in '' */
	{ "\"\\$HOME\"", 1, "$HOME" },
	{ "'$HOME'", 1, "$HOME" },
	{ "\\$HOME", 1, "$HOME" },
	{ "a 'b;c' \">\" \\|", 1, "a|b;c|>||" },
	{ "*.txt [ab]", 1, "*.txt|[ab]" },	/* no globbing */
	{ "cost$ 5$", 1, "cost$|5$" },		/* a lone $ is literal */
	{ "x~y", 1, "x~y" },
	{ "--lr=1e-4 a#b", 1, "--lr=1e-4|a#b" },
	{ "echo $HOME > log", 0, "echo|$HOME|>|log" },	/* not strict: all literal */
	{ "a 'b", 1, "unterminated single quote at character 3; close it, or write \\' for a literal quote" },
	{ "a \"b\\\"", 1, "unterminated double quote at character 3; close it, or write \\\" for a literal quote" },
	{ "a b\\", 1, "ends with a backslash; remove it, or write \\\\ for a literal backslash" },
	{ "a --out $SPOTRUN_CKPT_DIR/x", 1, "$SPOTRUN_CKPT_DIR is not expanded without a shell; set shell = yes, or write '$SPOTRUN_CKPT_DIR' to pass it literally" },
	{ "a \"${HOME}\"", 1, "${HOME} is not expanded without a shell; set shell = yes, or write '${HOME}' to pass it literally" },
	{ "a ${x\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 1,
	  "${x\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 is not expanded without "
	  "a shell; set shell = yes, or write '${x\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	  "\xc3\xa9' to pass it literally" },	/* cut at 40 bytes, between characters */
	{ "a $(date)", 1, "$(date) is not expanded without a shell; set shell = yes, or write '$(date)' to pass it literally" },
	{ "a $1", 1, "$1 is not expanded without a shell; set shell = yes, or write '$1' to pass it literally" },
	{ "a `date`", 1, "` at character 3 (command substitution) needs a shell; set shell = yes, or write \\` for a literal backquote" },
	{ "python3 train.py > log", 1, "'>' at character 18 means something only to a shell, and none runs this command; set shell = yes, or quote it" },
	{ "a|b", 1, "'|' at character 2 means something only to a shell, and none runs this command; set shell = yes, or quote it" },
	{ "a && b", 1, "'&' at character 3 means something only to a shell, and none runs this command; set shell = yes, or quote it" },
	{ "ls ~/data", 1, "~ at character 4 is not expanded without a shell; write the full path, or set shell = yes" },
	{ "run # note", 1, "# at character 5 starts a comment only in a shell; remove it, quote it, or set shell = yes" },
};

static void
test_durations(void)
{
	size_t i;
	double d;
	int r;

	for (i = 0; i < SR_ARRAY_LEN(durations); i++) {
		d = -7;
		r = sr_parse_duration(durations[i].in, &d);
		if (durations[i].r == 0)
			ok(r == 0 && fabs(d - durations[i].want) <= 1e-9 * (1 + durations[i].want),
			    "duration '%s' = %g (got r=%d, %g)", durations[i].in, durations[i].want, r, d);
		else
			ok(r == durations[i].r && d == -7, "duration '%s' is rejected as %s, output "
			    "untouched (got r=%d)", durations[i].in,
			    durations[i].r == -2 ? "too long" : "not a duration", r);
	}
}

static void
test_sizes(void)
{
	size_t i;
	uint64_t n;
	int r;

	for (i = 0; i < SR_ARRAY_LEN(sizes); i++) {
		n = 7;
		r = sr_parse_size(sizes[i].in, &n);
		if (sizes[i].r == 0)
			ok(r == 0 && n == sizes[i].want, "size '%s' = %llu (got r=%d, %llu)",
			    sizes[i].in, (unsigned long long)sizes[i].want, r, (unsigned long long)n);
		else
			ok(r == sizes[i].r && n == 7, "size '%s' is rejected as %s, output untouched "
			    "(got r=%d)", sizes[i].in, sizes[i].r == -2 ? "too large" : "not a size", r);
	}
}

static void
test_splits(void)
{
	char err[SR_ERRMAX], joined[512];
	char **argv;
	size_t i, j, argc;

	for (i = 0; i < SR_ARRAY_LEN(splits); i++) {
		argv = NULL;
		argc = 99;
		if (sr_words_split(splits[i].in, splits[i].strict ? SR_WORDS_STRICT : 0,
		    &argv, &argc, err) == -1) {
			is_str(err, splits[i].want, "split [%s] fails", splits[i].in);
			ok(argv == NULL && argc == 99, "split [%s]: outputs untouched", splits[i].in);
			continue;
		}
		joined[0] = '\0';
		for (j = 0; j < argc; j++)
			snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%s",
			    j ? "|" : "", argv[j]);
		is_str(joined, splits[i].want, "split [%s]", splits[i].in);
		ok(argv[argc] == NULL, "split [%s]: argv is NULL-terminated", splits[i].in);
		sr_words_free(argv);
	}
	sr_words_free(NULL);
}

int
main(void)
{
	test_durations();
	test_sizes();
	test_splits();
	return tap_done();
}
