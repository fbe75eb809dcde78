/*
 * gpulock.h: a GPU handed to one run at a time on a machine. Each GPU has
 * a lock file, DIR/gpu-KEY (KEY: its UUID where known, else the id
 * CUDA_VISIBLE_DEVICES calls it by), locked with an open file description
 * lock (fcntl F_OFD_SETLK) that the run holds from its setup to its end,
 * restarts included: the kernel drops it when the holder's last descriptor
 * closes, so a run killed with SIGKILL frees its GPUs at once. The file
 * holds the holder's pid, for the message of a run refused.
 *
 * DIR is $SPOTRUN_GPU_LOCK_DIR (tests give each test its own), else
 * /tmp/spotrun-gpus: a GPU is the machine's, not a user's, so the folder
 * must be one that every user's spotrun sees (not $XDG_RUNTIME_DIR, which
 * is per user, nor /run, writable by root alone); /tmp is on every
 * machine and shared by all users, so the folder is made sticky and
 * world-writable (1777) and its files 0666. A container with a /tmp of
 * its own shares it with nothing: give such runs one folder through the
 * variable.
 *
 * A GPU known only by an inherited CUDA_VISIBLE_DEVICES entry (no UUID from
 * NVML) is handed out unlocked: its name is that process's view, which a
 * container or Slurm numbers from 0 in each job.
 *
 * An OFD lock rather than flock(2): F_OFD_GETLK tells whether a GPU is
 * held without taking it, so an agent counting free GPUs between claims
 * never makes a starting run see a GPU busy.
 */
#ifndef SR_GPULOCK_H
#define SR_GPULOCK_H

#include <stddef.h>

#include "gpus.h"

#define SR_GPULOCK_DIR_DEFAULT	"/tmp/spotrun-gpus"

/* The locks a run holds. */
struct sr_gpulock {
	int *fd;
	size_t n;
};

/* The lock folder: $SPOTRUN_GPU_LOCK_DIR when set and not empty, else
 * SR_GPULOCK_DIR_DEFAULT. */
const char *sr_gpulock_dir(void);

/* How many of g's GPUs no run holds now (a GPU whose lock cannot be
 * read counts as free: the run's own try says why). */
size_t sr_gpulock_free(const char *dir, const struct sr_gpus *g);
/* sr_gpulock_free, saying who holds the others into held (len bytes):
 * "6 held by spotrun pid 123, 2 by spotrun pid 456" (a holder that wrote
 * no pid yet: "by another run"), "" when all are free. */
size_t sr_gpulock_free_held(const char *dir, const struct sr_gpus *g, char *held, size_t len);

/* Lock, in g's order, up to max of g's GPUs that no other run holds, and
 * keep in g only those (in order), so that g->n is what the run has. 0 when
 * at least min were locked (*lk to release with sr_gpulock_release); -1
 * with err when fewer were (nothing held then: "job J needs at least 1 GPU:
 * GPU 0 (GPU-...) is in use by spotrun pid 123 (lock DIR/gpu-...)"), or when
 * the folder or a lock file cannot be made or opened. job names the job in
 * messages. busy, when not NULL, gets "0 (pid 123), 1 (pid 456)": the GPUs
 * skipped as held ("" none). After -1, g is not to be used but freed. */
int sr_gpulock_take(const char *dir, struct sr_gpus *g, size_t min, size_t max, const char *job,
    struct sr_gpulock *lk, char *busy, size_t busylen, char *err);

/* Release every lock in *lk (also an empty one). */
void sr_gpulock_release(struct sr_gpulock *lk);

#endif
