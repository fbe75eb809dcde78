/*
 * t-strbuf.c: the growing string of common/strbuf.c: pieces of every
 * size appended exactly (bytes with NULs, strings, characters, printf's
 * output shorter and far longer than its first try), an empty buffer
 * taken as "", the failed state sticky after an allocation fails and told
 * in the error buffer, and the whole build under every out-of-memory
 * injection (tests/oom-trial.h): the text exact, or NULL and nothing kept.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "tap.h"
#include "oom.h"
#include "oom-trial.h"
#include "util.h"

/* What build() makes: 300 pieces of every kind, the text growing past
 * several doublings. */
static void
build(struct sr_strbuf *b, char *want, size_t *wlen)
{
	static const char raw[3] = { 'a', '\0', 'b' };
	char big[300];
	size_t n = 0;
	int i;

	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	for (i = 0; i < 300; i++) {
		switch (i % 4) {
		case 0:
			sr_strbuf_add(b, raw, sizeof raw);
			memcpy(want + n, raw, sizeof raw);
			n += sizeof raw;
			break;
		case 1:
			sr_strbuf_str(b, "piece;");
			memcpy(want + n, "piece;", 6);
			n += 6;
			break;
		case 2:
			sr_strbuf_ch(b, '#');
			want[n++] = '#';
			break;
		default:
			/* longer than the 64 bytes printf tries first every 8th time */
			sr_strbuf_printf(b, "%d:%s|", i, i % 8 == 3 ? big : "");
			n += (size_t)sprintf(want + n, "%d:%s|", i, i % 8 == 3 ? big : "");
		}
	}
	*wlen = n;
}

struct run {
	char err[SR_ERRMAX];
	char *got, want[40000];
	size_t len, wlen;
};

static int
run_build(void *arg, char *err)
{
	struct run *r = arg;
	struct sr_strbuf b = SR_STRBUF_INIT(err);

	build(&b, r->want, &r->wlen);
	r->len = b.len;
	if ((r->got = sr_strbuf_take(&b)) == NULL)
		return -1;
	return 0;
}

static int
check_build(void *arg, int rc, char *why)
{
	struct run *r = arg;

	if (rc != 0)
		return r->got == NULL ? 1 : (snprintf(why, SR_ERRMAX, "text kept on failure"), 0);
	if (r->len != r->wlen || memcmp(r->got, r->want, r->wlen) != 0 || r->got[r->len] != '\0')
		return snprintf(why, SR_ERRMAX, "%zu bytes, want %zu", r->len, r->wlen), 0;
	return 1;
}

static void
reset_build(void *arg)
{
	struct run *r = arg;

	free(r->got);
	r->got = NULL;
}

int
main(void)
{
	static struct run r;
	struct sr_strbuf b = SR_STRBUF_INIT(r.err);
	char *s;

	s = sr_strbuf_take(&b);
	ok(s != NULL && strcmp(s, "") == 0, "an empty buffer is taken as \"\"");
	free(s);

	ok(run_build(&r, r.err) == 0, "300 pieces of every kind");
	ok(check_build(&r, 0, r.err), "the text is exactly the pieces, NULs and all, NUL-ended");
	reset_build(&r);

	sr_strbuf_printf(&b, "%s", "");
	is_int((long long)b.len, 0, "printf of nothing adds nothing");
	sr_strbuf_printf(&b, "%0200d", 7);
	ok(b.len == 200 && b.p[0] == '0' && b.p[199] == '7' && b.p[200] == '\0',
	    "printf of 200 bytes after a first try of 64");
	sr_strbuf_free(&b);
	ok(b.p == NULL && b.len == 0 && b.cap == 0, "free empties it");

	/* a size that cannot be had: failed, sticky, told, and take frees */
	sr_strbuf_str(&b, "kept");
	sr_strbuf_add(&b, "", SIZE_MAX - 2);
	ok(b.failed && sr_err_is_oom(r.err), "a size that overflows fails as out of memory: %s",
	    r.err);
	sr_strbuf_str(&b, "more");
	is_int((long long)b.len, 4, "nothing is added once failed");
	ok(sr_strbuf_take(&b) == NULL && b.p == NULL && !b.failed,
	    "take after a failure gives NULL and empties the buffer");

	oom_trial("a built string", OOM_OURS, run_build, check_build, reset_build, &r);
	return tap_done();
}
