/*
 * t-s3-race.c: races at the checkpoint level on a real S3 server (Ceph
 * RGW, started by build-aux/test-all), in a bucket of the test's own:
 *
 * 1. 16 committers of one job's next checkpoint (sr_ckpt_save from 16
 *    threads, each with a store of its own, as 16 machines would), in
 *    rounds that start together: for each sequence number exactly one
 *    writer wins its manifest, every other writer that tried it gets
 *    exactly "checkpoint seq N was committed by another writer"; the
 *    winner commits, or, when a writer of a higher seq moved LATEST past it
 *    first, gets exactly "save race: checkpoint N was overtaken by
 *    checkpoint M of another writer; nothing committed" and its manifest is
 *    gone; the losers retry in the next round, and all 16 commit in the
 *    end, each on LATEST's chain.
 * 2. The LATEST pointer: 16 raw compare-and-swaps from one etag, 16 rounds:
 *    exactly one wins each round, 15 lose with SR_STORE_PRECONDITION and
 *    the exact message. Then sr_latest_advance from 16 threads with seqs
 *    0..15 from one start (LATEST present, then absent): each moves LATEST
 *    or finds it moved past its seq (SR_CATALOG_OVERTAKEN), LATEST ends at
 *    15 and a reader polling it meanwhile never sees it go backwards.
 * 3. Conditional writes whose reply was lost (tests/faultproxy `lose`: the
 *    write lands, the connection is reset before the reply): the retry's
 *    412 is recognised as the writer's own write (success), and a lost
 *    reply to a write that really lost its race is still a lost race.
 * 4. A cancel while an upload's CreateMultipartUpload is in flight (the
 *    proxy holds the request 4 s, the cancel comes as the hold begins):
 *    the upload fails "cancelled", and the upload the server made once the
 *    request reached it is aborted: none is left for the key (issue 21's
 *    load run: the reply was dropped for the cancel, the id never read,
 *    the upload never aborted).
 * Then 1 and 2 again on Azure Blob (Azurite, az://), whose create-only and
 * compare-and-swap are If-None-Match: * and If-Match too (its lost replies
 * are tests/t-az-faults.c's).
 * Afterwards every committed manifest restores its writer's files (LATEST
 * moved back along the chain after each): no committed manifest references
 * missing data. Skips without a server
 * unless SPOTRUN_TEST_REQUIRE_S3=1 (then fails).
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/evp.h>

#include "tap.h"
#include "ckpt-util.h"
#include "s3-util.h"
#include "az-util.h"

#include "catalog.h"
#include "ckpt.h"
#include "fence.h"
#include "jobkeys.h"
#include "store.h"
#include "util.h"

#define NW 16
#define JOB "race"

static char bucket[64];
static char *url;
static char *top;

static void
opts_init(struct sr_ckpt_opts *o)
{
	memset(o, 0, sizeof *o);
	o->job = JOB;
	o->chunk_size = 1 << 20;
	o->threads = 1;
}

static void
md5_hex(const void *buf, size_t len, char *hex)
{
	unsigned char md[16];
	unsigned int n = 0;
	int i;

	if (EVP_Digest(buf, len, md, &n, EVP_md5(), NULL) != 1)
		sr_fatal("EVP_Digest(md5) failed");
	for (i = 0; i < 16; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
}

/* ---- 1. 16 committers ---- */

struct writer {
	int id;
	struct sr_store *st;
	char *src;
	pthread_barrier_t *go;
	int committed;		/* in an earlier round */
	/* this round */
	int rc;
	uint64_t seq;		/* won, or lost (from the message) */
	int overtaken;		/* won its manifest, then LATEST moved past it */
	int clean;		/* rc 0, or exactly a lost-race message */
	char err[SR_ERRMAX];
};

static void *
writer_main(void *arg)
{
	struct writer *w = arg;
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;
	unsigned long long seq, by;
	char want[160];
	int end = 0;

	opts_init(&o);
	w->err[0] = '\0';
	pthread_barrier_wait(w->go);
	w->rc = sr_ckpt_save(w->st, &o, w->src, w->id, &s, w->err);
	w->clean = 0;
	w->overtaken = 0;
	if (w->rc == 0) {
		w->seq = s.seq;
		w->clean = 1;
	} else if (sscanf(w->err, "checkpoint seq %llu was committed by another writer%n", &seq,
	    &end) == 1 && end > 0 && w->err[end] == '\0') {
		w->seq = seq;
		snprintf(want, sizeof want, "checkpoint seq %llu was committed by another writer",
		    seq);
		w->clean = strcmp(w->err, want) == 0;
	} else if (sscanf(w->err, "save " JOB ": checkpoint %llu was overtaken by checkpoint %llu",
	    &seq, &by) == 2) {
		w->seq = seq;
		w->overtaken = 1;
		snprintf(want, sizeof want, "save " JOB ": checkpoint %llu was overtaken by checkpoint "
		    "%llu of another writer; nothing committed", seq, by);
		w->clean = strcmp(w->err, want) == 0 && by > seq;
	}
	return NULL;
}

static void
test_commit_race(struct sr_store *st, char **srcs)
{
	struct writer w[NW];
	pthread_t th[NW];
	pthread_barrier_t go;
	struct sr_catalog c;
	char err[SR_ERRMAX] = "";
	int winners_of[4 * NW] = { 0 }, losers_of[4 * NW] = { 0 }, tried_of[4 * NW] = { 0 };
	int held_of[4 * NW] = { 0 };	/* won its manifest: committed or overtaken */
	int i, round, left = NW, unclean = 0, bad_round = 0, orphan_loss = 0, rounds = 0;
	int losses = 0, bad_seq = 0, overtaken = 0, chain = 0, dup = 0;
	uint64_t won_seq[NW];

	for (i = 0; i < NW; i++) {
		memset(&w[i], 0, sizeof w[i]);
		w[i].id = i;
		w[i].st = su_store_open(url, 1);
		w[i].src = srcs[i];
	}
	for (round = 0; round < 3 * NW && left > 0; round++) {
		int n = 0, won = 0, seqs_won[NW], seqs_tried[NW], ntried = 0, j, k;
		(void)winners_of;

		rounds++;
		pthread_barrier_init(&go, NULL, (unsigned)left);
		for (i = 0; i < NW; i++) {
			if (w[i].committed)
				continue;
			w[i].go = &go;
			pthread_create(&th[n++], NULL, writer_main, &w[i]);
		}
		for (i = 0; i < n; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&go);
		/* per seq tried this round: exactly one winner */
		for (i = 0; i < NW; i++) {
			if (w[i].committed)
				continue;
			if (!w[i].clean) {
				unclean++;
				printf("# round %d, writer %d: rc %d: %s\n", round, i, w[i].rc, w[i].err);
				continue;
			}
			if (w[i].seq >= 4 * NW) {
				bad_seq++;
				printf("# round %d, writer %d: seq %" PRIu64 "\n", round, i, w[i].seq);
				continue;
			}
			tried_of[w[i].seq]++;
			for (k = 0; k < ntried && seqs_tried[k] != (int)w[i].seq; k++)
				;
			if (k == ntried)
				seqs_tried[ntried++] = (int)w[i].seq;
			if (w[i].rc == 0 || w[i].overtaken) {
				held_of[w[i].seq]++;
				seqs_won[won++] = (int)w[i].seq;
			}
			if (w[i].rc == 0) {
				winners_of[w[i].seq]++;
				won_seq[NW - left] = w[i].seq;
				w[i].committed = 1;
				left--;
			} else if (w[i].overtaken) {
				overtaken++;
			} else {
				losers_of[w[i].seq]++;
				losses++;
			}
		}
		for (k = 0; k < ntried; k++) {
			int m = 0;

			for (j = 0; j < won; j++)
				m += seqs_won[j] == seqs_tried[k];
			if (m != 1) {
				bad_round++;
				printf("# round %d: seq %d tried, %d winners\n", round, seqs_tried[k], m);
			}
		}
		if (ntried > 1)
			printf("# round %d: %d writers tried %d different seqs (some read the "
			    "catalog after a commit)\n", round, n, ntried);
	}
	for (i = 0; i < 4 * NW; i++) {
		if (losers_of[i] > 0 && held_of[i] != 1)
			orphan_loss++;
		dup += winners_of[i] > 1;
	}
	is_int(unclean, 0, "every save either committed or got exactly \"checkpoint seq N was "
	    "committed by another writer\" or \"save race: checkpoint N was overtaken by "
	    "checkpoint M of another writer; nothing committed\" (M > N)");
	is_int(bad_seq, 0, "every seq tried is below 64");
	is_int(left, 0, "all 16 writers committed, retrying lost races (%d rounds, %d commits "
	    "overtaken)", rounds, overtaken);
	is_int(bad_round, 0, "in every round, each seq tried had exactly one writer that won "
	    "its manifest");
	is_int(orphan_loss, 0, "no writer lost a seq that no writer won");
	ok(losses >= NW - 1, "the races were real: %d lost attempts (at least 15)", losses);
	is_int(dup, 0, "no seq was committed twice");
	su_rc_is(sr_catalog_read(st, JOB, &c, err), 0, err, "read the catalog");
	is_int(c.n, NW, "16 manifests in the bucket: an overtaken commit takes its manifest back");
	ok(c.latest.state == SR_LATEST_OK && c.n == NW && c.latest.seq == c.seqs[NW - 1],
	    "LATEST is the newest of them");
	/* the chain from LATEST holds every commit */
	{
		uint64_t at = c.latest.seq;
		struct sr_manifest m;

		for (;;) {
			int found = 0;

			if (sr_catalog_load(st, JOB, at, &m, err) != 0) {
				printf("# chain at %" PRIu64 ": %s\n", at, err);
				sr_manifest_free(&m);
				break;
			}
			for (i = 0; i < NW; i++)
				found |= won_seq[i] == at;
			chain += found;
			if (m.link != SR_LINK_PARENT) {
				sr_manifest_free(&m);
				break;
			}
			at = m.parent;
			sr_manifest_free(&m);
		}
	}
	is_int(chain, NW, "LATEST's chain holds all 16 commits");
	sr_catalog_free(&c);
	for (i = 0; i < NW; i++)
		sr_store_close(w[i].st);
}

/* ---- 2. LATEST ---- */

struct casser {
	int id;
	struct sr_store *st;
	pthread_barrier_t *go;
	const char *etag;		/* raw CAS from this etag */
	const struct sr_catalog *cat;	/* else sr_latest_advance from this */
	uint64_t seq;
	int rc;
	char err[SR_ERRMAX];
};

static void *
cas_main(void *arg)
{
	struct casser *k = arg;
	char *key = sr_jobkey_latest(JOB, NULL), text[32];

	snprintf(text, sizeof text, "%" PRIu64 "\n", k->seq);
	pthread_barrier_wait(k->go);
	if (k->cat != NULL)
		k->rc = sr_latest_advance(k->st, JOB, k->seq, 0, &k->cat->latest, NULL, NULL,
		    k->err);
	else
		k->rc = sr_store_put(k->st, key, text, strlen(text), SR_PUT_MATCH, k->etag, NULL,
		    k->err);
	free(key);
	return NULL;
}

/* A reader of LATEST while the writers race: does it ever go back? */
struct poller {
	struct sr_store *st;
	volatile int stop;
	int reads, backwards, errors;
	long long last;
};

static void *
poll_main(void *arg)
{
	struct poller *p = arg;
	char *key = sr_jobkey_latest(JOB, NULL), err[SR_ERRMAX];
	void *buf;
	size_t len;

	p->last = -1;
	while (!sr_flag_get(&p->stop)) {
		int rc = sr_store_get(p->st, key, 64, &buf, &len, NULL, err);

		if (rc == SR_STORE_NOTFOUND)
			continue;
		if (rc != 0) {
			p->errors++;
			continue;
		}
		long long v = strtoll(buf, NULL, 10);

		free(buf);
		p->reads++;
		if (v < p->last)
			p->backwards++;
		p->last = v;
	}
	free(key);
	return NULL;
}

/* 16 threads at once: raw CAS from etag, or advance from cat; thread i
 * writes base + i. */
static void
cas_round(struct casser *k, struct sr_store **sts, const char *etag,
    const struct sr_catalog *cat, uint64_t base, struct poller *pl)
{
	pthread_t th[NW], pt;
	pthread_barrier_t go;
	int i;

	pthread_barrier_init(&go, NULL, NW);
	if (pl != NULL) {
		pl->stop = 0;
		pthread_create(&pt, NULL, poll_main, pl);
	}
	for (i = 0; i < NW; i++) {
		k[i] = (struct casser){ .id = i, .st = sts[i], .go = &go, .etag = etag, .cat = cat,
			.seq = base + (uint64_t)i, .rc = 99 };
		pthread_create(&th[i], NULL, cas_main, &k[i]);
	}
	for (i = 0; i < NW; i++)
		pthread_join(th[i], NULL);
	if (pl != NULL) {
		sr_flag_set(&pl->stop, 1);
		pthread_join(pt, NULL);
	}
	pthread_barrier_destroy(&go);
}

/* How many of the 16 advances ended otherwise than moving LATEST (0) or
 * finding it at or past their seq (exactly SR_CATALOG_OVERTAKEN and its
 * message); thread 15's, the highest, must have moved it. */
static int
advance_outcomes(const struct casser *k)
{
	char want[128];
	unsigned long long by;
	int i, bad = 0;

	for (i = 0; i < NW; i++) {
		snprintf(want, sizeof want, "checkpoint %" PRIu64 " was overtaken by checkpoint ",
		    k[i].seq);
		if (k[i].rc == 0 || (k[i].rc == SR_CATALOG_OVERTAKEN && i < NW - 1 &&
		    strncmp(k[i].err, want, strlen(want)) == 0 &&
		    sscanf(k[i].err + strlen(want), "%llu", &by) == 1 && by >= k[i].seq))
			continue;
		bad++;
		printf("# advance %d: rc %d: %s\n", i, k[i].rc, k[i].err);
	}
	return bad;
}

static long long
latest_value(struct sr_store *st, char *etag)
{
	char *key = sr_jobkey_latest(JOB, NULL), err[SR_ERRMAX];
	void *buf;
	size_t len;
	long long v = -1;

	if (sr_store_get(st, key, 64, &buf, &len, etag, err) == 0) {
		v = strtoll(buf, NULL, 10);
		free(buf);
	}
	free(key);
	return v;
}

static void
test_latest_race(struct sr_store *st)
{
	struct sr_store *sts[NW];
	struct casser k[NW];
	struct sr_catalog c;
	struct poller pl;
	char etag[SR_ETAG_MAX], err[SR_ERRMAX] = "", *key = sr_jobkey_latest(JOB, NULL), *want;
	int i, round, bad_rounds = 0, unclean = 0, not_ok;

	for (i = 0; i < NW; i++)
		sts[i] = su_store_open(url, 1);
	/* raw CAS, 16 rounds from the etag each round starts with. Every
	 * value is new: the etag is the MD5 of the bytes, so a write of the
	 * bytes already there would leave it as it was, and a second CAS from
	 * it would rightly succeed too. */
	for (round = 0; round < NW; round++) {
		int won = 0;
		long long winner = -1;

		latest_value(st, etag);
		cas_round(k, sts, etag, NULL, 100 + (uint64_t)round * NW, NULL);
		want = sr_asprintf("put %s: changed since etag %s (compare-and-swap lost the race)",
		    key, etag);
		for (i = 0; i < NW; i++) {
			if (k[i].rc == 0) {
				won++;
				winner = (long long)k[i].seq;
			} else if (k[i].rc != SR_STORE_PRECONDITION || strcmp(k[i].err, want) != 0) {
				unclean++;
				printf("# round %d, thread %d: rc %d: %s\n", round, i, k[i].rc, k[i].err);
			}
		}
		free(want);
		if (won != 1 || latest_value(st, NULL) != winner) {
			bad_rounds++;
			printf("# round %d: from etag %s, %d winners, LATEST %lld:", round, etag, won,
			    latest_value(st, NULL));
			for (i = 0; i < NW; i++)
				if (k[i].rc == 0)
					printf(" thread %d", i);
			printf("\n");
		}
	}
	is_int(bad_rounds, 0, "16 rounds of 16 compare-and-swaps of LATEST from one etag: exactly "
	    "one wins each round, and LATEST holds its value");
	is_int(unclean, 0, "the other 15 of each round get SR_STORE_PRECONDITION and \"put "
	    "race/LATEST: changed since etag E (compare-and-swap lost the race)\"");

	/* sr_latest_advance, seqs 0..15, from LATEST = 0 */
	su_rc_is(sr_store_put(st, key, "0\n", 2, SR_PUT_OVERWRITE, NULL, NULL, err), 0, err,
	    "LATEST back to 0");
	is_int(sr_catalog_read(st, JOB, &c, err), 0, "read the catalog");
	memset(&pl, 0, sizeof pl);
	pl.st = su_store_open(url, 1);
	cas_round(k, sts, NULL, &c, 0, &pl);
	not_ok = advance_outcomes(k);
	is_int(not_ok, 0, "16 sr_latest_advance (seqs 0..15) from one start: each moves LATEST or "
	    "finds it moved past its seq");
	is_int(latest_value(st, NULL), NW - 1, "LATEST ends at 15");
	ok(pl.reads > 0 && pl.backwards == 0 && pl.errors == 0,
	    "a reader polling LATEST meanwhile never saw it go back (%d reads, %d backwards, "
	    "%d errors)", pl.reads, pl.backwards, pl.errors);
	sr_catalog_free(&c);

	/* the same from an absent LATEST: create-only first */
	is_int(sr_store_delete(st, key, err), 0, "delete LATEST");
	is_int(sr_catalog_read(st, JOB, &c, err), 0, "read the catalog");
	is_int(c.latest.state, SR_LATEST_ABSENT, "LATEST is absent");
	pl.reads = pl.backwards = pl.errors = 0;
	cas_round(k, sts, NULL, &c, 0, &pl);
	not_ok = advance_outcomes(k);
	is_int(not_ok, 0, "16 sr_latest_advance from an absent LATEST: each moves it or finds it "
	    "moved past its seq");
	is_int(latest_value(st, NULL), NW - 1, "LATEST ends at 15");
	ok(pl.backwards == 0 && pl.errors == 0, "it never went back (%d reads)", pl.reads);
	sr_catalog_free(&c);
	sr_store_close(pl.st);
	for (i = 0; i < NW; i++)
		sr_store_close(sts[i]);
	free(key);
}

/* ---- every committed manifest restores ---- */

static void
test_restore_all(struct sr_store *st, char **srcs)
{
	struct sr_ckpt_opts o;
	struct sr_catalog c;
	char *dst = tu_path(top, "dst"), err[SR_ERRMAX] = "", why[1024];
	int i, seen[NW] = { 0 }, verified = 0;

	opts_init(&o);
	o.threads = 2;
	sr_catalog_read(st, JOB, &c, err);
	for (i = 0; i < (int)c.n; i++) {
		struct sr_ckpt_stats r;
		struct sr_manifest m;
		char *key, ptr[32];

		if (sr_ckpt_restore(st, &o, dst, &r, err) != 0 || r.step < 0 || r.step >= NW) {
			printf("# restore: %s\n", err);
			break;
		}
		why[0] = '\0';
		if (seen[r.step]++ == 0 && tu_tree_cmp(srcs[r.step], dst, "", why, sizeof why) == 0)
			verified++;
		else
			printf("# checkpoint %" PRIu64 " (step %lld): %s\n", r.seq, r.step,
			    why[0] ? why : "seen twice");
		/* LATEST back to its parent: the next restore takes that */
		if (sr_catalog_load(st, JOB, r.seq, &m, err) == 0 && m.link == SR_LINK_PARENT) {
			snprintf(ptr, sizeof ptr, "%" PRIu64 "\n", m.parent);
			if (sr_store_put(st, JOB "/LATEST", ptr, strlen(ptr), SR_PUT_OVERWRITE, NULL,
			    NULL, err) != 0)
				printf("# LATEST back to %s: %s\n", ptr, err);
		}
		sr_manifest_free(&m);
		key = sr_jobkey_manifest(JOB, r.seq, NULL);
		sr_store_delete(st, key, err);
		free(key);
	}
	is_int(verified, NW, "each of the 16 committed checkpoints restores its writer's files "
	    "(newest first, each deleted after its restore and LATEST moved to its parent)");
	is_int(sr_ckpt_restore(st, &o, dst, NULL, err), -1, "with every manifest gone, restore "
	    "fails");
	is_str(err, "restore race: checkpoint 0: manifest race/manifests/0000000000.json is "
	    "missing", "... and says why: the chain ended at 0, the first checkpoint");
	sr_catalog_free(&c);
	free(dst);
}

/* ---- 3. lost replies ---- */

static void
test_lost_reply(void)
{
	struct su_proxy px;
	struct sr_store *ps, *st;
	struct sr_object_info info;
	char *purl, *durl, err[SR_ERRMAX] = "", etag[SR_ETAG_MAX], etag2[SR_ETAG_MAX], md5[33], *want;
	void *buf;
	size_t len;
	int rc;

	su_proxy_start(&px, "pass");
	purl = sr_asprintf("s3://%s/lost?endpoint=http://127.0.0.1:%d", bucket, px.port);
	/* the same keys straight from the server, for set-up and checks */
	durl = sr_asprintf("s3://%s/lost?endpoint=%s", bucket, su_env("SPOTRUN_TEST_S3_ENDPOINT"));
	st = su_store_open(durl, 1);

	/* create-only: it landed, the reply was lost: ours, so success */
	su_proxy_fault(&px, "lose");
	ps = su_store_open(purl, 1);
	rc = sr_store_put(ps, "m1", "manifest one", 12, SR_PUT_CREATE, NULL, etag, err);
	su_rc_is(rc, 0, err, "create-only put whose reply was lost: the retry's 412 is our own "
	    "write");
	is_int(su_proxy_count(&px, "lose: forwarded"), 1, "... the proxy lost the reply of the "
	    "first attempt");
	md5_hex("manifest one", 12, md5);
	is_str(etag, md5, "... and the etag returned is the object's");
	sr_store_close(ps);

	/* compare-and-swap: likewise */
	is_int(sr_store_put(st, "p", "1", 1, SR_PUT_OVERWRITE, NULL, etag, err), 0,
	    "put p = 1");
	su_proxy_fault(&px, "lose");
	ps = su_store_open(purl, 1);
	rc = sr_store_put(ps, "p", "2", 1, SR_PUT_MATCH, etag, etag2, err);
	su_rc_is(rc, 0, err, "compare-and-swap whose reply was lost: our own write");
	is_int(su_proxy_count(&px, "lose: forwarded"), 2, "... the proxy lost its reply");
	md5_hex("2", 1, md5);
	is_str(etag2, md5, "... the new etag is returned");
	is_int(sr_store_get(st, "p", 10, &buf, &len, NULL, err), 0, "get p");
	ok(len == 1 && memcmp(buf, "2", 1) == 0, "p holds 2");
	if (len == 1)
		free(buf);
	sr_store_close(ps);

	/* a write that really lost, whose reply was lost too: still lost */
	is_int(sr_store_head(st, "p", &info, err), 0, "head p");
	is_int(sr_store_put(st, "p", "3", 1, SR_PUT_MATCH, info.etag, NULL, err), 0,
	    "another writer moves p to 3");
	su_proxy_fault(&px, "lose");
	ps = su_store_open(purl, 1);
	rc = sr_store_put(ps, "p", "4", 1, SR_PUT_MATCH, info.etag, NULL, err);
	is_int(rc, SR_STORE_PRECONDITION, "a stale compare-and-swap whose 412 was lost: lost race");
	want = sr_asprintf("put p: changed since etag %s (compare-and-swap lost the race)",
	    info.etag);
	is_str(err, want, "... with the lost-race message");
	free(want);
	sr_store_close(ps);
	su_proxy_fault(&px, "lose");
	ps = su_store_open(purl, 1);
	rc = sr_store_put(ps, "m1", "manifest two", 12, SR_PUT_CREATE, NULL, NULL, err);
	is_int(rc, SR_STORE_EXISTS, "a create-only put on a taken key whose 412 was lost: exists");
	is_str(err, "put m1: exists (create-only put lost the race)", "... with the message");
	is_int(su_proxy_count(&px, "lose: forwarded"), 4, "both replies were lost");
	is_int(sr_store_get(st, "m1", 100, &buf, &len, NULL, err), 0, "get m1");
	ok(len == 12 && memcmp(buf, "manifest one", 12) == 0, "m1 keeps the first writer's bytes");
	if (len == 12)
		free(buf);
	sr_store_close(ps);
	sr_store_close(st);
	free(purl);
	free(durl);
	su_proxy_stop(&px);
}

/* ---- 4. a cancel while the upload's create is in flight ---- */

struct cancel_when {
	struct su_proxy *px;
	volatile int flag;
	int seen;			/* the hold began before the cancel */
};

/* Set the flag once the proxy says it holds a request (30 s at most). */
static void *
cancel_on_hold(void *arg)
{
	struct cancel_when *c = arg;
	int i;

	for (i = 0; i < 3000 && su_proxy_count(c->px, "stall 4.0 s begins") == 0; i++)
		usleep(10000);
	c->seen = su_proxy_count(c->px, "stall 4.0 s begins") > 0;
	sr_flag_set(&c->flag, 1);
	return NULL;
}

static void
test_cancel_create(void)
{
	struct su_proxy px;
	struct cancel_when cw = { .px = &px };
	struct sr_store *ps;
	struct sr_upload *up;
	pthread_t th;
	char *purl, *buf, err[SR_ERRMAX] = "", out[256];
	size_t len = 6u << 20;
	int rc;

	su_proxy_start(&px, "pass");
	purl = sr_asprintf("s3://%s/cc?endpoint=http://127.0.0.1:%d&part_size=5MiB", bucket,
	    px.port);
	/* a new handle: its first connection carries the create */
	su_proxy_fault(&px, "stall seconds=4");
	ps = su_store_open(purl, 1);
	up = sr_store_upload_begin(ps, "pack", err);
	ok(up != NULL, "begin an upload through the proxy");
	sr_upload_limit(up, 0, &cw.flag);
	if (pthread_create(&th, NULL, cancel_on_hold, &cw) != 0)
		sr_fatal("pthread_create");
	buf = sr_calloc(1, len);
	rc = sr_upload_write(up, buf, len, err);
	if (rc == 0)
		rc = sr_upload_commit(up, err);
	else
		sr_upload_abort(up);
	pthread_join(th, NULL);
	ok(cw.seen, "the cancel came while the proxy held the create");
	is_int(rc, -1, "the upload fails");
	ok(strstr(err, "cancelled") != NULL, "... cancelled: %s", err);
	rc = su_aws_out(out, sizeof out, "s3api list-multipart-uploads --bucket %s --prefix cc/ "
	    "--query 'length(Uploads || `[]`)' --output text", bucket);
	out[strcspn(out, "\n")] = '\0';
	is_str(rc == 0 ? out : "(aws failed)", "0", "no upload left for the key: the one the "
	    "create made was aborted");
	sr_store_close(ps);
	/* a connection's line is written when it ends: at the close */
	for (rc = 0; rc < 3000 && su_proxy_count(&px, "stall 4.0 s, then pass") == 0; rc++)
		usleep(10000);
	if (!ok(su_proxy_count(&px, "stall 4.0 s, then pass") == 1,
	    "the create reached the server after the hold"))
		su_proxy_show(&px);
	free(buf);
	free(purl);
	su_proxy_stop(&px);
}

int
main(void)
{
	struct sr_store *st;
	char *srcs[NW], name[32], text[64];
	int i;

	su_require();
	su_bucket_new(bucket, sizeof bucket, "t-s3-race");
	url = sr_asprintf("s3://%s/jobs?endpoint=%s&part_size=5MiB&concurrency=4", bucket,
	    su_env("SPOTRUN_TEST_S3_ENDPOINT"));
	top = tu_tmpdir("t-s3-race");
	st = su_store_open(url, 1);
	for (i = 0; i < NW; i++) {
		snprintf(name, sizeof name, "src%d", i);
		srcs[i] = tu_path(top, name);
		if (mkdir(srcs[i], 0755) == -1)
			sr_fatal("mkdir %s", srcs[i]);
		snprintf(text, sizeof text, "writer %d", i);
		tu_write(srcs[i], "f", text, strlen(text));
		tu_write_noise(srcs[i], "noise", 256 * 1024, (uint64_t)i);
	}
	test_commit_race(st, srcs);
	test_latest_race(st);
	test_restore_all(st, srcs);
	test_lost_reply();
	test_cancel_create();
	sr_store_close(st);
	su_bucket_rm(bucket);
	/* the same commit races on Azure Blob */
	if (au_start(bucket, sizeof bucket, "t-s3-race")) {
		free(url);
		url = sr_asprintf("az://%s/%s/jobs?endpoint=%s&block_size=1MiB&concurrency=4",
		    su_env("SPOTRUN_TEST_AZ_ACCOUNT"), bucket, su_env("SPOTRUN_TEST_AZ_ENDPOINT"));
		printf("# == Azurite: %s\n", url);
		st = su_store_open(url, 1);
		test_commit_race(st, srcs);
		test_latest_race(st);
		test_restore_all(st, srcs);
		sr_store_close(st);
		au_container_rm(bucket);
	}
	if (getenv("TU_KEEP") == NULL)
		tu_rmtree(top);
	for (i = 0; i < NW; i++)
		free(srcs[i]);
	free(top);
	free(url);
	return tap_done();
}
