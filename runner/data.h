/*
 * data.h: a job's [data] (jobspec.h's struct sr_data_entry) made real on
 * this machine before its first attempt: each entry's objects fetched
 * into a cache of the machine, once, and the entry's destination a
 * symlink to the cached copy, read-only (doc/spotrun-job.5, [data]). The
 * one fetcher of `spotrun run` (the cache in the working directory's
 * .spotrun/data) and of the agent (DIR/data, fleet/agent-data.c).
 */
#ifndef SR_DATA_H
#define SR_DATA_H

#include <stdint.h>

#include "jobspec.h"
#include "store.h"

struct sr_data_opts {
	const char *cache;	/* this machine's cache folder (made if missing) */
	/* Each line of progress ("data: ..."), as it happens. */
	void (*say)(void *arg, const char *line);
	/* Asked while waiting and between pieces: nonzero stops the fetch (a
	 * signal, a cancel, a lost lease: the caller knows which). NULL: never. */
	int (*stop)(void *arg);
	void *arg;
};

/* What a fetch did, over all entries. */
struct sr_data_result {
	long fetched, cached, removed;	/* objects fetched, found in the cache, and
					 * removed from it (gone from the store) */
	uint64_t bytes_fetched, bytes_cached;
	int stopped;		/* o->stop said so */
	int permanent;		/* the error will not go away by itself (nothing
				 * under the URL, access denied, a full disk) */
};

/* Make every [data] entry of js real on this machine: the objects under
 * its URL listed, those the cache does not hold with the same ETag and
 * size (or whose cached file's size or mtime changed since it was
 * written) fetched into it, each atomically (a half file is never seen),
 * those gone from the store removed; then its destination (relative ones
 * in js->workdir) a symlink to the cached copy. A cache (one per URL) is
 * locked while it is fetched, so two jobs of a machine fetch it once.
 * The stores open as the run's: no metadata address for credentials with
 * a provider that asks none (local, signal).
 * 0 with *res; 1 when o->stop stopped it (res->stopped); -1 with err
 * naming the entry ("[data] DEST = URL: reason") and res->permanent. */
int sr_data_fetch(const struct sr_jobspec *js, const struct sr_data_opts *o,
    struct sr_data_result *res, char *err);

#endif
