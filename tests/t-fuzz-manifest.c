/*
 * t-fuzz-manifest.c: a seeded mutation fuzzer for the manifest parser and
 * for restore as a whole. A real checkpoint of a small tree (nested dirs, a
 * symlink, files of several chunks) is saved; then, thousands of times, its
 * manifest is mutated (bytes flipped, spans deleted or repeated, numbers and
 * strings replaced by hostile ones) and
 *  - parsed and validated: no crash, and every refusal carries a message;
 *  - written into the store as the newest checkpoint and restored: restore
 *    returns 0, SR_CKPT_NONE or -1 (never anything else), and nothing is
 *    created, changed or removed outside the target directory.
 * The manifest mutated is the job's second (seq 1, saved at epoch 7), so
 * that its `parent` (0) and `epoch` are mutated too; the restore then
 * walks the chain from it. Deterministic: the seed is fixed, so a failure
 * is reproducible.
 */
#include "config.h"

#include <inttypes.h>
#include <sys/stat.h>

#include "tap.h"
#include "ckpt-util.h"
#include "ckpt.h"
#include "manifest.h"
#include "store.h"

#define ROUNDS_PARSE 4000
#define ROUNDS_RESTORE 600

static uint64_t
rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static const char *const hostile[] = {
	"\"../../escape\"", "\"/etc/passwd\"", "\"a/../../x\"", "-1", "18446744073709551615",
	"2147483648", "1e308", "null", "[]", "{}", "\"\"", "\".\"", "\"a//b\"", "0",
	"\"symlink\"", "\"dir\"", "\"plane4\"", "true", "\"\\u0000\"", "9007199254740993",
	"\"../\"", "\"job/packs/../../x.tar\"", "4294967296",
	"1", "9999999999", "10000000000", "9223372036854775807", "1.0",
};

/* One mutation of text (len bytes) into a new malloc'd buffer. */
static char *
mutate(const char *text, size_t len, uint64_t *s, size_t *outlen)
{
	size_t cap = len * 2 + 256, n = len, a, b;
	char *out = sr_malloc(cap);
	int k, times = 1 + (int)(rnd(s) % 3);

	memcpy(out, text, len);
	for (k = 0; k < times; k++) {
		switch (rnd(s) % 5) {
		case 0:		/* flip a byte */
			if (n > 0)
				out[rnd(s) % n] ^= (char)(1u << (rnd(s) % 8));
			break;
		case 1:		/* delete a span */
			if (n > 1) {
				a = rnd(s) % n;
				b = a + rnd(s) % (n - a < 40 ? n - a : 40);
				memmove(out + a, out + b, n - b);
				n -= b - a;
			}
			break;
		case 2:		/* repeat a span */
			if (n > 1 && n + 64 < cap) {
				a = rnd(s) % n;
				b = a + rnd(s) % (n - a < 60 ? n - a : 60);
				memmove(out + b + (b - a), out + b, n - b);
				memcpy(out + b, out + a, b - a);
				n += b - a;
			}
			break;
		default: {	/* replace a value after a ':' by a hostile one */
			const char *h = hostile[rnd(s) % SR_ARRAY_LEN(hostile)];
			size_t hl = strlen(h), start, end;
			char *colon;

			if (n == 0)
				break;
			start = rnd(s) % n;
			colon = memchr(out + start, ':', n - start);
			if (colon == NULL)
				break;
			start = (size_t)(colon - out) + 2;
			for (end = start; end < n && out[end] != ',' && out[end] != '\n' && out[end] != '}'; end++)
				;
			if (n - (end - start) + hl >= cap)
				break;
			memmove(out + start + hl, out + end, n - end);
			memcpy(out + start, h, hl);
			n = n - (end - start) + hl;
			break;
		}
		}
	}
	*outlen = n;
	return out;
}

/* Every path under root except the store and out/t, with type, mode and
 * size: what a restore must never change. */
static char *
outside(const char *root)
{
	char *cmd = sr_asprintf("cd '%s' && find . -path ./store -prune -o -path ./out/t -prune -o "
	    "-printf '%%p %%y %%m %%s\\n' | sort", root), *s = sr_calloc(1, 1 << 16);
	FILE *fp = popen(cmd, "r");
	size_t n = 0;

	if (fp == NULL)
		sr_fatal("popen %s", cmd);
	while (n < (1 << 16) - 1 && fgets(s + n, (int)((1 << 16) - n), fp) != NULL)
		n += strlen(s + n);
	pclose(fp);
	free(cmd);
	return s;
}

int
main(void)
{
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats st;
	struct sr_store *store;
	char err[SR_ERRMAX], *root = tu_tmpdir("t-fuzz-manifest"), *url, *src, *text, *tgt;
	char *outside_before, *outside_after;
	uint8_t big[300 * 1024];
	size_t len, i;
	uint64_t seed = 0x5107F00DULL;
	int parse_ok = 0, parse_refused = 0, silent = 0, restored = 0, refused = 0, bad_rc = 0;
	int escaped = 0, link_refused = 0, fell_back = 0, unstable = 0, rewritten = 0;

	src = tu_path(root, "src");
	tu_mkdir(root, "src", 0755);
	tu_mkdir(src, "d", 0755);
	tu_mkdir(src, "d/e", 0700);
	tu_fill(big, sizeof big, 7);
	tu_write(src, "d/big.bin", big, sizeof big);
	tu_write(src, "d/e/small", "hello\n", 6);
	tu_write(src, "top", "", 0);
	tu_symlink(src, "d/link", "e/small");
	url = sr_asprintf("file://%s/store", root);
	if (sr_store_open(url, &store, err) == -1)
		sr_fatal("%s", err);
	memset(&o, 0, sizeof o);
	o.job = "fz";
	o.chunk_size = 64 * 1024;
	o.level = 1;
	o.threads = 1;
	err[0] = '\0';
	o.epoch = 7;
	i = sr_ckpt_fence(store, "fz", 7, err) == 0 && sr_ckpt_save(store, &o, src, 2, &st, err) == 0
	    && sr_ckpt_save(store, &o, src, 3, &st, err) == 0 && st.seq == 1;
	ok(i, "a real checkpoint to mutate, the second of the chain %s", i ? "" : err);
	err[0] = '\0';
	ok(sr_store_get(store, "fz/manifests/0000000001.json", 1 << 20, (void **)&text, &len, NULL,
	    err) == 0, "its manifest %s", err);
	ok(strstr(text, "\"parent\": 0,") != NULL && strstr(text, "\"epoch\": 7,") != NULL,
	    "... names its parent and epoch");

	for (i = 0; i < ROUNDS_PARSE; i++) {
		struct sr_manifest m;
		size_t ml;
		char *mt = mutate(text, len, &seed, &ml);

		err[0] = '\0';
		if (sr_manifest_parse(mt, ml, &m, err) == 0) {
			/* what parses is written (manifest-write.c) to a text
			 * that parses to what writes the same text again */
			struct sr_manifest m2;
			size_t l1, l2;
			char *t1 = sr_manifest_dump(&m, &l1, err), *t2 = NULL;

			if (t1 != NULL) {
				if (sr_manifest_parse(t1, l1, &m2, err) == 0)
					t2 = sr_manifest_dump(&m2, &l2, err);
				sr_manifest_free(&m2);
			}
			if (t1 == NULL || t2 == NULL || l1 != l2 || memcmp(t1, t2, l1) != 0) {
				if (unstable++ == 0)
					tap_diag("round %zu: written again differs: %s", i, err);
			} else
				rewritten++;
			free(t1);
			free(t2);
			err[0] = '\0';
			if (sr_manifest_validate(&m, "fz", 1, err) == 0)
				parse_ok++;
			else if (err[0] == '\0')
				silent++;
			else
				parse_refused++;
			sr_manifest_free(&m);
		} else {
			if (err[0] == '\0')
				silent++;
			else
				parse_refused++;
			sr_manifest_free(&m);	/* the contract: free it even on failure */
		}
		link_refused += strncmp(err, "parent: ", 8) == 0 || strncmp(err, "epoch: ", 7) == 0;
		free(mt);
	}
	ok(silent == 0, "every refused manifest says why (%d accepted, %d refused, %d silent)",
	    parse_ok, parse_refused, silent);
	ok(unstable == 0 && rewritten > 0, "every manifest that parses is written to a text that "
	    "reads back the same (%d; %d not)", rewritten, unstable);
	ok(link_refused > 0, "mutations of parent and epoch are refused for them (%d)",
	    link_refused);
	ok(parse_refused > ROUNDS_PARSE / 2, "most mutations are refused (%d of %d)", parse_refused,
	    ROUNDS_PARSE);

	/* Restore: the target lives in root/out/t; root/out must hold nothing
	 * else afterwards, and root/src must be untouched. */
	tu_mkdir(root, "out", 0755);
	tgt = tu_path(root, "out/t");
	outside_before = outside(root);
	for (i = 0; i < ROUNDS_RESTORE; i++) {
		size_t ml;
		char *mt = mutate(text, len, &seed, &ml), *names;
		int rc;

		if (sr_store_put(store, "fz/manifests/0000000001.json", mt, ml, SR_PUT_OVERWRITE, NULL,
		    NULL, err) != 0)
			sr_fatal("%s", err);
		free(mt);
		rc = sr_ckpt_restore(store, &o, tgt, &st, err);
		if (rc == 0 && st.seq == 0)
			fell_back++;	/* the older one, by the commit record */
		else if (rc == 0)
			restored++;
		else if (rc == -1 || rc == SR_CKPT_NONE)
			refused++;
		else
			bad_rc++;
		names = outside(root);
		if (strcmp(names, outside_before) != 0) {
			if (escaped++ == 0)
				tap_diag("round %zu changed what is outside the target:\n%s", i, names);
		}
		free(names);
		if (rc == 0)
			tu_rmtree(tgt);
	}
	outside_after = outside(root);
	ok(bad_rc == 0, "restore returns only 0, -1 or SR_CKPT_NONE (%d restored, %d refused)",
	    restored + fell_back, refused);
	ok(escaped == 0, "nothing outside the target directory changes (%d rounds changed it)", escaped);
	is_str(outside_after, outside_before, "the tree outside is as it was");
	/* A mutation the parser takes restores the mutated checkpoint; one it
	 * refuses falls back to the older one that its commit record names
	 * (format.md, "Commit records"), or, where the damage reaches the
	 * restore itself, refuses. */
	ok(restored > 0 && fell_back + refused > 0, "both outcomes happen (%d restored, %d fell "
	    "back to the older one, %d refused)", restored, fell_back, refused);

	free(text);
	free(outside_before);
	free(outside_after);
	free(tgt);
	free(src);
	free(url);
	sr_store_close(store);
	tu_rmtree(root);
	free(root);
	return tap_done();
}
