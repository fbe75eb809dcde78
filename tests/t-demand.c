/*
 * t-demand.c: the queue's demand that scalers and `spotrun up` follow
 * (fleet/pool-engine.h, sr_pool_demand_running) on a file:// queue: one
 * VM per pending job (a gang: its nodes minimum) and per running job;
 * none for an ended one; the job a claim took, whose pending marker is
 * gone before its agent writes "running", still one (counted for neither,
 * a scaler would end the VM that just claimed it: the chaos run's t58
 * failure); a running job's host in the list; max_vms caps.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease.h"
#include "pool-engine.h"
#include "queue.h"
#include "tap.h"
#include "util.h"

static struct sr_queue *q;

static void
add(const char *id, int nodes)
{
	static const char spec[] = "[job]\nname = x\n";
	struct sr_queue_meta m = { .id = id, .nodes_min = nodes, .nodes_max = nodes,
		.submitted = 1764560000.0, .by = "me@laptop" };
	char err[SR_ERRMAX];

	if (sr_queue_add(q, spec, strlen(spec), &m, err) != SR_QUEUE_OK)
		sr_fatal("%s", err);
}

/* The demand uncapped, "VMS" or "VMS host:id,...". */
static const char *
demand(int max_vms)
{
	static char out[512];
	struct sr_pool_running *run;
	char err[SR_ERRMAX];
	unsigned vms;
	size_t n, i;

	if (sr_pool_demand_running(q, max_vms, &vms, &run, &n, err) != 0) {
		snprintf(out, sizeof out, "error: %s", err);
		return out;
	}
	snprintf(out, sizeof out, "%u", vms);
	for (i = 0; i < n; i++)
		snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s:%s", i ? "," : " ",
		    run[i].host, run[i].id);
	free(run);
	return out;
}

static void
status(const char *id, int64_t epoch, enum sr_lease_state state, const char *host)
{
	struct sr_queue_status s;
	char err[SR_ERRMAX];

	memset(&s, 0, sizeof s);
	snprintf(s.id, sizeof s.id, "%s", id);
	s.epoch = epoch;
	s.state = state;
	s.step = -1;
	snprintf(s.host, sizeof s.host, "%s", host);
	if (sr_queue_status_set(q, &s, NULL, err) != SR_QUEUE_OK)
		sr_fatal("%s", err);
}

int
main(void)
{
	struct sr_lease_owner o;
	struct sr_queue_agent a;
	struct sr_queue_job *j;
	char dir[512], url[600], err[SR_ERRMAX];
	enum sr_queue_cancel how;
	int64_t epoch;

	tap_plan(9);
	snprintf(dir, sizeof dir, "%s/t-demand.XXXXXX", getenv("TMPDIR") != NULL ?
	    getenv("TMPDIR") : "/tmp");
	if (mkdtemp(dir) == NULL)
		sr_fatal("mkdtemp %s: %s", dir, strerror(errno));
	snprintf(url, sizeof url, "file://%s/q", dir);
	if (sr_queue_open(url, &q, err) != 0 || sr_lease_owner_local(&o, "agent-a", "", "local",
	    err) != 0)
		sr_fatal("%s", err);
	is_str(demand(-1), "0", "an empty queue asks for none");
	add("a", 0);
	add("b", 0);
	add("g", 3);
	is_str(demand(-1), "5", "two jobs and a gang of 3 pending: 5 VMs");

	memset(&a, 0, sizeof a);
	a.owner = &o;
	if (sr_queue_claim_id(q, &a, "a", &j, err) != SR_QUEUE_OK)
		sr_fatal("%s", err);
	epoch = sr_lease_epoch(j->lease);
	is_str(demand(-1), "5", "a claimed, its marker gone, its status still queued: still 5");
	status("a", epoch, SR_LEASE_RUNNING, "vm-1");
	is_str(demand(-1), "5 vm-1:a", "a running on vm-1: 5, its host listed");
	is_str(demand(2), "2 vm-1:a", "max_vms 2 caps it");
	status("a", epoch, SR_LEASE_SUCCEEDED, "vm-1");
	if (sr_queue_job_end(q, j, SR_LEASE_SUCCEEDED, err) != SR_QUEUE_OK)
		sr_fatal("%s", err);
	sr_queue_job_free(j);
	is_str(demand(-1), "4", "a succeeded: 4");
	if (sr_queue_cancel(q, "b", 0, &o, &how, err) != SR_QUEUE_OK)
		sr_fatal("%s", err);
	is_int(how, SR_QUEUE_CANCEL_DONE, "b was not running: cancelled at once");
	is_str(demand(-1), "3", "b cancelled while queued (its marker left for a claimer): 3");
	status("b", 0, SR_LEASE_QUEUED, "");
	is_str(demand(-1), "4", "b queued again by its status: its marker left counts again");
	sr_queue_close(q);
	snprintf(url, sizeof url, "rm -rf '%s'", dir);
	if (system(url) != 0)
		printf("# cleanup: %s failed\n", url);
	return tap_done();
}
