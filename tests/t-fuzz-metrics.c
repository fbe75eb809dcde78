/*
 * t-fuzz-metrics.c: a seeded mutation fuzzer of the metrics line parser
 * (common/metricline.c), as t-fuzz-jobspec.c is of the job file's. From a
 * few good lines, each round mutates one (bytes flipped, spans deleted or
 * repeated, tokens inserted: '=', blanks, "step=", numbers of every form,
 * NUL, bytes that are not UTF-8, controls) and parses it; every round must
 * hold:
 *  - no crash, no sanitizer report;
 *  - 1 (a line), 0 (none: empty or a comment) or -1 with a message that
 *    is text (printable ASCII: the job's bytes never reach a terminal raw);
 *  - a line formats to its normal form, which parses again to the same
 *    step, names and values, and formats to the same text.
 * Deterministic: SEED and ROUNDS in the environment change it.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metricline.h"
#include "util.h"
#include "tap.h"

#define ROUNDS 200000

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static const char *const seeds[] = {
	"step=120 loss=0.4312 acc=0.871",
	"step=0 val/acc=1e-3\ttrain.loss_2=-2",
	"  # a comment",
	"loss=1 step=99999 x=0x1p3 y=.5 z=-0 w=+7",
};
static const char *const tokens[] = {
	"=", " ", "\t", "step=", "step=1", "1e308", "1e999", "nan", "inf", "-", ".", "0x",
	"#", "\r", "\xff", "\xc3\xa9", "\x1b[31m", "\x00", "a=1", "9=", "/", "_",
};

static int
text_only(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

int
main(void)
{
	const char *e = getenv("SEED"), *r = getenv("ROUNDS");
	uint64_t seed = e != NULL ? strtoull(e, NULL, 0) : 0x5eed5eedULL;
	long rounds = r != NULL ? atol(r) : ROUNDS, i, lines = 0, bad = 0, none = 0, broken = 0;
	char buf[4096], fmt[2048], fmt2[2048], err[SR_ERRMAX];
	struct sr_metrics_line l, l2;

	tap_plan(3);
	for (i = 0; i < rounds && broken < 5; i++) {
		const char *s = seeds[rnd(&seed) % (sizeof seeds / sizeof seeds[0])];
		size_t n = strlen(s), k, muts = 1 + rnd(&seed) % 4, m;
		int rc, j;

		memcpy(buf, s, n);
		for (m = 0; m < muts; m++) {
			size_t at = n > 0 ? rnd(&seed) % (n + 1) : 0;

			switch (rnd(&seed) % 4) {
			case 0:		/* a byte flipped */
				if (at < n)
					buf[at] ^= (char)(1u << (rnd(&seed) % 8));
				break;
			case 1:		/* a span deleted */
				k = rnd(&seed) % 8;
				k = at + k > n ? n - at : k;
				memmove(buf + at, buf + at + k, n - at - k);
				n -= k;
				break;
			case 2: {	/* a token inserted */
				const char *t = tokens[rnd(&seed) % (sizeof tokens / sizeof tokens[0])];
				size_t tl = t[0] == '\0' ? 1 : strlen(t);

				if (n + tl < 1200) {
					memmove(buf + at + tl, buf + at, n - at);
					memcpy(buf + at, t, tl);
					n += tl;
				}
				break;
			}
			default:	/* a span repeated */
				k = rnd(&seed) % 16;
				k = at + k > n ? n - at : k;
				if (n + k < 1200) {
					memmove(buf + at + k, buf + at, n - at);
					n += k;
				}
				break;
			}
		}
		err[0] = '\0';
		rc = sr_metrics_parse(buf, n, &l, err);
		if (rc == 0) {
			none++;
			continue;
		}
		if (rc == -1) {
			bad++;
			if (err[0] == '\0' || !text_only(err)) {
				broken++;
				tap_diag("round %ld: a message that is not text: %s", i, err);
			}
			continue;
		}
		if (rc != 1) {
			broken++;
			continue;
		}
		lines++;
		if (sr_metrics_format(&l, fmt, sizeof fmt) == 0 ||
		    sr_metrics_parse(fmt, strlen(fmt) - 1, &l2, err) != 1 || l2.step != l.step ||
		    l2.n != l.n || sr_metrics_format(&l2, fmt2, sizeof fmt2) == 0 ||
		    strcmp(fmt, fmt2) != 0) {
			broken++;
			tap_diag("round %ld: the normal form does not parse back: %s", i, fmt);
			continue;
		}
		for (j = 0; j < l.n; j++)
			if (strcmp(l.m[j].name, l2.m[j].name) != 0)
				broken++;
	}
	ok(broken == 0, "%ld rounds: every one a line, none or refused with a message", i);
	ok(lines > 0 && bad > 0, "some lines were accepted (%ld), some refused (%ld), %ld none",
	    lines, bad, none);
	ok(i == rounds, "all rounds ran");
	return tap_done();
}
