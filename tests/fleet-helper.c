/*
 * fleet-helper.c: plays the agent's part for the shell tests of the
 * fleet's commands (t92-fleet-cmds.sh, t93-fleet-s3.sh) until `spotrun
 * agent` exists, with the queue's own calls (queue/queue.h, lease.h):
 *
 *   fleet-helper status URL ID STATE EPOCH ATTEMPTS PREEMPTIONS USED LOST COST ONDEMAND STEP HOST
 *       write job ID's status marker (STEP -1: none), the older ones deleted
 *   fleet-helper many URL PREFIX N
 *       N status markers PREFIX.00001 ..., states and figures by number (8 threads)
 *   fleet-helper hold URL ID SECONDS
 *       claim job ID as an agent would, write its marker running, print
 *       "held ID epoch E", then every 0.1 s look for a cancel request: on
 *       one print "cancel requested, checkpoint N", end the job cancelled
 *       (lease and marker) and exit 0; exit 3 after SECONDS without one
 *   fleet-helper end URL ID STATE
 *       claim job ID and end it in STATE (succeeded, failed, cancelled,
 *       released), its marker too (1 attempt)
 *   fleet-helper log URL ID RUN ATTEMPT
 *       ship standard input as one log segment of run RUN, attempt ATTEMPT
 *   fleet-helper lease URL ID
 *       print job ID's lease: "STATE EPOCH", or "none"
 *   fleet-helper put URL KEY
 *       put standard input at KEY of the queue's checkpoint store Q/ckpt
 *
 * Exits 0, or 1 with the error on stderr.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lease.h"
#include "queue.h"
#include "store.h"
#include "util.h"

static struct sr_queue *
open_q(const char *url)
{
	struct sr_queue *q;
	char err[SR_ERRMAX];

	if (sr_queue_open(url, &q, err) != 0) {
		fprintf(stderr, "fleet-helper: %s\n", err);
		exit(1);
	}
	return q;
}

static void
die_rc(int rc, const char *err)
{
	if (rc != 0) {
		fprintf(stderr, "fleet-helper: %s (%s)\n", err, sr_queue_rc_name(rc));
		exit(1);
	}
}

static enum sr_lease_state
state_of(const char *s)
{
	enum sr_lease_state st;

	if (sr_lease_state_parse(s, &st) == -1) {
		fprintf(stderr, "fleet-helper: %s is no lease state\n", s);
		exit(1);
	}
	return st;
}

static int
cmd_status(char **av)
{
	struct sr_queue *q = open_q(av[0]);
	struct sr_queue_status s = { 0 };
	char err[SR_ERRMAX];

	snprintf(s.id, sizeof s.id, "%s", av[1]);
	s.state = state_of(av[2]);
	s.epoch = atoll(av[3]);
	s.attempts = atoi(av[4]);
	s.preemptions = atoi(av[5]);
	s.gpu_seconds = atoll(av[6]);
	s.lost_gpu_seconds = atoll(av[7]);
	s.cost = atof(av[8]);
	s.on_demand_cost = atof(av[9]);
	s.step = atoll(av[10]);
	snprintf(s.host, sizeof s.host, "%s", av[11]);
	die_rc(sr_queue_status_set(q, &s, NULL, err), err);
	sr_queue_close(q);
	return 0;
}

struct filler {
	struct sr_queue *q;
	const char *prefix;
	int from, to, failed;
};

static void *
fill_main(void *arg)
{
	struct filler *f = arg;
	struct sr_queue_status s;
	char err[SR_ERRMAX];
	int i;

	for (i = f->from; i < f->to; i++) {
		memset(&s, 0, sizeof s);
		snprintf(s.id, sizeof s.id, "%s.%05d", f->prefix, i + 1);
		s.state = (enum sr_lease_state)(i % SR_LEASE_NSTATES);
		s.epoch = 1 + i % 3;
		s.attempts = 1 + i % 3;
		s.preemptions = i % 3;
		s.gpu_seconds = 3600;
		s.lost_gpu_seconds = 360 * (i % 3);
		s.cost = 0.25;
		s.on_demand_cost = 1.0;
		s.step = i;
		snprintf(s.host, sizeof s.host, "vm-%d", i % 50);
		if (sr_queue_status_set(f->q, &s, "", err) != SR_QUEUE_OK) {
			fprintf(stderr, "fleet-helper: %s\n", err);
			f->failed = 1;
			return NULL;
		}
	}
	return NULL;
}

static int
cmd_many(char **av)
{
	struct sr_queue *q = open_q(av[0]);
	struct filler f[8];
	pthread_t th[8];
	int n = atoi(av[2]), i, failed = 0;

	for (i = 0; i < 8; i++) {
		f[i] = (struct filler){ q, av[1], i * n / 8, (i + 1) * n / 8, 0 };
		pthread_create(&th[i], NULL, fill_main, &f[i]);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		failed |= f[i].failed;
	}
	sr_queue_close(q);
	return failed;
}

static struct sr_queue_job *
claim(struct sr_queue *q, const char *id, struct sr_lease_owner *me, double ttl)
{
	struct sr_queue_agent a = { .owner = me, .gpus = 8, .ttl = ttl };
	struct sr_queue_job *j;
	char err[SR_ERRMAX];

	if (sr_lease_owner_local(me, "test-agent", "i-test", "local", err) != 0) {
		fprintf(stderr, "fleet-helper: %s\n", err);
		exit(1);
	}
	die_rc(sr_queue_claim_id(q, &a, id, &j, err), err);
	return j;
}

/* The job's marker in state, at its lease's epoch, 1 attempt. */
static void
mark(struct sr_queue *q, struct sr_queue_job *j, enum sr_lease_state state, char *old)
{
	struct sr_queue_status s = { 0 };
	char err[SR_ERRMAX];

	snprintf(s.id, sizeof s.id, "%s", j->marker.id);
	s.epoch = sr_lease_epoch(j->lease);
	s.state = state;
	s.attempts = 1;
	s.step = -1;
	snprintf(s.host, sizeof s.host, "test-host");
	die_rc(sr_queue_status_set(q, &s, old[0] != '\0' ? old : NULL, err), err);
	snprintf(old, SR_QUEUE_KEY_MAX, "%s", s.key);
}

static int
cmd_hold(char **av)
{
	struct sr_queue *q = open_q(av[0]);
	struct sr_lease_owner me;
	struct sr_queue_job *j = claim(q, av[1], &me, 3600);
	char err[SR_ERRMAX], old[SR_QUEUE_KEY_MAX] = "";
	double until = sr_mono() + atof(av[2]);
	int ckpt, r;

	mark(q, j, SR_LEASE_RUNNING, old);
	printf("held %s epoch %lld\n", av[1], (long long)sr_lease_epoch(j->lease));
	fflush(stdout);
	while (sr_mono() < until) {
		r = sr_queue_cancel_requested(q, av[1], &ckpt, err);
		if (r == -1)
			die_rc(SR_QUEUE_ERROR, err);
		if (r == 1) {
			printf("cancel requested, checkpoint %d\n", ckpt);
			fflush(stdout);
			die_rc(sr_queue_job_end(q, j, SR_LEASE_CANCELLED, err), err);
			mark(q, j, SR_LEASE_CANCELLED, old);
			sr_queue_job_free(j);
			sr_queue_close(q);
			return 0;
		}
		sr_sleep(0.1);
	}
	return 3;
}

static int
cmd_end(char **av)
{
	struct sr_queue *q = open_q(av[0]);
	struct sr_lease_owner me;
	struct sr_queue_job *j = claim(q, av[1], &me, 60);
	enum sr_lease_state st = state_of(av[2]);
	char err[SR_ERRMAX], old[SR_QUEUE_KEY_MAX] = "";

	die_rc(sr_queue_job_end(q, j, st, err), err);
	mark(q, j, st, old);
	sr_queue_job_free(j);
	sr_queue_close(q);
	return 0;
}

/* Standard input, all of it (malloc'd). */
static char *
slurp(size_t *len)
{
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	do {
		if (n == cap)
			buf = sr_realloc(buf, cap = cap ? cap * 2 : 4096);
		r = fread(buf + n, 1, cap - n, stdin);
		n += r;
	} while (r > 0);
	*len = n;
	return buf;
}

static int
cmd_log(char **av)
{
	struct sr_queue *q = open_q(av[0]);
	struct sr_queue_log *lw;
	char err[SR_ERRMAX];
	size_t len;
	char *buf = slurp(&len);

	if ((lw = sr_queue_log_open(q, av[1], atoll(av[2]), atoi(av[3]), 3600, 0, err)) == NULL)
		die_rc(SR_QUEUE_ERROR, err);
	sr_queue_log_write(lw, buf, len);
	if (sr_queue_log_close(lw, err) != 0)
		die_rc(SR_QUEUE_ERROR, err);
	free(buf);
	sr_queue_close(q);
	return 0;
}

static int
cmd_lease(char **av)
{
	struct sr_queue *q = open_q(av[0]);
	struct sr_queue_job_meta m;
	struct sr_lease_info li;
	struct sr_store *st;
	char err[SR_ERRMAX];
	int rc;

	die_rc(sr_queue_meta_read(q, av[1], &m, err), err);
	if ((st = sr_queue_ckpt_store(q, m.store, err)) == NULL)
		die_rc(SR_QUEUE_ERROR, err);
	rc = sr_lease_read(st, av[1], &li, err);
	if (rc == SR_LEASE_NOTFOUND)
		printf("none\n");
	else if (rc == SR_LEASE_OK)
		printf("%s %lld\n", sr_lease_state_name(li.state), (long long)li.epoch);
	else
		printf("%s\n", sr_lease_rc_name(rc));
	sr_queue_job_meta_free(&m);
	sr_queue_close(q);
	return 0;
}

static int
cmd_put(char **av)
{
	struct sr_queue *q = open_q(av[0]);
	struct sr_store *st;
	char err[SR_ERRMAX];
	size_t len;
	char *buf = slurp(&len);

	if ((st = sr_queue_ckpt_store(q, sr_queue_ckpt_url(q), err)) == NULL ||
	    sr_store_put(st, av[1], buf, len, SR_PUT_OVERWRITE, NULL, NULL, err) != 0)
		die_rc(SR_QUEUE_ERROR, err);
	free(buf);
	sr_queue_close(q);
	return 0;
}

static const struct {
	const char *name;
	int nargs;
	int (*fn)(char **av);
} cmds[] = {
	{ "status", 12, cmd_status }, { "many", 3, cmd_many }, { "hold", 3, cmd_hold },
	{ "end", 3, cmd_end }, { "log", 4, cmd_log }, { "lease", 2, cmd_lease },
	{ "put", 2, cmd_put },
};

int
main(int argc, char **argv)
{
	size_t i;

	for (i = 0; argc > 1 && i < SR_ARRAY_LEN(cmds); i++)
		if (strcmp(argv[1], cmds[i].name) == 0) {
			if (argc - 2 != cmds[i].nargs) {
				fprintf(stderr, "fleet-helper %s: takes %d arguments\n", cmds[i].name,
				    cmds[i].nargs);
				return 1;
			}
			return cmds[i].fn(argv + 2);
		}
	fprintf(stderr, "usage: fleet-helper status|many|hold|end|log|lease|put ... (see "
	    "tests/fleet-helper.c)\n");
	return 1;
}
