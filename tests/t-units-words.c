/*
 * t-units-words.c: the job file's value syntax helpers: durations and
 * sizes (runner/units.c) and the shell-like splitting of `command` into
 * argv (runner/words.c), each against a table of inputs and exact results.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "units.h"
#include "util.h"
#include "words.h"
#include "tap.h"

static const struct {
	const char *in;
	int ok;
	double want;
} durations[] = {
	{ "0", 1, 0 },
	{ "90s", 1, 90 },
	{ "20m", 1, 1200 },
	{ "1h", 1, 3600 },
	{ "1h30m", 1, 5400 },
	{ "250ms", 1, 0.25 },
	{ "1.5h", 1, 5400 },
	{ "2d", 1, 172800 },
	{ "1d2h3m4s5ms", 1, 93784.005 },
	{ "0s", 1, 0 },
	{ "0.5s", 1, 0.5 },
	{ "1m30ms", 1, 60.03 },
	{ "", 0, 0 },
	{ "20", 0, 0 },			/* a unit is required except for 0 */
	{ "20 minutes", 0, 0 },
	{ "20 m", 0, 0 },
	{ "20M", 0, 0 },		/* units are lower case */
	{ "30m1h", 0, 0 },		/* largest first */
	{ "1h1h", 0, 0 },		/* once each */
	{ "-5s", 0, 0 },
	{ "+5s", 0, 0 },
	{ ".5s", 0, 0 },
	{ "5.s", 0, 0 },
	{ "5sec", 0, 0 },
	{ "5us", 0, 0 },
	{ "h", 0, 0 },
	{ "5s ", 0, 0 },
	{ "1e3s", 0, 0 },
	{ "99999999999h", 0, 0 },	/* beyond 1e9 s */
};

static const struct {
	const char *in;
	int ok;
	uint64_t want;
} sizes[] = {
	{ "4096", 1, 4096 },
	{ "0", 1, 0 },
	{ "64MiB", 1, 64ULL << 20 },
	{ "1GiB", 1, 1ULL << 30 },
	{ "512KiB", 1, 512ULL << 10 },
	{ "2TiB", 1, 2ULL << 40 },
	{ "100B", 1, 100 },
	{ "16mib", 1, 16ULL << 20 },
	{ "16MB", 1, 16000000 },
	{ "3kB", 1, 3000 },
	{ "18446744073709551615", 1, UINT64_MAX },
	{ "18446744073709551616", 0, 0 },
	{ "17179869184GiB", 0, 0 },	/* 2^64 bytes */
	{ "", 0, 0 },
	{ "MiB", 0, 0 },
	{ "5M", 0, 0 },			/* binary or decimal? say which */
	{ "1.5GiB", 0, 0 },
	{ "16 MiB", 0, 0 },
	{ "-1", 0, 0 },
	{ "64Mib ", 0, 0 },
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
		if (durations[i].ok)
			ok(r == 0 && d > durations[i].want - 1e-9 && d < durations[i].want + 1e-9,
			    "duration '%s' = %g (got r=%d, %g)", durations[i].in, durations[i].want, r, d);
		else
			ok(r == -1 && d == -7, "duration '%s' is rejected, output untouched",
			    durations[i].in);
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
		if (sizes[i].ok)
			ok(r == 0 && n == sizes[i].want, "size '%s' = %llu (got r=%d, %llu)",
			    sizes[i].in, (unsigned long long)sizes[i].want, r, (unsigned long long)n);
		else
			ok(r == -1 && n == 7, "size '%s' is rejected, output untouched", sizes[i].in);
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
