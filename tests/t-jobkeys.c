/*
 * t-jobkeys.c: common/jobkeys, the keys of a job's objects: the exact text
 * of every key and prefix for a few job names, steps and epochs (what the
 * stores of earlier versions hold: a change here strands their
 * checkpoints), the keys read back (round trips, and the near misses that
 * must not count: a gc deletes only what sr_jobkey_is_pack accepts), and
 * a builder out of memory (NULL with err, no abort: ckpt/ and lib/ rely
 * on it).
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobkeys.h"
#include "oom.h"
#include "tap.h"
#include "util.h"

/* is_str on a key the test owns, then freed. */
#define is_key(got, want, ...) do {                                     \
	char *k_ = (got);                                               \
	is_str(k_, want, __VA_ARGS__);                                  \
	free(k_);                                                       \
} while (0)

static const char *const jobs[] = { "j", "team/exp-1.a", "A0/b_c/9" };

/* Every builder's text for job. */
static void
builders(const char *job)
{
	char want[256], fmt[256];

	snprintf(want, sizeof want, "%s/LATEST", job);
	is_key(sr_jobkey_latest(job, NULL), want, "%s: LATEST", job);
	snprintf(fmt, sizeof fmt, SR_JOBKEY_LATEST_FMT, job);
	is_str(fmt, want, "%s: SR_JOBKEY_LATEST_FMT names the same key", job);
	snprintf(want, sizeof want, "%s/FINISHED", job);
	is_key(sr_jobkey_finished(job, NULL), want, "%s: FINISHED", job);

	snprintf(want, sizeof want, "%s/manifests/0000000000.json", job);
	is_key(sr_jobkey_manifest(job, 0, NULL), want, "%s: manifest of seq 0", job);
	snprintf(want, sizeof want, "%s/manifests/0000000042.json", job);
	is_key(sr_jobkey_manifest(job, 42, NULL), want, "%s: manifest of seq 42, zero-padded", job);
	snprintf(want, sizeof want, "%s/manifests/9999999999.json", job);
	is_key(sr_jobkey_manifest(job, SR_SEQ_MAX, NULL), want, "%s: manifest of the largest seq",
	    job);

	snprintf(want, sizeof want, "%s/packs/0000000042-0a1b2c3d4e5f6071.tar", job);
	is_key(sr_jobkey_pack(job, 42, "0a1b2c3d4e5f6071", NULL), want, "%s: pack", job);
	snprintf(want, sizeof want, "%s/packs/0000000000-ff.tar", job);
	is_key(sr_jobkey_pack(job, 0, "ff", NULL), want, "%s: pack of seq 0", job);

	snprintf(want, sizeof want, "%s/parts/7-120-2.json", job);
	is_key(sr_jobkey_node_part(job, 7, 120, 2, NULL), want, "%s: a gang node's part", job);
	snprintf(want, sizeof want, "%s/parts/0-0-1.json", job);
	is_key(sr_jobkey_node_part(job, 0, 0, 1, NULL), want, "%s: a node's part at epoch 0",
	    job);
	snprintf(want, sizeof want, "%s/parts/7-120-rank2.json", job);
	is_key(sr_jobkey_rank_part(job, 7, 120, 2, NULL), want, "%s: a rank's part", job);
	snprintf(want, sizeof want, "%s/parts/18446744073709551615--1-rank0.json", job);
	is_key(sr_jobkey_rank_part(job, UINT64_MAX, -1, 0, NULL), want,
	    "%s: a rank's part, largest epoch, negative step", job);
	snprintf(want, sizeof want, "%s/parts/7-", job);
	is_key(sr_jobkey_parts_of_epoch(job, 7, NULL), want, "%s: the parts of epoch 7", job);

	snprintf(want, sizeof want, "%s/attempts/20250102T030405-4242-0003.json", job);
	is_key(sr_jobkey_attempt(job, "20250102T030405-4242", 3, NULL), want, "%s: attempt 3",
	    job);
	snprintf(want, sizeof want, "%s/attempts/r-12345.json", job);
	is_key(sr_jobkey_attempt(job, "r", 12345, NULL), want, "%s: attempt 12345, unpadded",
	    job);

	snprintf(want, sizeof want, "%s/manifests/", job);
	is_key(sr_jobkey_prefix(job, SR_JOBKEY_MANIFESTS, NULL), want, "%s: manifests prefix", job);
	snprintf(want, sizeof want, "%s/packs/", job);
	is_key(sr_jobkey_prefix(job, SR_JOBKEY_PACKS, NULL), want, "%s: packs prefix", job);
	snprintf(want, sizeof want, "%s/parts/", job);
	is_key(sr_jobkey_prefix(job, SR_JOBKEY_PARTS, NULL), want, "%s: parts prefix", job);
	snprintf(want, sizeof want, "%s/attempts/", job);
	is_key(sr_jobkey_prefix(job, SR_JOBKEY_ATTEMPTS, NULL), want, "%s: attempts prefix", job);
}

/* What each builder writes, its reader takes back. */
static void
round_trips(const char *job)
{
	static const uint64_t seqs[] = { 0, 1, 42, 1000000000, SR_SEQ_MAX };
	static const struct { uint64_t epoch; long long step; int rank; } parts[] = {
		{ 0, 0, 1 }, { 7, 120, 2 }, { UINT64_MAX, 9223372036854775807LL, 2147483647 },
		{ 3, -5, 0 },
	};
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(seqs); i++) {
		char *k = sr_jobkey_manifest(job, seqs[i], NULL), *p;
		uint64_t seq = 12345;

		ok(sr_jobkey_manifest_seq(job, k, &seq) == 0 && seq == seqs[i],
		    "%s: manifest of %" PRIu64 " read back", job, seqs[i]);
		p = sr_jobkey_pack(job, seqs[i], "0a", NULL);
		ok(sr_jobkey_is_pack(job, p), "%s: pack of %" PRIu64 " is a pack", job, seqs[i]);
		ok(!sr_jobkey_is_pack(job, k) && sr_jobkey_manifest_seq(job, p, &seq) == -1,
		    "%s: a manifest is no pack, a pack no manifest", job);
		free(k);
		free(p);
	}
	for (i = 0; i < SR_ARRAY_LEN(parts); i++) {
		char *k = sr_jobkey_rank_part(job, parts[i].epoch, parts[i].step, parts[i].rank, NULL);
		uint64_t epoch = 1;
		long long step = 1;
		int rank = -1;

		ok(sr_jobkey_rank_part_parse(job, k, &epoch, &step, &rank) == 0 &&
		    epoch == parts[i].epoch && step == parts[i].step && rank == parts[i].rank,
		    "%s: rank part %" PRIu64 "/%lld/%d read back", job, parts[i].epoch, parts[i].step,
		    parts[i].rank);
		free(k);
	}
}

/* Keys that look like the job's but are not. */
static void
near_misses(void)
{
	uint64_t seq = 0, epoch = 0;
	long long step = 0;
	int rank = 0;

	ok(sr_jobkey_manifest_seq("j", "j/manifests/000000042.json", &seq) == -1,
	    "9 digits: no manifest");
	ok(sr_jobkey_manifest_seq("j", "j/manifests/00000000042.json", &seq) == -1,
	    "11 digits: no manifest");
	ok(sr_jobkey_manifest_seq("j", "j/manifests/0000000042.json.tmp", &seq) == -1,
	    "other suffix: no manifest");
	ok(sr_jobkey_manifest_seq("j", "j/manifests/x/0000000042.json", &seq) == -1,
	    "nested key: no manifest");
	ok(sr_jobkey_manifest_seq("j", "jj/manifests/0000000042.json", &seq) == -1,
	    "another job's: no manifest");
	ok(sr_jobkey_manifest_seq("j", "j/x/manifests/0000000042.json", &seq) == -1,
	    "a nested job's: no manifest");
	ok(sr_jobkey_manifest_seq("j/x", "j/manifests/0000000042.json", &seq) == -1,
	    "the parent job's: no manifest of the nested job");
	ok(sr_jobkey_manifest_seq("j", "j/packs/0000000042.json", &seq) == -1,
	    "under packs/: no manifest");
	ok(sr_jobkey_manifest_seq("j", "j", &seq) == -1 && sr_jobkey_manifest_seq("j", "", &seq) == -1,
	    "the job name, the empty key: no manifest");
	is_int(seq, 0, "a key refused leaves seq alone");

	ok(sr_jobkey_is_pack("j", "j/packs/0000000003-0a1b2c.tar"), "pack key recognised");
	ok(!sr_jobkey_is_pack("j", "j/packs/0000000003-0a1b2c.tar.tmp"), "other suffix: no pack");
	ok(!sr_jobkey_is_pack("j", "j/packs/3-0a.tar"), "short seq: no pack");
	ok(!sr_jobkey_is_pack("j", "j/packs/0000000003-.tar"), "no hex: no pack");
	ok(!sr_jobkey_is_pack("j", "j/packs/0000000003-0A.tar"), "upper-case hex: no pack");
	ok(!sr_jobkey_is_pack("j", "j/packs/00000000030a.tar"), "no dash: no pack");
	ok(!sr_jobkey_is_pack("j", "j/packs/x/0000000003-0a.tar"), "nested key: no pack");
	ok(!sr_jobkey_is_pack("j", "jj/packs/0000000003-0a.tar"), "another job's: no pack");
	ok(!sr_jobkey_is_pack("j", "j/manifests/0000000003-0a.tar"), "under manifests/: no pack");

	ok(sr_jobkey_rank_part_parse("j", "j/parts/7-120-2.json", &epoch, &step, &rank) == -1,
	    "a gang node's part is no rank's part");
	ok(sr_jobkey_rank_part_parse("j", "j/parts/7-120-rank2.json.tmp", &epoch, &step,
	    &rank) == -1, "other suffix: no rank's part");
	ok(sr_jobkey_rank_part_parse("j", "j/parts/7-120-rank2", &epoch, &step, &rank) == -1,
	    "no suffix: no rank's part");
	ok(sr_jobkey_rank_part_parse("j", "jj/parts/7-120-rank2.json", &epoch, &step,
	    &rank) == -1, "another job's: no rank's part");
	ok(sr_jobkey_rank_part_parse("j", "j/packs/7-120-rank2.json", &epoch, &step,
	    &rank) == -1, "under packs/: no rank's part");
	ok(epoch == 0 && step == 0 && rank == 0, "a key refused leaves epoch, step and rank alone");

	ok(sr_jobkey_is_part("j", "j/parts/7-120-2.json"), "a gang node's part is a part");
	ok(sr_jobkey_is_part("j", "j/parts/7-120-rank2.json"), "a rank's part is a part");
	ok(!sr_jobkey_is_part("j", "j/parts/7-120-2.json.tmp") &&
	    !sr_jobkey_is_part("j", "j/parts/7-120-rank2") &&
	    !sr_jobkey_is_part("j", "j/parts/notes.txt"), "other names under parts/: no part");
	ok(!sr_jobkey_is_part("j", "jj/parts/7-120-2.json") &&
	    !sr_jobkey_is_part("j", "j/packs/7-120-2.json"), "another job's, under packs/: no part");

	ok(sr_jobkey_is_attempt("j/attempts/r-0001.json"), "an attempt record");
	ok(!sr_jobkey_is_attempt("j/attempts/r-0001.json.tmp"), "other suffix: no record");
	ok(!sr_jobkey_is_attempt("json") && !sr_jobkey_is_attempt(""), "short keys: no record");
}

/* A builder out of memory: NULL and what failed, never an abort. */
static void
out_of_memory(void)
{
	char err[SR_ERRMAX] = "", *k;

	if (!oom_usable()) {
		tap_skip("no out-of-memory injection under AddressSanitizer");
		tap_skip("no out-of-memory injection under AddressSanitizer");
		return;
	}
	oom_arm(1, 0, OOM_OURS);
	k = sr_jobkey_manifest("j", 1, err);
	oom_disarm();
	ok(k == NULL, "manifest key out of memory: NULL");
	free(k);
	/* "j/manifests/0000000001.json" and its NUL */
	is_str(err, "allocate 28 bytes: out of memory", "and says so");
}

int
main(void)
{
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(jobs); i++) {
		builders(jobs[i]);
		round_trips(jobs[i]);
	}
	near_misses();
	out_of_memory();
	return tap_done();
}
