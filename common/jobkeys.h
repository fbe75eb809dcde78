/*
 * jobkeys.h: the keys of a job's objects in the store, the one place that
 * knows their layout (doc/format.md, "Objects of a job"): every module
 * that names one builds it here, lists under one of the prefixes here, and
 * reads one back here. In common/ because ckpt/, runner/ and lib/ all
 * name them (store/ knows no jobs). For job J:
 *
 *   key                            written by            read by
 *   J/LATEST                       ckpt/latest.c (the    ckpt/latest.c (every
 *                                  commit, fence.c)      save, restore, list, gc)
 *   J/manifests/<seq>.json         ckpt/save.c           ckpt/catalog.c (listed),
 *                                  (create-only)         restore, gc (deleted)
 *   J/manifests/<seq>.commit       ckpt/save.c (after    ckpt/restore-walk.c (a
 *                                  its commit)           damaged manifest's
 *                                                        parent), gc (deleted)
 *   J/packs/<seq>-<rand>.tar       ckpt/save.c           restore (named by the
 *                                                        manifests, manifest.c
 *                                                        checks they are under
 *                                                        J/packs/), gc (listed,
 *                                                        deleted), catalog.c
 *                                                        (stale uploads aborted)
 *   J/parts/<E>-<S>-<N>.json       runner/gang-ckpt.c:   ckpt/gangparts.c (node
 *                                  a gang's node N > 0   0 merges, then deletes)
 *   J/parts/<E>-<S>-rank<R>.json   lib/ranks.c: a        ckpt/gangparts.c (rank
 *                                  library job's rank R  0 merges, deletes;
 *                                                        swept when older),
 *                                                        ckpt/gc.c (both kinds,
 *                                                        of jobs no run holds)
 *   J/attempts/<run>-<NNNN>.json   runner/record.c       runner/record.c
 *                                                        (`spotrun ls -a`)
 *   J/FINISHED                     runner/finished.c     runner/finished.c
 *   J/metrics/<E>-<NNNN>-<M>.txt   runner/metrics.c (a   runner/metrics.c
 *                                  segment of rank 0's   (`spotrun status
 *                                  metrics, create-only) SWEEP`)
 *
 *
 * Beside the jobs, under a prefix no job name can take (names start with a
 * letter or digit): the snapshots of submitted jobs' working directories,
 * one chain per job name, each snapshot a checkpoint of the chain
 * (doc/format.md, "Working directories"):
 *   _workdir/NAME/...              cli/submit-workdir.c  fleet/agent-workdir.c
 *                                  (ckpt/snapshot.c)     (ckpt/snapshot.c)
 *
 * <seq> is SR_SEQ_DIGITS decimal digits, zero-padded, so that key order is
 * numeric order; <rand> lowercase hex; <E> the epoch, <S> the step, <N> the
 * node and <R> the rank, in decimal; <NNNN> the attempt, at least 4
 * digits; in a metrics segment's key <E> is the run's lease epoch in 12
 * digits and <M> the segment's number in 6, so that key order is the
 * order they were written in. The builders allocate (sr_try_asprintf: NULL with err set on
 * out-of-memory, never an abort, for ckpt/ and lib/); the caller frees.
 */
#ifndef SR_JOBKEYS_H
#define SR_JOBKEYS_H

#include <stddef.h>
#include <stdint.h>

/* Digits of the zero-padded sequence number in manifest and pack keys,
 * and the largest sequence number they hold. */
#define SR_SEQ_DIGITS 10
#define SR_SEQ_MAX 9999999999ULL

/* J/LATEST as a printf format of J, for messages that name the pointer
 * without building its key ("read " SR_JOBKEY_LATEST_FMT, job). */
#define SR_JOBKEY_LATEST_FMT "%s/LATEST"

/* The folders of a job's keys, for listing. */
enum sr_jobkey_dir {
	SR_JOBKEY_MANIFESTS,	/* J/manifests/ */
	SR_JOBKEY_PACKS,	/* J/packs/ */
	SR_JOBKEY_PARTS,	/* J/parts/: the gang's and the ranks' parts */
	SR_JOBKEY_ATTEMPTS,	/* J/attempts/ */
	SR_JOBKEY_METRICS	/* J/metrics/ */
};

/* The prefix of dir's keys, ending in '/'. */
char *sr_jobkey_prefix(const char *job, enum sr_jobkey_dir dir, char *err);

/* J/LATEST. */
char *sr_jobkey_latest(const char *job, char *err);
/* J/manifests/<seq>.json. */
char *sr_jobkey_manifest(const char *job, uint64_t seq, char *err);
/* J/manifests/<seq>.commit: the commit record of checkpoint seq
 * (doc/format.md, "Commit records"); listings of manifests skip it. */
char *sr_jobkey_commit(const char *job, uint64_t seq, char *err);
/* J/packs/<seq>-<hex>.tar: hex is the random part the caller drew. */
char *sr_jobkey_pack(const char *job, uint64_t seq, const char *hex, char *err);
/* J/parts/<E>-<S>-<N>.json: node's part of a gang's save of step. */
char *sr_jobkey_node_part(const char *job, int64_t epoch, long long step, int node, char *err);
/* J/parts/<E>-<S>-rank<R>.json: rank's part of a library job's save. */
char *sr_jobkey_rank_part(const char *job, uint64_t epoch, long long step, int rank, char *err);
/* J/parts/<E>-: the prefix of every part of epoch. */
char *sr_jobkey_parts_of_epoch(const char *job, uint64_t epoch, char *err);
/* J/attempts/<run>-<NNNN>.json. */
char *sr_jobkey_attempt(const char *job, const char *run, int attempt, char *err);
/* J/metrics/<E>-<NNNN>-<M>.txt: segment seg of the metrics of attempt
 * of the run whose lease epoch is run (doc/format.md, "Metrics"). NULL
 * with err when a number is out of its digits' range. */
char *sr_jobkey_metrics(const char *job, int64_t run, int attempt, int seg, char *err);
/* 0 with the run's epoch and the attempt of a key listed under
 * SR_JOBKEY_METRICS when it is a segment's, else -1 (outputs untouched). */
int sr_jobkey_metrics_parse(const char *job, const char *key, int64_t *run, int *attempt);
/* J/FINISHED. */
char *sr_jobkey_finished(const char *job, char *err);

/* _workdir/NAME: the chain of NAME's working-directory snapshots, a
 * checkpoint "job" of its own (sr_ckpt_job_check takes it). */
char *sr_jobkey_workdir(const char *name, char *err);
/* The length of the reserved prefix ("_workdir/") that job starts with,
 * or 0: a job check reads the name after it. */
size_t sr_jobkey_reserved_len(const char *job);

/* Keys read back. */
/* 0 and *seq when key is exactly J/manifests/<seq>.json; else -1, *seq
 * untouched. */
int sr_jobkey_manifest_seq(const char *job, const char *key, uint64_t *seq);
/* Any job's manifest: 0 with the job's name (malloc'd into *job, NULL
 * with err on out-of-memory: -1) and *seq when key is J/manifests/<seq>.json
 * for some J, else -1 with err saying so. */
int sr_jobkey_manifest_split(const char *key, char **job, uint64_t *seq, char *err);
/* The same for J/manifests/<seq>.commit. */
int sr_jobkey_commit_seq(const char *job, const char *key, uint64_t *seq);
/* Whether key is exactly J/packs/<seq>-<hex>.tar (at least one hex
 * digit): only such keys are ever deleted by gc. */
int sr_jobkey_is_pack(const char *job, const char *key);
/* 0 with the epoch, step and rank of key when it is a rank's part,
 * J/parts/<E>-<S>-rank<R>.json (read as by sscanf's %llu, %lld and %d:
 * what is not such a part, a gang's node's part among them, is -1, the
 * outputs untouched). */
int sr_jobkey_rank_part_parse(const char *job, const char *key, uint64_t *epoch,
    long long *step, int *rank);
/* Whether key is a gang's node's part, J/parts/<E>-<S>-<N>.json, or a
 * rank's, J/parts/<E>-<S>-rank<R>.json: only such keys are ever deleted
 * by gc's sweep of parts. */
int sr_jobkey_is_part(const char *job, const char *key);
/* Whether a key listed under SR_JOBKEY_ATTEMPTS is a record (.json). */
int sr_jobkey_is_attempt(const char *key);

#endif
