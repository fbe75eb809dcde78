/*
 * ctrain.c: a real training program in C that checkpoints through
 * libspotrun (libspotrun(3)): a character-level language model (model.h)
 * trained with Adam on a text Debian ships, /usr/share/common-licenses/GPL-3
 * by default, data-parallel over the ranks spotrun starts (group.h).
 *
 * Deterministic by construction: the initial parameters are a function of
 * --seed, the examples of step s are a function of (--seed, the data
 * cursor), each micro-batch's gradient is computed the same on any rank,
 * and the micro-batches are summed in their order whatever the number of
 * ranks. So a run preempted and resumed, on as many ranks or on others,
 * ends with the same bytes as an uninterrupted one: the final "digest"
 * line (FNV-1a of the parameters, Adam's moments, the step and the cursor)
 * and the "final loss" line say so.
 *
 * Each step: every rank computes the gradients of its micro-batches
 * (a contiguous share of the --micro of a step), the ordered
 * reduce-scatter hands each rank the summed gradient of its slice of the
 * parameters, and with it the largest answer of any rank to
 * spotrun_checkpoint_requested, so all ranks agree when to save; each
 * rank updates its slice with its shard of Adam's m and v (ZeRO stage 1),
 * and the all-gather gives every rank the whole parameters again. In the
 * checkpoint the parameters are replicated (every rank registers each
 * tensor whole) and m and v are sharded (each rank registers its slice).
 *
 * --device=cuda runs the same step on the GPUs (devstep.h): the
 * parameters, gradients and m and v in device memory, registered with
 * spotrun_register_device, the kernels of kern.h computing each output in
 * the CPU path's order, the ranks exchanging through NCCL, whose
 * communicator is aborted before each checkpoint and built again after
 * it. The same bits as the CPU path: a run may move between the two.
 *
 *	ctrain [--steps N] [--text PATH] [--store URL --job NAME] ...	(--help)
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* spotrun_register_device is in the experimental part */
#define SPOTRUN_EXPERIMENTAL
#include <libspotrun.h>

#include "devstep.h"
#include "group.h"
#include "model.h"

struct opts {
	const char *text, *store, *job, *out;
	const char *cuda_lib, *nccl_lib;	/* --device=cuda: the driver and NCCL */
	int cuda;				/* --device=cuda */
	long long steps, every, save_every;
	int gradcheck;
	uint64_t seed;
	float lr, wd;
	int batch, micro, step_ms;
	struct ct_dims d;
};

/* The state a checkpoint holds: the parameters (replicated), this rank's
 * shard of Adam's moments, the last step done, the data cursor (examples
 * drawn so far), the last step's loss, and the settings that must not
 * change under a resumed run. */
struct state {
	float *theta;			/* all parameters, every rank */
	float *m, *v;			/* this rank's slice [lo, hi) */
	size_t n, lo, hi;
	int64_t step;			/* the last step done, -1 before the first */
	uint64_t cursor;
	float loss;
	uint64_t config[8], saved_config[8];
};

static void
usage(FILE *fp)
{
	fprintf(fp, "usage: ctrain [options]\n"
	    "  --text PATH       the text to learn (default /usr/share/common-licenses/GPL-3)\n"
	    "  --steps N         training steps (default 400)\n"
	    "  --seed N          the initial parameters and the examples (default 1)\n"
	    "  --lr X            Adam's learning rate (default 0.005)\n"
	    "  --wd X            decoupled weight decay, AdamW (default 0)\n"
	    "  --context N       characters before the one predicted (default 8)\n"
	    "  --embed N         floats per character (default 16)\n"
	    "  --hidden N        tanh units (default 128)\n"
	    "  --micro N         micro-batches per step, 1 to 64 (default 12): at least the ranks\n"
	    "  --batch N         examples per micro-batch (default 8)\n"
	    "  --every N         print the loss every N steps (default 50)\n"
	    "  --save-every N    also save every N steps (default 0: when spotrun asks)\n"
	    "  --step-ms N       sleep N ms after each step (default 0: pacing for demos)\n"
	    "  --store URL       checkpoint store without spotrun (default $SPOTRUN_STORE)\n"
	    "  --job NAME        job name without spotrun (default $SPOTRUN_JOB, else ctrain)\n"
	    "  --out FILE        rank 0 writes the final parameters, m and v (f32) there\n"
	    "  --device D        cpu (default) or cuda: parameters, gradients and Adam on the\n"
	    "                    GPUs (one a rank), the ranks through NCCL; the same bits\n"
	    "  --cuda-library P  the CUDA driver (default $SPOTRUN_CUDA_LIBRARY, else libcuda.so.1)\n"
	    "  --nccl-library P  NCCL (default $SPOTRUN_NCCL_LIBRARY, else libnccl.so.2)\n"
	    "  --gradcheck N     check the gradient of N parameters against finite\n"
	    "                    differences, at the start, and exit (1 when it is off)\n"
	    "The ranks: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (as spotrun's launch = ranks\n"
	    "and torchrun set them; none: one rank).\n");
}

static void
die(int rank, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

static void
die(int rank, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ctrain: rank %d: ", rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* A whole number in [lo, hi] from an option or the environment. */
static long long
number(const char *what, const char *s, long long lo, long long hi)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "ctrain: %s: '%s' is not a whole number from %lld to %lld\n", what, s,
		    lo, hi);
		exit(2);
	}
	return v;
}

static float
real(const char *what, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v >= 0.0) || v > 1e3) {
		fprintf(stderr, "ctrain: %s: '%s' is not a number from 0 to 1000\n", what, s);
		exit(2);
	}
	return (float)v;
}

static void
parse(int argc, char **argv, struct opts *o)
{
	enum { TEXT = 256, STEPS, SEED, LR, WD, CONTEXT, EMBED, HIDDEN, MICRO, BATCH, EVERY,
	    SAVE_EVERY, STEP_MS, STORE, JOB, OUT, GRADCHECK, DEVICE, CUDA_LIB, NCCL_LIB, HELP };
	static const struct option longs[] = {
		{ "text", 1, NULL, TEXT }, { "steps", 1, NULL, STEPS }, { "seed", 1, NULL, SEED },
		{ "lr", 1, NULL, LR }, { "wd", 1, NULL, WD }, { "context", 1, NULL, CONTEXT },
		{ "embed", 1, NULL, EMBED }, { "hidden", 1, NULL, HIDDEN },
		{ "micro", 1, NULL, MICRO }, { "batch", 1, NULL, BATCH }, { "every", 1, NULL, EVERY },
		{ "save-every", 1, NULL, SAVE_EVERY }, { "step-ms", 1, NULL, STEP_MS },
		{ "store", 1, NULL, STORE }, { "job", 1, NULL, JOB }, { "out", 1, NULL, OUT },
		{ "gradcheck", 1, NULL, GRADCHECK }, { "device", 1, NULL, DEVICE },
		{ "cuda-library", 1, NULL, CUDA_LIB }, { "nccl-library", 1, NULL, NCCL_LIB },
		{ "help", 0, NULL, HELP }, { NULL, 0, NULL, 0 }
	};
	int c;

	*o = (struct opts){ .text = "/usr/share/common-licenses/GPL-3", .steps = 400, .every = 50,
	    .seed = 1, .lr = 0.005f, .batch = 8, .micro = 12,
	    .d = { .context = 8, .embed = 16, .hidden = 128 } };
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case TEXT: o->text = optarg; break;
		case STEPS: o->steps = number("--steps", optarg, 1, 1LL << 40); break;
		case SEED: o->seed = (uint64_t)number("--seed", optarg, 0, INT64_MAX); break;
		case LR: o->lr = real("--lr", optarg); break;
		case WD: o->wd = real("--wd", optarg); break;
		case CONTEXT: o->d.context = (int)number("--context", optarg, 1, 64); break;
		case EMBED: o->d.embed = (int)number("--embed", optarg, 1, 256); break;
		case HIDDEN: o->d.hidden = (int)number("--hidden", optarg, 1, 4096); break;
		case MICRO: o->micro = (int)number("--micro", optarg, 1, 64); break;
		case BATCH: o->batch = (int)number("--batch", optarg, 1, 4096); break;
		case EVERY: o->every = number("--every", optarg, 1, 1LL << 40); break;
		case SAVE_EVERY: o->save_every = number("--save-every", optarg, 0, 1LL << 40); break;
		case STEP_MS: o->step_ms = (int)number("--step-ms", optarg, 0, 60000); break;
		case STORE: o->store = optarg; break;
		case JOB: o->job = optarg; break;
		case OUT: o->out = optarg; break;
		case GRADCHECK: o->gradcheck = (int)number("--gradcheck", optarg, 1, 100000); break;
		case DEVICE:
			if (strcmp(optarg, "cpu") != 0 && strcmp(optarg, "cuda") != 0) {
				fprintf(stderr, "ctrain: --device: '%s' is neither cpu nor cuda\n", optarg);
				exit(2);
			}
			o->cuda = strcmp(optarg, "cuda") == 0;
			break;
		case CUDA_LIB: o->cuda_lib = optarg; break;
		case NCCL_LIB: o->nccl_lib = optarg; break;
		case HELP: usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (o->cuda_lib == NULL)
		o->cuda_lib = getenv("SPOTRUN_CUDA_LIBRARY");
	if (o->nccl_lib == NULL)
		o->nccl_lib = getenv("SPOTRUN_NCCL_LIBRARY");
	if (optind < argc) {
		fprintf(stderr, "ctrain: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		exit(2);
	}
}

/* The text as vocabulary indices (the distinct bytes it holds, in byte
 * order). */
static uint8_t *
load_text(const char *path, size_t *len, int *vocab, uint64_t *digest, int rank)
{
	int map[256], i, v = 0;
	unsigned char *buf = NULL;
	size_t n = 0, cap = 0, k;
	uint64_t h = 1469598103934665603ULL;
	FILE *fp;

	if ((fp = fopen(path, "rb")) == NULL)
		die(rank, "open %s: %s (--text names the text to learn)", path, strerror(errno));
	for (;;) {
		if (n == cap && (buf = realloc(buf, cap = cap ? cap * 2 : 65536)) == NULL)
			die(rank, "read %s: out of memory", path);
		size_t r = fread(buf + n, 1, cap - n, fp);
		n += r;
		if (r == 0)
			break;
	}
	if (ferror(fp))
		die(rank, "read %s: %s", path, strerror(errno));
	fclose(fp);
	for (i = 0; i < 256; i++)
		map[i] = 0;
	for (k = 0; k < n; k++) {
		map[buf[k]] = 1;
		h = (h ^ buf[k]) * 1099511628211ULL;
	}
	for (i = 0; i < 256; i++)
		map[i] = map[i] ? v++ : -1;
	for (k = 0; k < n; k++)
		buf[k] = (uint8_t)map[buf[k]];
	if (v < 2)
		die(rank, "%s: %d distinct bytes: nothing to learn", path, v);
	*len = n;
	*vocab = v;
	*digest = h;
	return buf;
}

static uint64_t
fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n-- > 0)
		h = (h ^ *b++) * 1099511628211ULL;
	return h;
}

static void
check(spotrun_ctx *ctx, spotrun_error rc, int rank, const char *what)
{
	if (rc != SPOTRUN_OK)
		die(rank, "%s: %s: %s", what, spotrun_getErrorName(rc), spotrun_getErrorString(ctx));
}

/* Save step s (every rank, the same s). A save that missed the request's
 * deadline committed nothing, and spotrun has given the request up: the
 * checkpoint before stays the newest, and training goes on. "saving" is
 * said before the save: on a notice spotrun stops the job the moment the
 * commit lands, and a line after the save may never be written. */
static void
save(spotrun_ctx *ctx, long long s, int rank)
{
	spotrun_error rc;

	if (rank == 0) {
		printf("saving at step %lld\n", s);
		fflush(stdout);
	}
	rc = spotrun_save(ctx, s);

	if (rc == SPOTRUN_ERROR_DEADLINE) {
		fprintf(stderr, "ctrain: rank %d: save at step %lld: %s: training goes on\n", rank, s,
		    spotrun_getErrorString(ctx));
		return;
	}
	check(ctx, rc, rank, "save");
	if (rank == 0) {
		printf("checkpoint at step %lld\n", s);
		fflush(stdout);
	}
}

/* The library's news (commits, restores, fallbacks), from rank 0. */
static void
lib_message(void *opaque, spotrun_msg_level level, const char *text)
{
	if (level != SPOTRUN_MSG_ERROR && *(const int *)opaque == 0)
		fprintf(stderr, "ctrain: libspotrun: %s\n", text);
}

/* A float buffer of the state: host memory, or device memory of GPU
 * `device` (>= 0: spotrun_register_device). */
static void
register_f32(spotrun_ctx *ctx, const char *name, int ndim, const uint64_t *shape,
    const uint64_t *off, const uint64_t *size, float *p, int device, int rank)
{
	spotrun_error rc;

	if (device < 0)
		rc = spotrun_register(ctx, name, SPOTRUN_F32, ndim, shape, off, size, p);
	else
		rc = spotrun_register_device(ctx, name, SPOTRUN_F32, ndim, shape, off, size, p, device);
	check(ctx, rc, rank, "register");
}

/* Register the state with the library (module comment: what is
 * replicated, what is sharded): theta, m and v where they live (host
 * memory, or with device >= 0 the GPU's: addresses, not dereferenced
 * here). */
static void
register_state(spotrun_ctx *ctx, struct state *st, const struct ct_dims *d, float *theta,
    float *m, float *v, int device, int rank)
{
	struct ct_tensor t[CT_NTENSORS];
	const uint64_t shape = st->n, off = st->lo, size = st->hi - st->lo, ncfg = 8;
	int i;

	ct_model_layout(d, t);
	for (i = 0; i < CT_NTENSORS; i++)
		register_f32(ctx, t[i].name, t[i].ndim, t[i].shape, NULL, NULL,
		    (float *)((uintptr_t)theta + t[i].offset * sizeof *theta), device, rank);
	register_f32(ctx, "adam.m", 1, &shape, &off, &size, m, device, rank);
	register_f32(ctx, "adam.v", 1, &shape, &off, &size, v, device, rank);
	check(ctx, spotrun_register(ctx, "step", SPOTRUN_I64, 0, NULL, NULL, NULL, &st->step), rank,
	    "register");
	check(ctx, spotrun_register(ctx, "data.cursor", SPOTRUN_U64, 0, NULL, NULL, NULL,
	    &st->cursor), rank, "register");
	check(ctx, spotrun_register(ctx, "loss", SPOTRUN_F32, 0, NULL, NULL, NULL, &st->loss), rank,
	    "register");
	check(ctx, spotrun_register(ctx, "ctrain.config", SPOTRUN_U64, 1, &ncfg, NULL, NULL,
	    st->saved_config), rank, "register");
}

/* The characters and target of example e: a position of the text drawn
 * from (seed, e) alone. */
static void
example(const uint8_t *text, size_t len, int context, uint64_t seed, uint64_t e, uint8_t *ctx,
    uint8_t *target)
{
	size_t pos = (size_t)(ct_mix(ct_mix(seed ^ 0x6461746164617461ULL) ^ e) %
	    (uint64_t)(len - (size_t)context));

	memcpy(ctx, text + pos, (size_t)context);
	*target = text[pos + (size_t)context];
}

/* Adam with bias correction (Kingma and Ba 2015), decoupled weight decay
 * (Loshchilov and Hutter 2019), on this rank's slice; g is the summed
 * gradient of the step's `examples` examples. Elementwise, so the slices
 * do not matter. */
static void
adam(struct state *st, const float *g, long long examples, long long step, float lr, float wd)
{
	const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, scale = 1.0f / (float)examples;
	const float c1 = (float)(1.0 - pow(0.9, (double)(step + 1)));
	const float c2 = (float)(1.0 - pow(0.999, (double)(step + 1)));
	size_t i;

	for (i = st->lo; i < st->hi; i++) {
		float gi = g[i] * scale, *m = &st->m[i - st->lo], *v = &st->v[i - st->lo];
		*m = b1 * *m + (1.0f - b1) * gi;
		*v = b2 * *v + (1.0f - b2) * gi * gi;
		st->theta[i] -= lr * ((*m / c1) / (sqrtf(*v / c2) + eps) + wd * st->theta[i]);
	}
}

/* Whole Adam moments on every rank, for the digest and --out. */
static float *
gather_moment(struct ct_group *g, const struct state *st, const float *shard, char *err)
{
	float *all = calloc(st->n, sizeof *all);

	if (all == NULL)
		die(g->rank, "out of memory");
	memcpy(all + st->lo, shard, (st->hi - st->lo) * sizeof *all);
	if (ct_group_allgather(g, all, st->n, err) == -1)
		die(g->rank, "%s", err);
	return all;
}

static const char *
env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? v : dflt;
}

/* One rank's run: its settings, state, group and scratch. */
struct run {
	struct opts o;
	struct state st;
	struct ct_group g;
	struct ct_work *w;
	struct ct_devstep ds;		/* --device=cuda */
	int ordinal;			/* its GPU */
	spotrun_ctx *ctx;		/* NULL: no store, no checkpoints */
	int rank, world;
	uint8_t *text;			/* vocabulary indices */
	size_t len;
	size_t mlo, mhi;		/* this rank's micro-batches */
	size_t plen;			/* floats of a part: the gradient, then the loss */
	float *parts, *sum;
	uint8_t *xs, *ys;		/* a micro-batch's contexts and targets (the GPU:
					 * all of this rank's micro-batches') */
};

/* --device=cuda: this rank's GPU (LOCAL_RANK, else RANK, modulo the GPUs
 * there are), its buffers, the initial parameters copied there. */
static void
setup_device(struct run *r)
{
	const int count = ct_gpu_count(r->o.cuda_lib);
	char err[CT_ERRMAX];
	int local = (int)number("LOCAL_RANK", env_or("LOCAL_RANK", env_or("RANK", "0")), 0, 4095);

	r->ordinal = count > 0 ? local % count : 0;
	if (ct_devstep_open(&r->ds, r->o.cuda_lib, r->o.nccl_lib, r->ordinal, &r->o.d,
	    (int)(r->mhi - r->mlo), r->o.batch, r->o.micro, r->mlo, r->st.n, r->st.lo, r->st.hi,
	    r->st.theta, err) == -1)
		die(r->rank, "--device=cuda: %s", err);
}

/* The state and the scratch of a run, its parameters initialised. */
static void
setup(struct run *r)
{
	struct state *st = &r->st;
	uint64_t text_digest;

	r->text = load_text(r->o.text, &r->len, &r->o.d.vocab, &text_digest, r->rank);
	if (r->len <= (size_t)r->o.d.context)
		die(r->rank, "%s: %zu bytes, not more than --context %d", r->o.text, r->len,
		    r->o.d.context);
	st->step = -1;
	st->n = ct_model_size(&r->o.d);
	ct_group_slice(st->n, r->world, r->rank, &st->lo, &st->hi);
	st->theta = calloc(st->n, sizeof *st->theta);
	st->m = calloc(st->hi - st->lo + 1, sizeof *st->m);
	st->v = calloc(st->hi - st->lo + 1, sizeof *st->v);
	/* this rank's micro-batches: a contiguous share, in order */
	ct_group_slice((size_t)r->o.micro, r->world, r->rank, &r->mlo, &r->mhi);
	r->plen = st->n + 1;
	r->parts = calloc((r->mhi - r->mlo) * r->plen, sizeof *r->parts);
	r->sum = calloc(r->plen, sizeof *r->sum);
	r->xs = malloc((r->mhi - r->mlo) * (size_t)r->o.batch * (size_t)r->o.d.context);
	r->ys = malloc((r->mhi - r->mlo) * (size_t)r->o.batch);
	r->w = ct_work_new(&r->o.d);
	if (st->theta == NULL || st->m == NULL || st->v == NULL || r->parts == NULL ||
	    r->sum == NULL || r->xs == NULL || r->ys == NULL || r->w == NULL)
		die(r->rank, "out of memory");
	ct_model_init(&r->o.d, r->o.seed, st->theta);
	st->config[0] = r->o.seed;
	st->config[1] = (uint64_t)r->o.d.context;
	st->config[2] = (uint64_t)r->o.d.embed;
	st->config[3] = (uint64_t)r->o.d.hidden;
	st->config[4] = (uint64_t)r->o.d.vocab;
	st->config[5] = (uint64_t)r->o.micro;
	st->config[6] = (uint64_t)r->o.batch;
	st->config[7] = text_digest;
	memcpy(st->saved_config, st->config, sizeof st->config);
	if (r->o.cuda)
		setup_device(r);
}

/* Join the other ranks. What every rank must share: the checkpoint's
 * settings, and what decides the number of steps, the update and the
 * saves. */
static void
join(struct run *r)
{
	int has_store = r->o.store != NULL || getenv("SPOTRUN_STORE") != NULL;
	char err[CT_ERRMAX];
	uint64_t h;

	h = fnv(1469598103934665603ULL, r->st.config, sizeof r->st.config);
	h = fnv(h, &r->o.steps, sizeof r->o.steps);
	h = fnv(h, &r->o.save_every, sizeof r->o.save_every);
	h = fnv(h, &r->o.lr, sizeof r->o.lr);
	h = fnv(h, &r->o.wd, sizeof r->o.wd);
	h = fnv(h, &has_store, sizeof has_store);
	h = fnv(h, &r->o.cuda, sizeof r->o.cuda);
	if (ct_group_open(&r->g, r->rank, r->world, env_or("MASTER_ADDR", "127.0.0.1"),
	    env_or("MASTER_PORT", "29500"), h, 60, err) == -1)
		die(r->rank, "%s", err);
}

/* Checkpoints: under spotrun (mode = library) its environment names the
 * store and the job; by hand, --store and --job. The first step to run. */
static long long
resume(struct run *r)
{
	struct state *st = &r->st;
	spotrun_params p;
	long long restored;

	if (r->o.store == NULL && getenv("SPOTRUN_STORE") == NULL) {
		if (r->rank == 0)
			fprintf(stderr, "ctrain: no store (--store, or spotrun's SPOTRUN_STORE): "
			    "training without checkpoints\n");
		return 0;
	}
	spotrun_params_init(&p);
	p.store = r->o.store;
	p.job = r->o.job != NULL ? r->o.job : getenv("SPOTRUN_JOB") == NULL ? "ctrain" : NULL;
	p.message = lib_message;
	p.message_opaque = &r->rank;
	if ((r->ctx = spotrun_create(&p)) == NULL)
		die(r->rank, "spotrun_create: out of memory");
	if (r->o.cuda_lib != NULL)	/* a setting of the experimental tier, on the context */
		check(r->ctx, spotrun_set_cuda_library(r->ctx, r->o.cuda_lib), r->rank,
		    "set_cuda_library");
	if (r->o.cuda)
		register_state(r->ctx, st, &r->o.d, r->ds.k.theta, r->ds.k.m, r->ds.k.v, r->ordinal,
		    r->rank);
	else
		register_state(r->ctx, st, &r->o.d, st->theta, st->m, st->v, -1, r->rank);
	check(r->ctx, spotrun_restore(r->ctx, &restored), r->rank, "restore");
	if (restored < 0)
		return 0;
	if (memcmp(st->saved_config, st->config, sizeof st->config) != 0)
		die(r->rank, "the checkpoint of step %lld was trained with other settings (--seed, "
		    "--context, --embed, --hidden, --micro, --batch or --text): give the same, or "
		    "another --job", restored);
	if (st->step != restored)
		die(r->rank, "the checkpoint of step %lld holds step %" PRId64, restored, st->step);
	if (r->rank == 0) {
		printf("resumed from step %lld on %d rank%s\n", restored, r->world,
		    r->world == 1 ? "" : "s");
		fflush(stdout);
	}
	return restored + 1;
}

/* Step s on every rank (module comment). */
static void
train_step(struct run *r, long long s)
{
	const long long per_step = (long long)r->o.micro * r->o.batch;
	struct state *st = &r->st;
	char err[CT_ERRMAX];
	int i, k, vote, agreed;
	float total;

	vote = r->ctx != NULL && spotrun_checkpoint_requested(r->ctx);
	for (i = 0; i < (int)(r->mhi - r->mlo); i++) {
		float *part = r->parts + (size_t)i * r->plen;
		uint64_t e0 = st->cursor + (uint64_t)(r->mlo + (size_t)i) * (uint64_t)r->o.batch;
		/* the GPU takes all the micro-batches' examples at once */
		size_t q0 = r->o.cuda ? (size_t)i * (size_t)r->o.batch : 0;
		for (k = 0; k < r->o.batch; k++)
			example(r->text, r->len, r->o.d.context, r->o.seed, e0 + (uint64_t)k,
			    r->xs + (q0 + (size_t)k) * (size_t)r->o.d.context, &r->ys[q0 + (size_t)k]);
		if (!r->o.cuda)
			part[st->n] = ct_model_grad(&r->o.d, r->w, st->theta, r->xs, r->ys, r->o.batch,
			    part);
	}
	if (r->o.cuda) {
		if (ct_devstep_run(&r->ds, &r->g, r->xs, r->ys, vote, s, r->o.lr, r->o.wd, per_step,
		    &total, &agreed, err) == -1)
			die(r->rank, "step %lld: %s", s, err);
	} else {
		if (ct_group_reduce_scatter(&r->g, r->parts, (int)(r->mhi - r->mlo), r->plen, 1, vote,
		    r->sum, &agreed, err) == -1)
			die(r->rank, "step %lld: %s", s, err);
		adam(st, r->sum, per_step, s, r->o.lr, r->o.wd);
		if (ct_group_allgather(&r->g, st->theta, st->n, err) == -1)
			die(r->rank, "step %lld: %s", s, err);
		total = r->sum[st->n];
	}
	st->step = s;
	st->cursor += (uint64_t)per_step;
	st->loss = total / (float)per_step;
	if (r->rank == 0 && (s == 0 || (s + 1) % r->o.every == 0)) {
		printf("step %lld loss %.4f\n", s, st->loss);
		fflush(stdout);
	}
	/* every rank saves the same step: the vote is everyone's; on the GPUs
	 * after their work is done and the communicator aborted, so that a
	 * rank that dies meanwhile cannot hang the others in a collective (the
	 * next step builds a new one) */
	if (r->ctx != NULL && (agreed || (r->o.save_every > 0 && (s + 1) % r->o.save_every == 0))) {
		if (r->o.cuda && ct_devstep_quiesce(&r->ds, err) == -1)
			die(r->rank, "step %lld: %s", s, err);
		save(r->ctx, s, r->rank);
	}
}

/* The final lines, and --out. */
static void
finish(struct run *r)
{
	const struct state *st = &r->st;
	char err[CT_ERRMAX];
	float *m_all, *v_all;
	uint64_t h;
	FILE *fp;

	if (r->o.cuda && ct_devstep_fetch(&r->ds, st->theta, st->m, st->v, err) == -1)
		die(r->rank, "%s", err);
	m_all = gather_moment(&r->g, st, st->m, err);
	v_all = gather_moment(&r->g, st, st->v, err);

	h = fnv(1469598103934665603ULL, st->theta, st->n * sizeof *st->theta);
	h = fnv(h, m_all, st->n * sizeof *m_all);
	h = fnv(h, v_all, st->n * sizeof *v_all);
	h = fnv(h, &st->step, sizeof st->step);
	h = fnv(h, &st->cursor, sizeof st->cursor);
	if (r->rank == 0) {
		printf("final loss %.6f after %lld steps (%zu parameters)\n", st->loss, r->o.steps,
		    st->n);
		printf("digest %016" PRIx64 "\n", h);
		fflush(stdout);
		if (r->o.out != NULL && ((fp = fopen(r->o.out, "wb")) == NULL ||
		    fwrite(st->theta, sizeof *st->theta, st->n, fp) != st->n ||
		    fwrite(m_all, sizeof *m_all, st->n, fp) != st->n ||
		    fwrite(v_all, sizeof *v_all, st->n, fp) != st->n || fclose(fp) != 0))
			die(r->rank, "write %s: %s", r->o.out, strerror(errno));
	}
	free(m_all);
	free(v_all);
}

/* --gradcheck: the backward pass against the loss's finite differences,
 * on the first micro-batch, at the initial parameters. */
static int
gradcheck(struct run *r)
{
	const double tolerance = 0.05;
	double worst;
	int k;

	for (k = 0; k < r->o.batch; k++)
		example(r->text, r->len, r->o.d.context, r->o.seed, (uint64_t)k,
		    r->xs + (size_t)k * (size_t)r->o.d.context, &r->ys[k]);
	worst = ct_model_gradcheck(&r->o.d, r->w, r->st.theta, r->xs, r->ys, r->o.batch, r->o.seed,
	    r->o.gradcheck);
	printf("gradcheck: %d parameters, worst relative difference %.4f (tolerance %.2f)\n",
	    r->o.gradcheck, worst, tolerance);
	return worst < tolerance ? 0 : 1;
}

/* What main set up, given back (a context, the ranks' sockets, memory). */
static void
teardown(struct run *r)
{
	spotrun_free(r->ctx);
	if (r->o.cuda)
		ct_devstep_close(&r->ds);
	ct_group_close(&r->g);
	ct_work_free(r->w);
	free(r->parts);
	free(r->sum);
	free(r->xs);
	free(r->ys);
	free(r->st.theta);
	free(r->st.m);
	free(r->st.v);
	free(r->text);
}

int
main(int argc, char **argv)
{
	struct run r;
	long long s;
	int rc;

	memset(&r, 0, sizeof r);
	parse(argc, argv, &r.o);
	r.rank = (int)number("RANK", env_or("RANK", "0"), 0, 4095);
	r.world = (int)number("WORLD_SIZE", env_or("WORLD_SIZE", "1"), 1, 4096);
	if (r.rank >= r.world)
		die(r.rank, "RANK %d is not below WORLD_SIZE %d", r.rank, r.world);
	if (r.world > r.o.micro)
		die(r.rank, "%d ranks for %d micro-batches a step: give --micro at least the ranks",
		    r.world, r.o.micro);
	if (r.o.gradcheck > 0 && r.o.cuda)
		die(r.rank, "--gradcheck checks the CPU path: give it without --device=cuda");
	setup(&r);
	if (r.o.gradcheck > 0) {
		rc = gradcheck(&r);
		teardown(&r);
		return rc;
	}
	join(&r);
	for (s = resume(&r); s < r.o.steps; s++) {
		train_step(&r, s);
		if (r.o.step_ms > 0)
			nanosleep(&(struct timespec){ r.o.step_ms / 1000,
			    (r.o.step_ms % 1000) * 1000000L }, NULL);
	}
	finish(&r);
	teardown(&r);
	return 0;
}
