/*
 * qtool.c: the queue library (queue/queue.h) from the shell, for the agent's
 * tests and benchmark: put jobs in a queue, read their status markers and
 * leases, cancel one, put a raw object. Not a test itself.
 *
 *   qtool add QUEUE ID FILE [GPUS_MIN GPUS_MAX [GPU_TYPE]]
 *   qtool add-many QUEUE PREFIX N FILE [GPUS_MIN GPUS_MAX]
 *                                        jobs PREFIX.00001 ... (FILE with every
 *                                        @ID@ replaced by the job's id)
 *   qtool status QUEUE                   ID STATE EPOCH ATTEMPTS PREEMPTIONS
 *                                        USED LOST STEP HOST, a job a line
 *   qtool lease STORE JOB                STATE EPOCH PID AGENT
 *   qtool cancel QUEUE ID CHECKPOINT     CHECKPOINT 0 or 1; prints done/asked/ended
 *   qtool put STORE KEY FILE             a raw object (malformed ones, for tests)
 *   qtool status-set QUEUE ID STATE      a new status marker of ID in STATE, its
 *                                        counts kept (a stale one, for tests)
 * Exits 0, or 1 with the error on stderr.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "queue.h"
#include "util.h"

static int
die(const char *what, const char *err)
{
	fprintf(stderr, "qtool: %s: %s\n", what, err);
	return 1;
}

/* s with every @ID@ replaced by id (malloc'd). */
static char *
subst(const char *s, const char *id)
{
	size_t n = 0, idl = strlen(id);
	const char *p;
	char *out, *o;

	for (p = s; (p = strstr(p, "@ID@")) != NULL; p += 4)
		n++;
	out = o = sr_malloc(strlen(s) + n * idl + 1);
	while ((p = strstr(s, "@ID@")) != NULL) {
		memcpy(o, s, (size_t)(p - s));
		o += p - s;
		memcpy(o, id, idl);
		o += idl;
		s = p + 4;
	}
	strcpy(o, s);
	return out;
}

static int
add(struct sr_queue *q, const char *id, const char *text, int gmin, int gmax, const char *type)
{
	struct sr_queue_meta m;
	char err[SR_ERRMAX], by[300], host[256] = "";
	char *spec = subst(text, id);
	int rc;

	gethostname(host, sizeof host - 1);
	snprintf(by, sizeof by, "qtool@%s", host);
	memset(&m, 0, sizeof m);
	m.id = id;
	m.gpus_min = gmin;
	m.gpus_max = gmax;
	m.gpu_type = type;
	m.by = by;
	rc = sr_queue_add(q, spec, strlen(spec), &m, err);
	free(spec);
	return rc == SR_QUEUE_OK ? 0 : die("add", err);
}

static int
status_cb(const struct sr_queue_status *s, void *arg)
{
	char step[32] = "-";

	if (s->step >= 0)
		snprintf(step, sizeof step, "%lld", (long long)s->step);
	printf("%s %s %lld %d %d %lld %lld %s %s\n", s->id, sr_lease_state_name(s->state),
	    (long long)s->epoch, s->attempts, s->preemptions, (long long)s->gpu_seconds,
	    (long long)s->lost_gpu_seconds, step, s->host[0] != '\0' ? s->host : "-");
	return 0;
}

int
main(int argc, char **argv)
{
	struct sr_queue *q = NULL;
	char err[SR_ERRMAX], *text;
	size_t len;
	int rc = 1;

	if (argc < 3) {
		fprintf(stderr, "usage: qtool add|add-many|status|status-set|lease|cancel|put ...\n");
		return 2;
	}
	if (strcmp(argv[1], "lease") == 0 && argc == 4) {
		struct sr_store *st;
		struct sr_lease_info li;

		if (sr_store_open(argv[2], &st, err) != 0)
			return die("open", err);
		rc = sr_lease_read(st, argv[3], &li, err);
		if (rc == SR_LEASE_OK)
			printf("%s %lld %ld %s\n", sr_lease_state_name(li.state), (long long)li.epoch,
			    li.owner.pid, li.owner.agent[0] != '\0' ? li.owner.agent : "-");
		else
			printf("%s %s\n", sr_lease_rc_name(rc), err);
		sr_store_close(st);
		return rc == SR_LEASE_OK ? 0 : 1;
	}
	if (strcmp(argv[1], "put") == 0 && argc == 5) {
		struct sr_store *st;

		if (sr_store_open(argv[2], &st, err) != 0)
			return die("open", err);
		if (sr_read_file(argv[4], 1 << 20, &text, &len, err) != 0)
			return die("read", err);
		rc = sr_store_put(st, argv[3], text, len, SR_PUT_OVERWRITE, NULL, NULL, err);
		free(text);
		sr_store_close(st);
		return rc == SR_STORE_OK ? 0 : die("put", err);
	}
	if (sr_queue_open(argv[2], &q, err) != 0)
		return die("open", err);
	if (strcmp(argv[1], "add") == 0 && (argc == 5 || argc == 7 || argc == 8)) {
		if (sr_read_file(argv[4], SR_QUEUE_SPEC_MAX, &text, &len, err) != 0)
			return die("read", err);
		rc = add(q, argv[3], text, argc > 5 ? atoi(argv[5]) : 0, argc > 5 ? atoi(argv[6]) : 0,
		    argc > 7 ? argv[7] : NULL);
		free(text);
	} else if (strcmp(argv[1], "add-many") == 0 && (argc == 6 || argc == 8)) {
		int i, n = atoi(argv[4]), gmin = argc > 6 ? atoi(argv[6]) : 0;
		int gmax = argc > 6 ? atoi(argv[7]) : 0;

		if (sr_read_file(argv[5], SR_QUEUE_SPEC_MAX, &text, &len, err) != 0)
			return die("read", err);
		for (i = 1, rc = 0; i <= n && rc == 0; i++) {
			char id[SR_QUEUE_ID_MAX + 1];

			snprintf(id, sizeof id, "%s.%05d", argv[3], i);
			rc = add(q, id, text, gmin, gmax, NULL);
		}
		free(text);
	} else if (strcmp(argv[1], "status") == 0 && argc == 3) {
		rc = sr_queue_status_list(q, status_cb, NULL, NULL, NULL, err) == 0 ? 0 :
		    die("status", err);
	} else if (strcmp(argv[1], "status-set") == 0 && argc == 5) {
		struct sr_queue_status st;

		if (sr_queue_status_get(q, argv[3], &st, err) != SR_QUEUE_OK ||
		    sr_lease_state_parse(argv[4], &st.state) != 0)
			rc = die("status-set", err);
		else {
			st.time = 0;
			rc = sr_queue_status_set(q, &st, NULL, err) == 0 ? 0 : die("status-set", err);
		}
	} else if (strcmp(argv[1], "cancel") == 0 && argc == 5) {
		struct sr_lease_owner by;
		enum sr_queue_cancel how;

		sr_lease_owner_local(&by, "qtool", NULL, NULL, err);
		if (sr_queue_cancel(q, argv[3], atoi(argv[4]), &by, &how, err) != SR_QUEUE_OK)
			rc = die("cancel", err);
		else {
			printf("%s\n", how == SR_QUEUE_CANCEL_DONE ? "done" : how ==
			    SR_QUEUE_CANCEL_ASKED ? "asked" : "ended");
			rc = 0;
		}
	} else {
		fprintf(stderr, "qtool: bad arguments for %s\n", argv[1]);
		rc = 2;
	}
	fflush(stdout);
	sr_queue_close(q);
	return rc;
}
