/*
 * ranks-util.h: what the tests of a library job of several ranks share
 * (t-reshard, t-reshard-device): the ranks run as forked processes, the
 * job's LATEST as text, the bytes of a replicated tensor a rank's share
 * holds, and a box of a tensor copied out of it or compared with it.
 */
#ifndef SR_RANKS_UTIL_H
#define SR_RANKS_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store.h"
#include "util.h"

/* Run rank_main(arg, r) for r in [0, w) as processes, at once: died[r]
 * set for a rank that did not exit 0. */
static __attribute__((unused)) void
ru_run_ranks(int w, int (*rank_main)(const void *arg, int r), const void *arg, int *died)
{
	pid_t pid[64];
	int r, st;

	fflush(stdout);
	for (r = 0; r < w; r++) {
		if ((pid[r] = fork()) == -1)
			sr_fatal("fork: %s", strerror(errno));
		if (pid[r] == 0)
			_exit(rank_main(arg, r));
	}
	for (r = 0; r < w; r++)
		died[r] = waitpid(pid[r], &st, 0) == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}

/* The job's LATEST, or "(none)". */
static __attribute__((unused)) void
ru_latest_text(struct sr_store *st, const char *job, char *out, size_t len)
{
	char *key = sr_asprintf("%s/LATEST", job), err[SR_ERRMAX];
	void *buf;
	size_t n;

	snprintf(out, len, "(none)");
	if (sr_store_get(st, key, 4096, &buf, &n, NULL, err) == 0) {
		snprintf(out, len, "%.*s", (int)n, (char *)buf);
		free(buf);
	}
	free(key);
}

/* Of a replicated tensor of b bytes in chunks of chunk, the bytes rank r
 * of w saves: the chunks [r n / w, (r + 1) n / w) of its n. */
static __attribute__((unused)) uint64_t
ru_share_bytes(uint64_t b, uint64_t chunk, int w, int r)
{
	uint64_t n = (b + chunk - 1) / chunk;
	uint64_t first = (uint64_t)r * n / (uint64_t)w * chunk;
	uint64_t end = (uint64_t)(r + 1) * n / (uint64_t)w * chunk;

	return (end < b ? end : b) - (first < b ? first : b);
}

/* The box [off, off + size) of a whole tensor g (ndim of 0 to 2
 * dimensions of shape, es-byte elements) into buf, row-major (to: 1), or
 * compared with buf (to 0: 1 when they are equal). */
static __attribute__((unused)) int
ru_box_copy(int ndim, const uint64_t *shape, size_t es, const uint8_t *g, const uint64_t *off,
    const uint64_t *size, uint8_t *buf, int to)
{
	uint64_t rows = ndim == 2 ? size[0] : 1, rlen = ndim == 0 ? 1 : size[ndim - 1], i;

	for (i = 0; i < rows; i++) {
		uint64_t src = ndim == 2 ? (off[0] + i) * shape[1] + off[1] : ndim == 1 ? off[0] : 0;
		const uint8_t *a = g + src * es;
		uint8_t *b = buf + i * rlen * es;

		if (to)
			memcpy(b, a, rlen * es);
		else if (memcmp(b, a, rlen * es) != 0)
			return 0;
	}
	return 1;
}

#endif
