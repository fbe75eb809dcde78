/*
 * bench-ranges.c: the latency of small requests through the store, one
 * after the other, as a library restore makes them (one ranged read per
 * chunk, each waiting for the last). Not a test: the figures go to
 * doc/benchmarks.md (bench/s3.sh runs it too).
 *
 *   bench-ranges URL N BYTES     put one object of N x BYTES bytes at
 *                                URL's key "ranges.bin", then time N
 *                                ranged reads of BYTES each, in order,
 *                                and check every byte read
 *
 * It prints one line: "N reads of BYTES B: TOTAL ms, PER ms a read, CPU
 * ms a read, R requests, C connections, Q quick ACKs" (the last three the
 * reads' own, from sr_store_stats), and exits non-zero when a request
 * fails or a byte differs.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "http.h"
#include "store.h"
#include "util.h"

/* User and system CPU seconds of the process so far. */
static double
cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

int
main(int argc, char **argv)
{
	char err[SR_ERRMAX];
	struct sr_store *st;
	struct sr_upload *up;
	unsigned char *src, *buf;
	struct sr_store_stats s0, s1;
	size_t n, bytes, i, j;
	double t0, t, cpu0;

	if (argc != 4 || (n = strtoul(argv[2], NULL, 10)) == 0 ||
	    (bytes = strtoul(argv[3], NULL, 10)) == 0) {
		fprintf(stderr, "usage: bench-ranges URL N BYTES\n");
		return 2;
	}
	if (sr_http_init(err) == -1 || sr_store_open(argv[1], &st, err) != SR_STORE_OK) {
		fprintf(stderr, "bench-ranges: %s\n", err);
		return 1;
	}
	src = sr_malloc(n * bytes);
	buf = sr_malloc(bytes);
	for (i = 0; i < n * bytes; i++)
		src[i] = (unsigned char)(i * 2654435761u >> 13);
	if ((up = sr_store_upload_begin(st, "ranges.bin", err)) == NULL ||
	    sr_upload_write(up, src, n * bytes, err) == -1 || sr_upload_commit(up, err) == -1) {
		fprintf(stderr, "bench-ranges: %s\n", err);
		return 1;
	}
	sr_store_stats(st, &s0);
	cpu0 = cpu_seconds();
	t0 = sr_mono();
	for (i = 0; i < n; i++) {
		if (sr_store_read_range(st, "ranges.bin", (uint64_t)i * bytes, bytes, buf, err) != 0) {
			fprintf(stderr, "bench-ranges: %s\n", err);
			return 1;
		}
		for (j = 0; j < bytes; j++)
			if (buf[j] != src[i * bytes + j]) {
				fprintf(stderr, "bench-ranges: read %zu differs at byte %zu\n", i, j);
				return 1;
			}
	}
	t = sr_mono() - t0;
	cpu0 = cpu_seconds() - cpu0;
	sr_store_stats(st, &s1);
	printf("%zu reads of %zu B: %.0f ms, %.2f ms a read, CPU %.2f ms a read, %ld requests, "
	    "%ld connections, %ld quick ACKs\n", n, bytes, t * 1000, t * 1000 / n, cpu0 * 1000 / n,
	    s1.requests - s0.requests, s1.connections - s0.connections,
	    s1.quick_acks - s0.quick_acks);
	sr_store_delete(st, "ranges.bin", err);
	sr_store_close(st);
	free(src);
	free(buf);
	return 0;
}
