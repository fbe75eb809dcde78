/*
 * gangparts.c: see gangparts.h. A part is an ordinary manifest (version, job, seq
 * of the save that wrote it, its entries with their chunks in J/packs/),
 * so it is read and checked as one; node 0 copies its entries, the packs
 * staying where the part's save put them. The ranks of a library job
 * write parts of tensors the same way: rank 0 copies their pieces, joins
 * the shares of replicated tensors into one piece each, and checks that
 * the pieces tile every tensor before it commits.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "gangparts.h"
#include "jobkeys.h"
#include "latest.h"
#include "pathsafe.h"
#include "reshard.h"
#include "util.h"

struct other_step {
	const char *job;
	uint64_t epoch;
	long long step, found;
	int rank;
};

static int
other_step_cb(const struct sr_object_info *info, void *arg)
{
	struct other_step *x = arg;
	uint64_t epoch;
	long long s;
	int rank;

	if (sr_jobkey_rank_part_parse(x->job, info->key, &epoch, &s, &rank) == 0 &&
	    epoch == x->epoch && rank == x->rank && s != x->step)
		x->found = s;
	return 0;
}

/* ", rank R saved step T instead" when the store holds a part of rank R
 * at this epoch for another step than this save's, else "". */
static void
other_step(struct sr_store *st, const struct sr_ckpt_opts *o, long long step, int rank,
    char *out, size_t len)
{
	char *prefix = sr_jobkey_parts_of_epoch(o->job, o->epoch, NULL), err[SR_ERRMAX];
	struct other_step x = { o->job, o->epoch, step, -1, rank };

	/* a hint for the message: without memory, none */
	out[0] = '\0';
	if (prefix != NULL && sr_store_list(st, prefix, other_step_cb, &x, err) == 0 &&
	    x.found >= 0)
		snprintf(out, len, " (rank %d saved step %lld: the ranks saved different steps)",
		    rank, x.found);
	free(prefix);
}

int
sr_parts_put(struct sr_store *st, const struct sr_ckpt_opts *o, const struct sr_manifest *m,
    char *err)
{
	size_t len;
	char *text = sr_manifest_dump(m, &len, err);
	int rc;

	if (text == NULL)
		return sr_err_prefix(err, "save part of %s", o->job);
	rc = sr_store_put(st, o->part, text, len, SR_PUT_OVERWRITE, NULL, NULL, err);
	free(text);
	if (rc != SR_STORE_OK)
		return sr_err_prefix(err, "save part of %s", o->job);
	return 0;
}

/* Part i of o->merge missing at the end of the wait (deadline: at the
 * deadline, else after merge_wait): SR_CKPT_LATE with err. */
static int
part_late(struct sr_store *st, const struct sr_ckpt_opts *o, size_t i, long long step,
    int deadline, char *err)
{
	char other[96];
	int rank = (int)i + 1;

	if (!o->merge_ranks) {
		if (deadline)
			sr_err(err, "checkpoint of %s missed its deadline waiting for part %s "
			    "(another node of the gang did not save its part); nothing committed",
			    o->job, o->merge[i]);
		else
			sr_err(err, "checkpoint of %s: part %s did not come within %gs "
			    "(another node of the gang did not save its part); nothing committed",
			    o->job, o->merge[i], o->merge_wait);
		return SR_CKPT_LATE;
	}
	other_step(st, o, step, rank, other, sizeof other);
	if (deadline)
		sr_err(err, "checkpoint of %s missed its deadline: rank %d did not save step %lld "
		    "(no part %s)%s; nothing committed", o->job, rank, step, o->merge[i], other);
	else
		sr_err(err, "checkpoint of %s: rank %d did not save step %lld within %gs (no part "
		    "%s)%s; nothing committed", o->job, rank, step, o->merge_wait, o->merge[i], other);
	return SR_CKPT_LATE;
}

/* Wait for part i and read it: 0 with *buf, or SR_CKPT_LATE, SR_CKPT_CANCELLED, -1. */
static int
wait_part(struct sr_store *st, const struct sr_ckpt_opts *o, size_t i, long long step,
    double until, void **buf, size_t *len, char *err)
{
	const char *key = o->merge[i];
	/* A notice's part comes within a window of seconds or less (0.4 s
	 * in bench/goodput-gang.sh's scaled traces), mostly a few
	 * milliseconds after this node's own: every 0.01 s for the first
	 * 0.25 s (a part that came just after a look waited up to 0.08 s
	 * for the next when the looks doubled from the first, the whole
	 * gang stopped meanwhile), then doubling to every 0.1 s, a GET each. */
	double pause = 0.01, began = sr_mono();

	for (;;) {
		int rc = sr_store_get(st, key, SR_MANIFEST_MAX, buf, len, NULL, err);

		if (rc == SR_STORE_OK)
			return 0;
		if (rc != SR_STORE_NOTFOUND)
			return sr_err_prefix(err, "save %s: read part", o->job);
		if (sr_flag_get(o->cancel))
			return sr_err(err, "checkpoint of %s cancelled while it waited for part %s; "
			    "nothing committed", o->job, key), SR_CKPT_CANCELLED;
		if (sr_ckpt_deadline(o) > 0 && sr_now() >= sr_ckpt_deadline(o))
			return part_late(st, o, i, step, 1, err);
		if (until > 0 && sr_now() >= until)
			return part_late(st, o, i, step, 0, err);
		sr_sleep(pause);
		if (sr_mono() - began >= 0.25)
			pause = pause * 2 > 0.1 ? 0.1 : pause * 2;
	}
}

/* Copy the chunks of d (another manifest's) onto n of m, their pack keys
 * interned in m: 0, or -1 with err on out-of-memory. */
static int
copy_chunks(struct sr_manifest *m, struct sr_mentry *n, const struct sr_mentry *d, char *err)
{
	size_t k;

	for (k = 0; k < d->nchunks; k++) {
		struct sr_mchunk *c = sr_mentry_add_chunk(n, err);
		const char *pack = c != NULL ? sr_manifest_intern(m, d->chunks[k].pack, err) : NULL;

		if (pack == NULL) {
			if (c != NULL)
				n->nchunks--;	/* not half a chunk */
			return -1;
		}
		*c = d->chunks[k];
		c->pack = pack;
		sr_manifest_note_chunk(m, c);
		m->stats.chunks++;
		m->stats.stored_bytes += sr_mchunk_stored(c);
	}
	return 0;
}

/* Copy entry e of another manifest into m (its pack keys interned in m):
 * 0, or -1 with err on out-of-memory. */
static int
copy_entry(struct sr_manifest *m, const struct sr_mentry *e, char *err)
{
	struct sr_mentry *n = sr_manifest_add(m, e->path, e->type, err);

	if (n == NULL)
		return -1;
	n->mode = e->mode;
	n->mtime_ns = e->mtime_ns;
	n->size = e->size;
	if (e->target != NULL && (n->target = sr_try_strdup(e->target, err)) == NULL)
		return -1;
	return copy_chunks(m, n, e, err);
}

/* ---- tensors of ranks ---- */

static const char *
tensor_desc(const struct sr_mtensor *t, char *buf, size_t len)
{
	char dims[200];

	snprintf(buf, len, "%s of shape %s", sr_dtype_name(t->dtype),
	    sr_dims_str(t->shape, t->ndim, dims, sizeof dims));
	return buf;
}

static int
by_tensor_name(const void *a, const void *b)
{
	return strcmp(((const struct sr_mtensor *)a)->name, ((const struct sr_mtensor *)b)->name);
}

/* Copy piece p of another manifest into t of m (pack keys interned): 0,
 * or -1 with err on out-of-memory. */
static int
copy_piece(struct sr_manifest *m, struct sr_mtensor *t, const struct sr_mpiece *p, char *err)
{
	struct sr_mpiece *n = sr_mtensor_add_piece(t, p->offsets, p->sizes, err);

	if (n == NULL)
		return -1;
	n->data.size = p->data.size;
	n->share = p->share;
	n->share_first = p->share_first;
	n->share_of = p->share_of;
	n->share_off = p->share_off;
	return copy_chunks(m, &n->data, &p->data, err);
}

/* The tensors of rank's part p join m's: a tensor m has must have the
 * same type and shape; one it lacks is added (m's stay sorted). -1 with
 * err: a mismatch, or out-of-memory (sr_err_is_oom). */
static int
merge_tensors(struct sr_manifest *m, const struct sr_manifest *p, int rank, char *err)
{
	char a[240], b[240], q[SR_TENSOR_NAME_MAX + 8];
	size_t i, k, have = m->ntensors;

	if (p->stats.world_size != m->stats.world_size)
		return sr_err(err, "rank %d saved with world_size %d, rank 0 with %d", rank,
		    p->stats.world_size, m->stats.world_size);
	if (p->stats.step != m->stats.step)
		return sr_err(err, "rank %d saved step %lld, rank 0 step %lld", rank, p->stats.step,
		    m->stats.step);
	for (i = 0; i < p->ntensors; i++) {
		const struct sr_mtensor *pt = &p->tensors[i];
		/* among the sorted tensors before this part */
		struct sr_mtensor *t = sr_manifest_find_tensor(m, have, pt->name);

		if (t != NULL &&
		    (t->dtype != pt->dtype || t->ndim != pt->ndim ||
		    memcmp(t->shape, pt->shape, sizeof t->shape) != 0))
			return sr_err(err, "tensor %s: rank %d registered it as %s, the ranks below "
			    "as %s", sr_path_quote(pt->name, q, sizeof q), rank,
			    tensor_desc(pt, a, sizeof a), tensor_desc(t, b, sizeof b));
		if (t == NULL) {
			if ((t = sr_manifest_add_tensor(m, pt->name, pt->dtype, pt->ndim, pt->shape,
			    err)) == NULL)
				return -1;
			m->stats.files++;
		}
		for (k = 0; k < pt->npieces; k++) {
			if (copy_piece(m, t, &pt->pieces[k], err) == -1)
				return -1;
		}
	}
	if (m->ntensors > have)
		sr_sort(m->tensors, m->ntensors, sizeof *m->tensors, by_tensor_name);
	return 0;
}

static int
by_share(const void *a, const void *b)
{
	const struct sr_mpiece *p = *(const struct sr_mpiece *const *)a;
	const struct sr_mpiece *q = *(const struct sr_mpiece *const *)b;

	return p->share_first < q->share_first ? -1 : p->share_first > q->share_first;
}

/* Chunks [from, to) of the n of replicated tensor q are in no share. */
static int
no_share(char *err, const char *q, uint64_t from, uint64_t to, uint64_t n)
{
	char range[64];

	if (to - from == 1)
		snprintf(range, sizeof range, "chunk %" PRIu64, from);
	else
		snprintf(range, sizeof range, "chunks %" PRIu64 " to %" PRIu64, from, to - 1);
	return sr_err(err, "tensor %s (replicated): no rank's share holds %s of its %" PRIu64
	    " (a rank did not register it)", q, range, n);
}

/* The shares of replicated tensor t, joined into one piece of its whole
 * box in place of them: every chunk in exactly one share. */
static int
join_shares(struct sr_mtensor *t, char *err)
{
	const struct sr_mpiece **sh = sr_try_calloc(t->npieces + 1, sizeof *sh, err);
	struct sr_mpiece whole;
	uint64_t next = 0, off = 0, of = 0, bytes;
	char q[SR_TENSOR_NAME_MAX + 8];
	size_t i, k, n = 0, w;
	int rc = 0;

	sr_path_quote(t->name, q, sizeof q);
	if (sh == NULL)
		return sr_err_prefix(err, "tensor %s", q);
	for (i = 0; i < t->npieces; i++) {
		if (t->pieces[i].share)
			sh[n++] = &t->pieces[i];
	}
	if (n == 0) {
		free(sh);
		return 0;
	}
	sr_sort(sh, n, sizeof *sh, by_share);
	of = sh[0]->share_of;
	bytes = sr_dtype_size(t->dtype);
	for (w = 0; w < (size_t)t->ndim; w++)
		bytes *= t->shape[w];
	for (i = 0; i < n && rc == 0; i++) {
		if (sh[i]->share_of != of)
			rc = sr_err(err, "tensor %s (replicated): the ranks cut it into %" PRIu64
			    " and %" PRIu64 " chunks (they must save with the same chunk_size)", q, of,
			    sh[i]->share_of);
		else if (sh[i]->share_first > next)
			rc = no_share(err, q, next, sh[i]->share_first, of);
		else if (sh[i]->share_first < next)
			rc = sr_err(err, "tensor %s (replicated): chunk %" PRIu64 " is in two ranks' "
			    "shares", q, sh[i]->share_first);
		else if (sh[i]->share_off != off)
			rc = sr_err(err, "tensor %s (replicated): the share of chunk %" PRIu64 " starts "
			    "at byte %" PRIu64 ", not %" PRIu64 " (the ranks must save with the same "
			    "chunk_size)", q, next, sh[i]->share_off, off);
		next += sh[i]->data.nchunks;
		off += sh[i]->data.size;
	}
	if (rc == 0 && (next != of || off != bytes))
		rc = no_share(err, q, next, of, of);
	if (rc == 0) {
		memset(&whole, 0, sizeof whole);
		memcpy(whole.offsets, sh[0]->offsets, sizeof whole.offsets);
		memcpy(whole.sizes, sh[0]->sizes, sizeof whole.sizes);
		whole.data = sh[0]->data;
		whole.data.chunks = NULL;
		whole.data.nchunks = whole.data.chunks_cap = 0;
		whole.data.size = bytes;
		if ((whole.data.path = sr_try_strdup(sh[0]->data.path, err)) == NULL)
			rc = -1;
		for (i = 0; i < n && rc == 0; i++) {
			for (k = 0; k < sh[i]->data.nchunks && rc == 0; k++) {
				struct sr_mchunk *c = sr_mentry_add_chunk(&whole.data, err);

				if (c == NULL)
					rc = -1;
				else
					*c = sh[i]->data.chunks[k];
			}
		}
		if (rc != 0) {
			/* the tensor as it was */
			free(whole.data.path);
			free(whole.data.chunks);
			free(sh);
			return sr_err_prefix(err, "tensor %s", q);
		}
	}
	if (rc == 0) {
		/* the shares out, the whole piece in */
		for (i = 0, w = 0; i < t->npieces; i++) {
			if (t->pieces[i].share) {
				free(t->pieces[i].data.path);
				free(t->pieces[i].data.chunks);
			} else
				t->pieces[w++] = t->pieces[i];
		}
		t->npieces = w;
		t->pieces[t->npieces++] = whole;
	}
	free(sh);
	return rc;
}

/* Every tensor of m: shares joined, pieces tiling it. */
static int
join_tensors(struct sr_manifest *m, char *err)
{
	size_t i;

	for (i = 0; i < m->ntensors; i++) {
		if (join_shares(&m->tensors[i], err) != 0 || sr_pieces_tile(&m->tensors[i], err) != 0)
			return -1;
	}
	return 0;
}

/* The node whose rank's folder holds path (rank-R or under rank-R/, R in
 * decimal as spotrun.rank_dir names it: R / node_ranks, R below
 * node_ranks * nodes), or -1: a path of no rank's, or of a rank this gang
 * does not run (a larger gang's before). */
static int
path_node(const char *path, int node_ranks, int nodes)
{
	const char *d, *p;
	long r = 0;

	if (node_ranks < 1 || strncmp(path, "rank-", 5) != 0)
		return -1;
	d = path + 5;	/* within the string: it has the prefix */
	if (*d < '0' || *d > '9' || (*d == '0' && d[1] >= '0' && d[1] <= '9'))
		return -1;
	for (p = d; *p >= '0' && *p <= '9'; p++) {
		r = r * 10 + (*p - '0');
		if (r >= (long)node_ranks * nodes)
			return -1;
	}
	if (*p != '\0' && *p != '/')
		return -1;
	return (int)(r / node_ranks);
}

/* Drop m's entries in the rank folders of nodes 1 .. nodes - 1 (node 0's
 * copies, restored from the previous checkpoint), with their counts. */
static void
drop_others(struct sr_manifest *m, int node_ranks, int nodes)
{
	size_t i, k, kept = 0;

	for (i = 0; i < m->nentries; i++) {
		struct sr_mentry *e = &m->entries[i];

		if (path_node(e->path, node_ranks, nodes) <= 0) {
			m->entries[kept++] = *e;
			continue;
		}
		m->stats.files -= e->type == SR_MT_FILE;
		for (k = 0; k < e->nchunks; k++) {
			m->stats.chunks--;
			m->stats.stored_bytes -= sr_mchunk_stored(&e->chunks[k]);
		}
		free(e->path);
		free(e->target);
		free(e->chunks);
	}
	m->nentries = kept;
}

int
sr_parts_merge(struct sr_store *st, const struct sr_ckpt_opts *o, struct sr_manifest *m,
    char *err)
{
	double until = o->merge_wait > 0 ? sr_now() + o->merge_wait : 0;
	size_t i, k, have;
	int rc, owner, nodes = (int)o->nmerge + 1;

	if (o->node_ranks > 0)
		drop_others(m, o->node_ranks, nodes);
	for (i = 0; i < o->nmerge; i++) {
		struct sr_manifest p;
		void *buf;
		size_t len;

		if ((rc = wait_part(st, o, i, m->stats.step, until, &buf, &len, err)) != 0)
			return rc;
		rc = sr_manifest_parse(buf, len, &p, err);
		free(buf);
		if (rc == 0)
			rc = sr_manifest_validate(&p, o->job, p.stats.seq, err);
		if (rc == 0 && o->merge_ranks && merge_tensors(m, &p, (int)i + 1, err) != 0)
			rc = sr_err_is_oom(err) ? -1 : SR_CKPT_MISMATCH;
		if (rc != 0) {
			sr_manifest_free(&p);
			sr_err_prefix(err, "save %s: part %s", o->job, o->merge[i]);
			/* ranks that registered other tensors: not the store's fault */
			return rc == SR_CKPT_MISMATCH ? SR_CKPT_MISMATCH : -1;
		}
		have = m->nentries;
		for (k = 0; k < p.nentries; k++) {
			const struct sr_mentry *e = &p.entries[k];
			struct sr_manifest view = *m;

			view.nentries = have;	/* the sorted entries before this part */
			owner = path_node(e->path, o->node_ranks, nodes);
			if (owner >= 0 ? owner != (int)i + 1 : sr_manifest_find(&view, e->path) >= 0)
				continue;
			if (copy_entry(m, e, err) == -1) {
				sr_manifest_free(&p);
				return sr_err_prefix(err, "save %s: part %s", o->job, o->merge[i]);
			}
			if (e->type == SR_MT_FILE)
				m->stats.files++;
		}
		/* what each part uploaded (its chunks referenced: as copied) */
		m->stats.new_bytes += p.stats.new_bytes;
		m->stats.reused_chunks += p.stats.reused_chunks;
		sr_manifest_sort(m);
		sr_manifest_free(&p);
	}
	if (o->merge_ranks && join_tensors(m, err) != 0) {
		sr_err_prefix(err, "save %s: step %lld", o->job, m->stats.step);
		return sr_err_is_oom(err) ? -1 : SR_CKPT_MISMATCH;
	}
	return 0;
}

void
sr_parts_drop(struct sr_store *st, const struct sr_ckpt_opts *o)
{
	char err[SR_ERRMAX];
	size_t i;

	for (i = 0; i < o->nmerge; i++)
		if (sr_store_delete(st, o->merge[i], err) != SR_STORE_OK)
			sr_ckpt_say(o, "warning: %s", err);
}

/* Whether checkpoint seq is the one this rank's save of step took part
 * in: its step, epoch and world size (1 or 0); -1 with err when out of
 * memory, which says nothing of it (and waiting would not help). */
static int
is_ours(struct sr_store *st, const struct sr_ckpt_opts *o, uint64_t seq, long long step,
    char *err)
{
	struct sr_manifest m;
	int ours, rc;

	rc = sr_catalog_load(st, o->job, seq, &m, err);
	ours = rc == 0 && m.stats.step == step && m.stats.epoch == o->epoch &&
	    m.stats.world_size == o->world_size;
	sr_manifest_free(&m);
	return rc != 0 && sr_err_is_oom(err) ? -1 : ours;
}

int
sr_parts_await(struct sr_store *st, const struct sr_ckpt_opts *o, const struct sr_latest *base,
    long long step, double wait, uint64_t *seq, char *err)
{
	double until = wait > 0 ? sr_now() + wait : 0;
	struct sr_latest now;
	struct sr_object_info info;
	char why[SR_ERRMAX];
	int gone = 0, rc;

	for (;;) {
		if (sr_latest_read(st, o->job, &now, why) != 0)
			return sr_err(err, "save %s: step %lld: read LATEST: %s", o->job, step, why);
		if (sr_latest_epoch(&now) > o->epoch)
			return sr_latest_fenced(err, "nothing committed", o->job, now.epoch);
		if (now.state == SR_LATEST_OK && (base->state != SR_LATEST_OK || now.seq != base->seq) &&
		    (rc = is_ours(st, o, now.seq, step, why)) != 0) {
			if (rc == -1)
				return sr_err(err, "save %s: step %lld: %s", o->job, step, why);
			*seq = now.seq;
			return 0;
		}
		/* rank 0 deletes the parts once it committed, or gave up: LATEST,
		 * read after, tells which */
		if (gone)
			return sr_err(err, "save %s: step %lld: rank 0 committed nothing (it gave up "
			    "on this save: its error says why); nothing committed", o->job, step),
			    SR_CKPT_LATE;
		rc = sr_store_head(st, o->part, &info, why);
		if (rc == SR_STORE_NOTFOUND) {
			gone = 1;
			continue;
		}
		/* out of memory: waiting would not bring it back */
		if (rc != SR_STORE_OK && sr_err_is_oom(why))
			return sr_err(err, "save %s: step %lld: check part %s: %s", o->job, step,
			    o->part, why);
		if (sr_flag_get(o->cancel)) {
			sr_err(err, "checkpoint of %s cancelled while it waited for rank 0's commit of "
			    "step %lld; nothing committed", o->job, step);
			rc = SR_CKPT_CANCELLED;
		} else if (sr_ckpt_deadline(o) > 0 && sr_now() >= sr_ckpt_deadline(o)) {
			sr_err(err, "checkpoint of %s missed its deadline: rank 0 did not commit step "
			    "%lld; nothing committed", o->job, step);
			rc = SR_CKPT_LATE;
		} else if (until > 0 && sr_now() >= until) {
			sr_err(err, "checkpoint of %s: rank 0 did not commit step %lld within %gs; "
			    "nothing committed", o->job, step, wait);
			rc = SR_CKPT_LATE;
		} else {
			sr_sleep(0.2);
			continue;
		}
		/* this rank's part must not join a later commit */
		if (sr_store_delete(st, o->part, why) != SR_STORE_OK)
			sr_ckpt_say(o, "warning: %s", why);
		return rc;
	}
}

struct sweep {
	struct sr_store *st;
	const struct sr_ckpt_opts *o;
	long long step;
	int n;
};

static int
sweep_cb(const struct sr_object_info *info, void *arg)
{
	struct sweep *x = arg;
	char err[SR_ERRMAX];
	uint64_t epoch;
	long long step;
	int rank;

	if (sr_jobkey_rank_part_parse(x->o->job, info->key, &epoch, &step, &rank) == -1)
		return 0;	/* a gang's part, or another tool's object */
	if (epoch > x->o->epoch || (epoch == x->o->epoch && step >= x->step))
		return 0;
	if (sr_store_delete(x->st, info->key, err) != SR_STORE_OK)
		sr_ckpt_say(x->o, "warning: %s", err);
	else
		x->n++;
	return 0;
}

void
sr_parts_sweep(struct sr_store *st, const struct sr_ckpt_opts *o, long long step)
{
	char *prefix = sr_jobkey_prefix(o->job, SR_JOBKEY_PARTS, NULL), err[SR_ERRMAX];
	struct sweep x = { st, o, step, 0 };

	/* best effort, like the deletes: a later save sweeps them */
	if (prefix == NULL) {
		sr_ckpt_say(o, "warning: not sweeping the old parts of %s: out of memory", o->job);
		return;
	}
	if (sr_store_list(st, prefix, sweep_cb, &x, err) != 0)
		sr_ckpt_say(o, "warning: %s", err);
	free(prefix);
}
