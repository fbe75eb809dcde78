/*
 * t-ckpt-oom.c: the checkpoint format and pipeline under out-of-memory
 * (tests/oom.c fails the nth allocation, and with persist every one after
 * it): the manifest's parse, dump and load, a save of tensors and their
 * restore onto a file:// store, and a directory restore. Each scenario
 * counts its operation's allocations N once, then runs it for every n in
 * 1..N and persist in {0, 1}: each trial must succeed exactly or fail with
 * an out-of-memory error, leave the store as a trial may (a failed save
 * commits nothing, LATEST as it was; a restore never brings back an older
 * checkpoint), and free all it took. One ok() per scenario, with the first
 * bad trial as a diagnostic.
 *
 * Its own program, not t-ckpt's: the replaced malloc counts every block,
 * and t-ckpt measures a save's peak RSS and speed.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/err.h>

#include "tap.h"
#include "ckpt-util.h"
#include "ckpt-store-util.h"
#include "oom.h"
#include "oom-trial.h"

#include "catalog.h"
#include "ckpt.h"
#include "codec.h"
#include "jobkeys.h"
#include "latest.h"
#include "manifest.h"
#include "store.h"
#include "util.h"

#define KiB ((size_t)1024)
#define NT 3

/* A log sink that allocates nothing (the trials count every allocation):
 * only the last line. */
struct last_line {
	char line[SR_ERRMAX];
};

static void
keep_last(void *arg, const char *msg)
{
	struct last_line *l = arg;

	strlcpy(l->line, msg, sizeof l->line);
}

/* What every scenario's operation works on. */
struct world {
	struct sr_store *st;
	const char *job;
	int fresh;			/* save_prep: each save a new job's first */
	char jobname[32];
	struct last_line log;
	/* tensors: names, shapes, boxes; data of the step being saved, and
	 * the restore's buffers */
	struct sr_ckpt_tensor t[NT];
	uint64_t shape[NT][2], off[NT][2];
	uint8_t *data[NT], *back[NT];
	long long committed;		/* step of the newest checkpoint */
	long long step;			/* of the save being tried */
	char latest[64];		/* LATEST's text before the trial */
	/* manifests: checkpoint seq's, as loaded and as text; what a trial
	 * made */
	struct sr_manifest ref, m;
	char *text, *dumped;
	size_t len;
	uint64_t seq;
	long long restored;		/* the step a restore said */
	/* directory restore */
	char *src, *dst;
	/* a chunk through the codec: raw, encoded, decoded */
	uint8_t craw[64 * 1024], *cenc, cdec[64 * 1024];
	size_t ccap;
};

static void
opts(struct world *w, struct sr_ckpt_opts *o)
{
	tu_opts(o, w->job, 16 * KiB, 2, NULL);
	o->log = keep_last;
	o->log_arg = &w->log;
}

/* The tensors' bytes at a step: "a" and "b" change with it, "c" never
 * (its chunks are referenced, not stored again: the dedupe path). */
static void
fill(struct world *w, long long step)
{
	int i;

	for (i = 0; i < NT; i++)
		tu_fill(w->data[i], w->t[i].bytes, i == 2 ? 7 : (uint64_t)(step * 10 + i + 1));
}

static void
world_init(struct world *w, struct sr_store *st, const char *job)
{
	static const char *names[NT] = { "a", "b", "c" };
	static const int dtypes[NT] = { SR_DT_F32, SR_DT_BF16, SR_DT_U8 };
	static const uint64_t dims[NT][2] = { { 64, 160 }, { 3, 1000 }, { 40000, 1 } };
	int i;

	memset(w, 0, sizeof *w);
	w->st = st;
	w->job = job;
	w->committed = -1;
	for (i = 0; i < NT; i++) {
		w->shape[i][0] = dims[i][0];
		w->shape[i][1] = dims[i][1];
		w->t[i].name = names[i];
		w->t[i].dtype = dtypes[i];
		w->t[i].ndim = 2;
		w->t[i].shape = w->shape[i];
		w->t[i].offsets = w->off[i];
		w->t[i].sizes = w->shape[i];
		w->t[i].bytes = dims[i][0] * dims[i][1] * sr_dtype_size((enum sr_dtype)dtypes[i]);
		w->data[i] = sr_malloc(w->t[i].bytes);
		w->back[i] = sr_malloc(w->t[i].bytes);
	}
}

static void
world_free(struct world *w)
{
	int i;

	for (i = 0; i < NT; i++) {
		free(w->data[i]);
		free(w->back[i]);
	}
	sr_manifest_free(&w->ref);
	free(w->text);
}

/* LATEST's text (or "(absent)") into out: what a failed save must leave. */
static void
latest_text(struct world *w, char *out, size_t len)
{
	char *key = sr_jobkey_latest(w->job, NULL), *t = tu_store_text(w->st, key);

	snprintf(out, len, "%s", t[0] != '\0' ? t : "(absent)");
	free(t);
	free(key);
}

/* Restore the newest checkpoint (without injection) into the buffers and
 * compare it with the data of step: 0 if it is that step's, exactly (or,
 * for step -1, if there is none). */
static int
newest_is(struct world *w, long long step, char *why, size_t whylen)
{
	struct sr_ckpt_tensor t[NT];
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;
	char err[SR_ERRMAX];
	int i, rc;

	memcpy(t, w->t, sizeof t);
	for (i = 0; i < NT; i++) {
		memset(w->back[i], 0, w->t[i].bytes);
		t[i].data = w->back[i];
	}
	opts(w, &o);
	rc = sr_ckpt_restore_tensors(w->st, &o, t, NT, &s, err);
	if (step < 0 && rc == SR_CKPT_NONE)
		return 0;	/* none was, none is */
	if (step < 0)
		return snprintf(why, whylen, "a checkpoint where none was: rc %d", rc), -1;
	if (rc != 0)
		return snprintf(why, whylen, "the newest does not restore: %s", err), -1;
	if (s.step != step)
		return snprintf(why, whylen, "the newest is step %lld, not %lld", s.step, step), -1;
	fill(w, step);
	for (i = 0; i < NT; i++) {
		if (memcmp(w->back[i], w->data[i], w->t[i].bytes) != 0)
			return snprintf(why, whylen, "step %lld: tensor %s differs", step,
			    w->t[i].name), -1;
	}
	return 0;
}

/* ---- the operations: each returns its rc with err; check judges the
 * outcome (0, or -1 with why) and cleans what the trial made ---- */

struct op {
	const char *name;
	void (*prep)(struct world *w);		/* before arming (NULL-able) */
	int (*run)(struct world *w, char *err);
	int (*check)(struct world *w, int rc, char *why, size_t whylen);
};

static int
parse_run(struct world *w, char *err)
{
	return sr_manifest_parse(w->text, w->len, &w->m, err);
}

/* What a trial read into w->m (rc 0) is the manifest of w->text (then
 * dropped, whatever rc): 0, or -1 with why saying what (how) was read. */
static int
read_back(struct world *w, int rc, const char *how, char *why, size_t whylen)
{
	char err[SR_ERRMAX], *again = rc == 0 ? sr_manifest_dump(&w->m, NULL, err) : NULL;
	int bad = rc == 0 && (again == NULL || strcmp(again, w->text) != 0);

	free(again);
	sr_manifest_free(&w->m);
	if (bad)
		return snprintf(why, whylen, "%s, but not the manifest of the text", how), -1;
	return 0;
}

static int
parse_check(struct world *w, int rc, char *why, size_t whylen)
{
	return read_back(w, rc, "parsed", why, whylen);
}

static int
dump_run(struct world *w, char *err)
{
	w->dumped = sr_manifest_dump(&w->ref, NULL, err);
	return w->dumped != NULL ? 0 : -1;
}

static int
dump_check(struct world *w, int rc, char *why, size_t whylen)
{
	int bad = rc == 0 && strcmp(w->dumped, w->text) != 0;

	free(w->dumped);
	w->dumped = NULL;
	if (bad)
		return snprintf(why, whylen, "a dump that is not the manifest's text"), -1;
	return 0;
}

static int
load_run(struct world *w, char *err)
{
	return sr_catalog_load(w->st, w->job, w->seq, &w->m, err);
}

static int
load_check(struct world *w, int rc, char *why, size_t whylen)
{
	if (read_back(w, rc, "loaded", why, whylen) != 0)
		return -1;
	if (rc == SR_CATALOG_BAD)
		return snprintf(why, whylen, "out of memory called the manifest bad"), -1;
	return 0;
}

static void
save_prep(struct world *w)
{
	if (w->fresh) {
		/* no previous checkpoint: its manifest is not parsed (see main) */
		snprintf(w->jobname, sizeof w->jobname, "fresh%d", w->fresh++);
		w->job = w->jobname;
		w->committed = -1;
	}
	w->step = w->committed + 1;
	fill(w, w->step);
	latest_text(w, w->latest, sizeof w->latest);
}

static int
save_run(struct world *w, char *err)
{
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;
	int i, rc;

	opts(w, &o);
	for (i = 0; i < NT; i++)
		w->t[i].data = w->data[i];
	rc = sr_ckpt_save_tensors(w->st, &o, w->t, NT, w->step, &s, err);
	for (i = 0; i < NT; i++)
		w->t[i].data = NULL;
	return rc;
}

static int
save_check(struct world *w, int rc, char *why, size_t whylen)
{
	char now[64];

	if (rc == 0) {
		w->committed = w->step;
		return newest_is(w, w->step, why, whylen);
	}
	latest_text(w, now, sizeof now);
	if (strcmp(now, w->latest) != 0)
		return snprintf(why, whylen, "the save failed, but LATEST went from %s to %s",
		    w->latest, now), -1;
	return newest_is(w, w->committed, why, whylen);
}

static void
restore_prep(struct world *w)
{
	int i;

	for (i = 0; i < NT; i++)
		memset(w->back[i], 0, w->t[i].bytes);
}

static int
restore_run(struct world *w, char *err)
{
	struct sr_ckpt_tensor t[NT];
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;
	int i, rc;

	memcpy(t, w->t, sizeof t);
	for (i = 0; i < NT; i++)
		t[i].data = w->back[i];
	opts(w, &o);
	s.step = -2;
	rc = sr_ckpt_restore_tensors(w->st, &o, t, NT, &s, err);
	w->restored = s.step;
	return rc;
}

static int
restore_check(struct world *w, int rc, char *why, size_t whylen)
{
	int i;

	if (rc != 0)
		return 0;
	if (w->restored != w->committed)
		return snprintf(why, whylen, "restored step %lld, the newest is %lld", w->restored,
		    w->committed), -1;
	fill(w, w->committed);
	for (i = 0; i < NT; i++) {
		if (memcmp(w->back[i], w->data[i], w->t[i].bytes) != 0)
			return snprintf(why, whylen, "restored step %lld, tensor %s differs",
			    w->restored, w->t[i].name), -1;
	}
	return 0;
}

static void
dir_prep(struct world *w)
{
	struct stat sb;

	if (lstat(w->dst, &sb) == 0)
		tu_rmtree(w->dst);
}

static int
dir_run(struct world *w, char *err)
{
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;
	int rc;

	opts(w, &o);
	o.job = "dirjob";
	s.step = -2;
	rc = sr_ckpt_restore(w->st, &o, w->dst, &s, err);
	w->restored = s.step;
	return rc;
}

static int
dir_check(struct world *w, int rc, char *why, size_t whylen)
{
	struct stat sb;

	if (rc != 0) {
		/* the target is not half a tree: absent (it was), or whole */
		if (lstat(w->dst, &sb) == 0)
			return snprintf(why, whylen, "the restore failed, but %s exists", w->dst), -1;
		return 0;
	}
	if (w->restored != 2)
		return snprintf(why, whylen, "restored step %lld, the newest is 2", w->restored), -1;
	return tu_tree_cmp(w->src, w->dst, "", why, whylen) == 0 ? 0 : -1;
}

/* gc keeping 2, after a new save each time (so that there is always one
 * to collect): whatever it did, the two newest load and every pack they
 * name is there. */
static void
gc_prep(struct world *w)
{
	char err[SR_ERRMAX], why[SR_ERRMAX];

	save_prep(w);
	if (save_run(w, err) != 0 || save_check(w, 0, why, sizeof why) != 0)
		printf("# gc's save: %s%s\n", err, why);
}

static int
gc_run(struct world *w, char *err)
{
	struct sr_ckpt_opts o;

	opts(w, &o);
	o.gc_grace = -1;	/* no grace: what is off the chain goes at once */
	return sr_ckpt_gc_log(w->st, &o, w->job, 2, sr_now() - 86400, NULL, err);
}

static int
gc_check(struct world *w, int rc, char *why, size_t whylen)
{
	struct sr_catalog c;
	struct sr_manifest m;
	struct sr_object_info info;
	char err[SR_ERRMAX];
	uint64_t seq;
	size_t i;
	int k, bad = 0;

	(void)rc;
	if (sr_catalog_read(w->st, w->job, &c, err) != 0 || c.latest.state != SR_LATEST_OK)
		return snprintf(why, whylen, "no LATEST after gc: %s", err), -1;
	seq = c.latest.seq;
	sr_catalog_free(&c);
	for (k = 0; k < 2 && !bad; k++) {
		if (sr_catalog_load(w->st, w->job, seq, &m, err) != 0) {
			snprintf(why, whylen, "gc took checkpoint %" PRIu64 ": %s", seq, err);
			bad = 1;
		}
		for (i = 0; !bad && i < m.npacks; i++) {
			if (sr_store_head(w->st, m.packs[i], &info, err) != 0) {
				snprintf(why, whylen, "gc took pack %s of checkpoint %" PRIu64, m.packs[i],
				    seq);
				bad = 1;
			}
		}
		if (!bad && m.link != SR_LINK_PARENT)
			k = 2;
		seq = m.parent;
		sr_manifest_free(&m);
	}
	if (bad)
		return -1;
	return newest_is(w, w->committed, why, whylen);
}

/* A chunk of bf16-like values (a constant exponent byte, noise below)
 * through a new codec and back: zstd's contexts and their workspaces. */
static int
codec_run(struct world *w, char *err)
{
	struct sr_codec *c = sr_codec_new(1, err);
	enum sr_transform xf;
	size_t clen;
	int rc;

	if (c == NULL)
		return -1;
	rc = sr_codec_encode(c, w->craw, sizeof w->craw, -1, w->cenc, w->ccap, &clen, &xf, err);
	if (rc == 0)
		rc = sr_codec_decode(c, w->cenc, clen, xf, w->cdec, sizeof w->cdec, err);
	sr_codec_free(c);
	return rc;
}

static int
codec_check(struct world *w, int rc, char *why, size_t whylen)
{
	if (rc == 0 && memcmp(w->craw, w->cdec, sizeof w->craw) != 0)
		return snprintf(why, whylen, "the chunk decoded is not the chunk encoded"), -1;
	memset(w->cdec, 0, sizeof w->cdec);
	return 0;
}

/* ---- trials (tests/oom-trial.h) ---- */

struct trial {
	struct world *w;
	const struct op *op;
};

static int
trial_run(void *arg, char *err)
{
	struct trial *t = arg;

	return t->op->run(t->w, err);
}

static int
trial_check(void *arg, int rc, char *why)
{
	struct trial *t = arg;

	return t->op->check(t->w, rc, why, SR_ERRMAX) == 0;
}

static void
trial_reset(void *arg)
{
	struct trial *t = arg;

	if (t->op->prep != NULL)
		t->op->prep(t->w);	/* the next run's state */
}

/* Run op under the injection of scope: every n of its count, both ways.
 * One ok() for all. */
static void
scenario(struct world *w, const struct op *op, enum oom_scope scope)
{
	struct trial t = { w, op };
	char name[160];

	snprintf(name, sizeof name, "%s (%s)", op->name,
	    scope == OOM_ALL ? "every allocation" : "spotrun's allocations");
	trial_reset(&t);
	oom_trial(name, scope, trial_run, trial_check, trial_reset, &t);
}

static const struct op op_parse = { "sr_manifest_parse", NULL, parse_run, parse_check };
static const struct op op_dump = { "sr_manifest_dump", NULL, dump_run, dump_check };
static const struct op op_load = { "sr_catalog_load", NULL, load_run, load_check };
static const struct op op_save = { "sr_ckpt_save_tensors", save_prep, save_run, save_check };
static const struct op op_first = { "sr_ckpt_save_tensors (a job's first save)", save_prep,
	save_run, save_check };
static const struct op op_restore = { "sr_ckpt_restore_tensors", restore_prep, restore_run,
	restore_check };
static const struct op op_gc = { "sr_ckpt_gc_log", gc_prep, gc_run, gc_check };
static const struct op op_codec = { "sr_codec_encode and sr_codec_decode", NULL, codec_run,
	codec_check };
static const struct op op_dir = { "sr_ckpt_restore (a directory)", dir_prep, dir_run,
	dir_check };

/* Two checkpoints of the tensors (without injection): a restore that
 * fell back would bring the older one. */
static int
two_saves(struct world *w)
{
	char err[SR_ERRMAX], why[SR_ERRMAX];
	int k;

	for (k = 0; k < 2; k++) {
		save_prep(w);
		if (save_run(w, err) != 0 || save_check(w, 0, why, sizeof why) != 0) {
			printf("# set-up save: %s%s\n", err, why);
			return -1;
		}
	}
	return 0;
}

/* A directory of every kind of entry, saved as steps 1 and 2 (its files
 * changed between them) of job dirjob. */
static int
dir_saves(struct world *w, const char *top)
{
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;
	char err[SR_ERRMAX];
	int k;

	w->src = tu_path(top, "src");
	w->dst = tu_path(top, "dst");
	mkdir(w->src, 0755);
	tu_mkdir(w->src, "d", 0750);
	tu_symlink(w->src, "d/l", "../f");
	tu_write(w->src, "e", "", 0);
	for (k = 1; k <= 2; k++) {
		tu_write_noise(w->src, "f", 50 * KiB, (uint64_t)k);
		tu_write_noise(w->src, "d/g", 20 * KiB, 9);
		opts(w, &o);
		o.job = "dirjob";
		if (sr_ckpt_save(w->st, &o, w->src, k, &s, err) != 0) {
			printf("# set-up save of a directory: %s\n", err);
			return -1;
		}
	}
	return 0;
}

int
main(void)
{
	struct sr_store *st;
	struct world w;
	char *top, *url, err[SR_ERRMAX];
	struct sr_object_info info;
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* OpenSSL's error queue of this thread is made at its first error,
	 * once: made now, it is not taken for a trial's leak */
	ERR_raise(ERR_LIB_USER, 1);
	ERR_clear_error();
	top = tu_tmpdir("t-ckpt-oom");
	url = sr_asprintf("file://%s/store", top);
	if (sr_store_open(url, &st, err) != 0) {
		ok(0, "open %s: %s", url, err);
		return tap_done();
	}
	world_init(&w, st, "tj");
	for (i = 0; i < sizeof w.craw; i += 2) {
		w.craw[i] = (uint8_t)(i * 2654435761u >> 13);
		w.craw[i + 1] = 0x3f;
	}
	w.ccap = sr_codec_bound(sizeof w.craw);
	w.cenc = sr_malloc(w.ccap);
	if (two_saves(&w) != 0 || sr_catalog_load(st, w.job, 1, &w.ref, err) != 0 ||
	    (w.text = sr_manifest_dump(&w.ref, &w.len, err)) == NULL) {
		ok(0, "set-up: two checkpoints of tensors: %s", err);
		return tap_done();
	}
	w.seq = 1;
	ok(w.ref.ntensors == NT && sr_store_head(st, "tj/LATEST", &info, err) == 0,
	    "set-up: two checkpoints of %d tensors", NT);

	/*
	 * jansson's parser does not survive its own allocations failing: its
	 * lexer drops the byte it could not keep (a string or number read
	 * short) and then asserts (load.c, lex_unget_unsave). So what parses
	 * a manifest is tried with spotrun's allocations failing; what only
	 * writes one (the dump) and the codec with every allocation too,
	 * zstd's, jansson's, the C library's.
	 */
	scenario(&w, &op_parse, OOM_OURS);
	scenario(&w, &op_dump, OOM_ALL);
	scenario(&w, &op_load, OOM_OURS);
	scenario(&w, &op_save, OOM_OURS);
	scenario(&w, &op_restore, OOM_OURS);
	scenario(&w, &op_gc, OOM_OURS);
	/* (not under every allocation failing: the file store's SHA-256
	 * setup, EVP_DigestInit_ex, keeps 48 bytes each time OpenSSL's own
	 * allocation in it fails) */
	w.fresh = 1;
	scenario(&w, &op_first, OOM_OURS);
	w.fresh = 0;
	w.job = "tj";
	scenario(&w, &op_codec, OOM_ALL);
	if (dir_saves(&w, top) != 0)
		ok(0, "set-up: two checkpoints of a directory");
	else
		scenario(&w, &op_dir, OOM_OURS);

	world_free(&w);
	free(w.cenc);
	sr_store_close(st);
	tu_rmtree(top);
	free(w.src);
	free(w.dst);
	free(url);
	free(top);
	return tap_done();
}
