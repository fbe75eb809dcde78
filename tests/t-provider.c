/*
 * t-provider.c: the preemption-notice providers (providers/): creation by
 * name, the notice pipe, the `local` provider's triggers (after, random,
 * notice file, trace replay, max_preemptions, prompt stop), the trace
 * reader's schedule and error messages, the trace check `spotrun check`
 * uses (where a start lies past the last up-period; a FIFO refused at
 * once), configuration errors told from system ones, and the `signal`
 * provider. Timings use short real durations and assert with >= 0.5 s of
 * slack.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "provider-int.h"
#include "provider.h"
#include "trace.h"
#include "util.h"
#include "tap.h"

static char tmpdir[] = "/tmp/t-provider.XXXXXX";

static struct sr_provider_conf
conf_local(void)
{
	struct sr_provider_conf c;

	memset(&c, 0, sizeof c);
	c.name = "local";
	c.window = 30;
	c.grace = 30;
	c.seed = 1;
	c.trace_scale = 1;
	c.max_preemptions = -1;
	return c;
}

static struct sr_provider *
new_provider(const struct sr_provider_conf *c)
{
	char err[SR_ERRMAX];
	struct sr_provider *p;

	if (sr_provider_new(c, &p, err) == -1)
		sr_fatal("sr_provider_new: %s", err);
	return p;
}

/* Wait up to timeout seconds for a notice; 1 with *n set, 0 on timeout. */
static int
wait_notice(struct sr_provider *p, double timeout, struct sr_notice *n)
{
	double end = sr_mono() + timeout;
	char err[SR_ERRMAX];

	for (;;) {
		struct pollfd pfd = { .fd = sr_provider_fd(p), .events = POLLIN };
		double left = end - sr_mono();
		int r;

		r = sr_provider_read(p, n, err);
		if (r == -1)
			sr_fatal("sr_provider_read: %s", err);
		if (r == 1)
			return 1;
		if (left <= 0)
			return 0;
		poll(&pfd, 1, (int)(left * 1000) + 1);
	}
}

static char *
write_tmp(const char *name, const char *text)
{
	char *path = sr_asprintf("%s/%s", tmpdir, name);
	FILE *fp = fopen(path, "w");

	if (fp == NULL || fputs(text, fp) == EOF || fclose(fp) != 0)
		sr_fatal("write %s: %s", path, strerror(errno));
	return path;
}

static void
test_names(void)
{
	struct sr_provider_conf c = conf_local();
	struct sr_provider *p;
	char err[SR_ERRMAX] = "";
	int fl;

	c.name = "gce";
	is_int(sr_provider_new(&c, &p, err), SR_PROVIDER_ECONF,
	    "unknown provider name fails as a configuration error");
	is_str(err, "create provider \"gce\": unknown name; valid names: auto, aws, azure, gcp, local, signal",
	    "unknown provider name lists the valid ones");

	c.name = "auto";
	p = new_provider(&c);
	is_str(sr_provider_name(p), "local", "auto picks local here");
	fl = fcntl(sr_provider_fd(p), F_GETFL);
	ok(fl != -1 && (fl & O_NONBLOCK), "notice pipe is non-blocking");
	fl = fcntl(sr_provider_fd(p), F_GETFD);
	ok(fl != -1 && (fl & FD_CLOEXEC), "notice pipe is close-on-exec");
	sr_provider_free(p);

	c.name = NULL;
	p = new_provider(&c);
	is_str(sr_provider_name(p), "local", "no name is auto");
	sr_provider_free(p);

	c = conf_local();
	c.window = -1;
	sr_provider_new(&c, &p, err);
	is_str(err, "create provider local: window is -1; it must be a finite number >= 0",
	    "negative window is refused");
	c = conf_local();
	c.max_preemptions = -2;
	sr_provider_new(&c, &p, err);
	is_str(err, "create provider local: max_preemptions is -2; it must be >= 0, "
	    "or -1 for no limit", "max_preemptions < -1 is refused");
	c = conf_local();
	c.name = "signal";
	c.grace = NAN;
	sr_provider_new(&c, &p, err);
	is_str(err, "create provider signal: grace is nan; it must be a finite number >= 0 "
	    "(seconds between SIGTERM and SIGKILL)", "signal: bad grace is refused");
}

static void
test_after(void)
{
	struct sr_provider_conf c = conf_local();
	struct sr_provider *p;
	struct sr_notice n;
	char err[SR_ERRMAX] = "";
	double t0, dt;

	c.after = 0.3;
	p = new_provider(&c);
	t0 = sr_now();
	is_int(sr_provider_start_vm(p, 1, err), 0, "start VM 1");
	is_int(sr_provider_start_vm(p, 2, err), -1, "start_vm twice fails");
	is_str(err, "start VM 2: VM 1 is still being watched; stop it first",
	    "start_vm twice: message");
	is_int(wait_notice(p, 2, &n), 1, "after: a notice comes");
	dt = n.seen - t0;
	ok(dt >= 0.3 && dt < 0.8, "after 0.3 s: seen %.3f s after start", dt);
	ok(sr_now() - t0 < 0.8, "after: the pipe was readable at once");
	is_int(n.kind, SR_NOTICE_PREEMPT, "after: kind is PREEMPT");
	ok(fabs(n.deadline - (n.seen + 30)) < 1e-6, "after: deadline = seen + window");
	is_str(n.reason, "simulated preemption (after 0.3 s)", "after: reason");
	is_int(wait_notice(p, 0.3, &n), 0, "after: only one notice per VM");
	is_int(sr_provider_next_vm(p), 1, "local: a next VM follows");
	is_int(sr_provider_ack(p, &n, err), 0, "local: ack is a no-op");
	sr_provider_stop_vm(p, NULL);
	is_int(sr_provider_start_vm(p, 0, err), -1, "attempt 0 is refused");
	is_str(err, "start VM 0: attempts are numbered from 1", "attempt 0: message");
	sr_provider_free(p);
}

static void
test_random(void)
{
	struct sr_provider_conf c = conf_local();
	struct sr_provider *p;
	struct sr_notice n;
	double a, sum = 0, d, t0;
	int i;

	a = sr_local_random_delay(10, 42, 1);
	ok(a > 0 && a == sr_local_random_delay(10, 42, 1),
	    "random: the same seed and attempt give the same delay (%.6f s)", a);
	ok(a != sr_local_random_delay(10, 43, 1), "random: another seed differs");
	ok(a != sr_local_random_delay(10, 42, 2), "random: another attempt differs");
	for (i = 1; i <= 20000; i++)
		sum += sr_local_random_delay(10, 7, i);
	ok(fabs(sum / 20000 - 10) < 0.4, "random: mean of 20000 draws %.3f ~ 10",
	    sum / 20000);

	c.random_mean = 0.3;
	c.seed = 5;
	c.window = 2;
	d = sr_local_random_delay(0.3, 5, 1);
	p = new_provider(&c);
	t0 = sr_now();
	sr_provider_start_vm(p, 1, NULL);
	is_int(wait_notice(p, d + 2, &n), 1, "random: a notice comes");
	ok(n.seen - t0 >= d && n.seen - t0 < d + 0.5,
	    "random: seen %.3f s after start, drawn %.3f s", n.seen - t0, d);
	ok(fabs(n.deadline - (n.seen + 2)) < 1e-6, "random: deadline = seen + window");
	is_str(n.reason, "simulated preemption (random, mean 0.3 s)", "random: reason");
	sr_provider_free(p);	/* frees with the VM still started */
}

static void
test_notice_file(void)
{
	struct sr_provider_conf c = conf_local();
	struct sr_provider *p;
	struct sr_notice n;
	char *path = sr_asprintf("%s/notice", tmpdir), *want;
	double t0;

	c.notice_file = path;
	c.window = 12;
	p = new_provider(&c);
	sr_provider_start_vm(p, 1, NULL);
	is_int(wait_notice(p, 0.3, &n), 0, "notice file: nothing before it exists");
	free(write_tmp("notice", ""));
	t0 = sr_now();
	is_int(wait_notice(p, 2, &n), 1, "notice file: a notice when it appears");
	ok(n.seen - t0 < 0.5, "notice file: seen %.3f s after creation", n.seen - t0);
	ok(fabs(n.deadline - (n.seen + 12)) < 1e-6, "notice file: deadline = seen + window");
	want = sr_asprintf("simulated preemption (notice file %s)", path);
	is_str(n.reason, want, "notice file: reason names it");
	ok(access(path, F_OK) == -1 && errno == ENOENT, "notice file: removed when taken");
	sr_provider_stop_vm(p, NULL);
	sr_provider_start_vm(p, 2, NULL);
	is_int(wait_notice(p, 0.3, &n), 0, "notice file: the next VM starts clean");
	free(write_tmp("notice", ""));
	is_int(wait_notice(p, 2, &n), 1, "notice file: works again on VM 2");
	sr_provider_free(p);
	free(want);
	free(path);
}

static void
test_max_preemptions(void)
{
	struct sr_provider_conf c = conf_local();
	struct sr_provider *p;
	struct sr_notice n;
	int vm;

	c.after = 0.1;
	c.max_preemptions = 2;
	p = new_provider(&c);
	for (vm = 1; vm <= 2; vm++) {
		sr_provider_start_vm(p, vm, NULL);
		is_int(wait_notice(p, 1.5, &n), 1, "max_preemptions 2: VM %d gets a notice", vm);
		sr_provider_stop_vm(p, NULL);
		is_int(sr_provider_next_vm(p), 1, "max_preemptions 2: a VM follows VM %d", vm);
	}
	sr_provider_start_vm(p, 3, NULL);
	is_int(wait_notice(p, 0.6, &n), 0, "max_preemptions 2: VM 3 gets none");
	sr_provider_stop_vm(p, NULL);
	sr_provider_free(p);

	/* A notice nobody read is dropped with its VM and does not count. */
	c.max_preemptions = 1;
	p = new_provider(&c);
	sr_provider_start_vm(p, 1, NULL);
	usleep(400 * 1000);
	sr_provider_stop_vm(p, NULL);
	is_int(wait_notice(p, 0, &n), 0, "an unread notice is dropped at stop_vm");
	sr_provider_start_vm(p, 2, NULL);
	is_int(wait_notice(p, 1.5, &n), 1, "max_preemptions 1: a dropped one did not count");
	sr_provider_stop_vm(p, NULL);
	sr_provider_start_vm(p, 3, NULL);
	is_int(wait_notice(p, 0.6, &n), 0, "max_preemptions 1: VM 3 gets none");
	sr_provider_free(p);

	c.max_preemptions = 0;
	p = new_provider(&c);
	sr_provider_start_vm(p, 1, NULL);
	is_int(wait_notice(p, 0.6, &n), 0, "max_preemptions 0: no notice at all");
	sr_provider_free(p);
}

/* stop_vm's left: the preemption notice of the VM nobody read, one whose
 * time came before the thread posted it included (a run stopping for
 * another reason learns that its machine goes too). */
static void
test_stop_left(void)
{
	struct sr_provider_conf c = conf_local();
	struct sr_provider *p;
	struct sr_notice left, n;

	c.after = 0.1;
	p = new_provider(&c);
	sr_provider_start_vm(p, 1, NULL);
	usleep(300 * 1000);
	memset(&left, 0, sizeof left);
	is_int(sr_provider_stop_vm(p, &left), 1, "stop_vm's left: the unread notice of the VM");
	is_int(left.kind, SR_NOTICE_PREEMPT, "stop_vm's left: ... a preemption");
	is_str(left.reason, "simulated preemption (after 0.1 s)", "stop_vm's left: ... its reason");
	is_int(wait_notice(p, 0, &n), 0, "stop_vm's left: ... taken off the pipe");
	/* its time has come as the VM starts: stopped at once, its thread
	 * may not have run yet, the notice is the VM's all the same */
	sr_provider_free(p);
	c.after = 0.000001;
	p = new_provider(&c);
	sr_provider_start_vm(p, 1, NULL);
	memset(&left, 0, sizeof left);
	is_int(sr_provider_stop_vm(p, &left), 1,
	    "stop_vm's left: a notice due as the VM stopped, whether or not its thread ran");
	ok(left.deadline > 0 && fabs(left.deadline - (left.seen + 30)) < 1e-6,
	    "stop_vm's left: ... with its deadline");
	sr_provider_free(p);
	c.after = 60;
	p = new_provider(&c);
	sr_provider_start_vm(p, 1, NULL);
	is_int(sr_provider_stop_vm(p, &left), 0, "stop_vm's left: none before its time");
	is_int(sr_provider_stop_vm(p, &left), 0, "stop_vm's left: none from a VM not watched");
	sr_provider_free(p);
}

static void
test_prompt_stop(void)
{
	struct sr_provider_conf c = conf_local();
	struct sr_provider *p;
	double t0;

	c.after = 60;
	c.random_mean = 3600;
	c.notice_file = "/nonexistent/spotrun-notice";
	p = new_provider(&c);
	sr_provider_start_vm(p, 1, NULL);
	usleep(100 * 1000);
	t0 = sr_mono();
	sr_provider_stop_vm(p, NULL);
	ok(sr_mono() - t0 < 0.2, "stop_vm with a pending timer returns in %.3f s",
	    sr_mono() - t0);
	sr_provider_free(p);
}

/* 10 s ticks: up 10-30, 50-90, 100-110, 120-150 (to the end). */
static const char synthetic[] =
    "{\"metadata\": {\"gap_seconds\": 10}, "
    "\"data\": [0, 1, 1, 0, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1]}";

/* An agent's watch between runs (machine_only): the trace alone plays;
 * after, random_mean and notice_file are each run's own, and the notice
 * file is left for the run to take. */
static void
test_machine_only(void)
{
	struct sr_provider_conf c = conf_local();
	struct sr_provider *p;
	struct sr_notice n;
	char *file, *trace;

	file = write_tmp("machine-only-notice", "");
	c.after = 0.000001;
	c.random_mean = 0.001;
	c.notice_file = file;
	c.machine_only = 1;
	p = new_provider(&c);
	sr_provider_start_vm(p, 1, NULL);
	is_int(wait_notice(p, 0.3, &n), 0, "machine_only: after, random_mean, notice_file give none");
	ok(access(file, F_OK) == 0, "machine_only: ... the notice file is left for the run");
	sr_provider_free(p);
	c.trace = trace = write_tmp("machine-only.json", synthetic);
	c.trace_scale = 20;
	c.window = 0.8;
	c.trace_start = 100;	/* VM 1 replays the third period: 0.5 s, at once */
	p = new_provider(&c);
	sr_provider_start_vm(p, 1, NULL);
	is_int(wait_notice(p, 1, &n), 1, "machine_only: the trace's notice comes");
	is_str(n.reason, "simulated preemption (trace up-period 3 of 4)",
	    "machine_only: ... the trace's, not after's");
	sr_provider_free(p);
	unlink(file);
	free(file);
	free(trace);
}

static void
test_trace_schedule(void)
{
	struct sr_provider_conf c = conf_local();
	static const double want[4][3] = {
		{ 10, 20, 0 }, { 50, 40, 0 }, { 100, 10, 0 }, { 120, 30, 1 },
	};
	/* Replayed at 20 trace seconds per second with a 0.8 s window: lives of
	 * 1.0, 2.0, 0.5 s (shorter than the window: at once) and the last
	 * reaches the end (no notice). */
	static const double lead[3] = { 0.2, 1.2, 0 }, life[3] = { 1.0, 2.0, 0.5 };
	char err[SR_ERRMAX] = "", *path, want_reason[SR_ERRMAX];
	const struct sr_trace_period *tp;
	struct sr_provider *p;
	struct sr_trace *t;
	struct sr_notice n;
	size_t k;
	int vm, good = 1;
	double t0;

	path = write_tmp("synthetic.json", synthetic);
	is_int(sr_trace_load(path, &t, err), 0, "synthetic trace loads");
	is_int(sr_trace_nperiods(t), 4, "synthetic trace: 4 up-periods");
	ok(sr_trace_gap(t) == 10 && sr_trace_duration(t) == 150,
	    "synthetic trace: gap 10 s, 150 s long");
	for (k = 0; k < 4; k++) {
		tp = sr_trace_period(t, k);
		if (tp->start != want[k][0] || tp->length != want[k][1] ||
		    tp->reaches_end != (int)want[k][2]) {
			tap_diag("period %zu: start %g length %g end %d", k, tp->start,
			    tp->length, tp->reaches_end);
			good = 0;
		}
	}
	ok(good, "synthetic trace: the exact up-periods");
	ok(sr_trace_first_period(t, 0) == 0 && sr_trace_first_period(t, 10) == 0 &&
	    sr_trace_first_period(t, 11) == 1 && sr_trace_first_period(t, 120) == 3 &&
	    sr_trace_first_period(t, 121) == 4, "first period at or after a start");
	sr_trace_free(t);

	c.trace = path;
	c.trace_scale = 20;
	c.window = 0.8;
	p = new_provider(&c);
	for (vm = 1; vm <= 3; vm++) {
		t0 = sr_now();
		sr_provider_start_vm(p, vm, NULL);
		is_int(wait_notice(p, 3, &n), 1, "trace: VM %d gets a notice", vm);
		ok(n.seen - t0 >= lead[vm - 1] && n.seen - t0 < lead[vm - 1] + 0.5,
		    "trace: VM %d notice %.3f s after start, want %.1f s", vm,
		    n.seen - t0, lead[vm - 1]);
		ok(fabs(n.deadline - t0 - life[vm - 1]) < 0.1,
		    "trace: VM %d deadline %.3f s after start = end of its period (%.1f s)",
		    vm, n.deadline - t0, life[vm - 1]);
		snprintf(want_reason, sizeof want_reason,
		    "simulated preemption (trace up-period %d of 4)", vm);
		is_str(n.reason, want_reason, "trace: VM %d reason", vm);
		sr_provider_stop_vm(p, NULL);
	}
	sr_provider_start_vm(p, 4, NULL);
	is_int(wait_notice(p, 1.2, &n), 0, "trace: the period reaching the end gives none");
	sr_provider_stop_vm(p, NULL);
	sr_provider_start_vm(p, 5, NULL);
	is_int(wait_notice(p, 0.3, &n), 0, "trace: a VM past the last period gives none");
	sr_provider_free(p);

	c.trace_start = 100;	/* VM 1 replays the third period */
	p = new_provider(&c);
	sr_provider_start_vm(p, 1, NULL);
	is_int(wait_notice(p, 0.5, &n), 1, "trace_start 100: VM 1 notice at once");
	is_str(n.reason, "simulated preemption (trace up-period 3 of 4)",
	    "trace_start 100: VM 1 replays period 3");
	sr_provider_free(p);

	/* An agent's machine, up 1.5 s before its run (vm_since): VM 2's
	 * period (2 s, lead 1.2 s) has 0.5 s left, so the notice comes at
	 * once with the period's own end as its deadline; the run's next VM
	 * is a fresh one. */
	c.trace_start = 0;
	c.vm_since = sr_now() - 1.5;
	p = new_provider(&c);
	sr_provider_start_vm(p, 2, NULL);
	is_int(wait_notice(p, 3, &n), 1, "vm_since: the aged VM 2 gets a notice");
	ok(fabs(n.deadline - (c.vm_since + 2.0)) < 1e-6 && n.seen <= n.deadline,
	    "vm_since: its deadline is its period's end from vm_since (%.3f s after it), "
	    "the notice before it", n.deadline - c.vm_since);
	is_str(n.reason, "simulated preemption (trace up-period 2 of 4)",
	    "vm_since: VM 2 replays period 2");
	sr_provider_stop_vm(p, NULL);
	t0 = sr_now();
	sr_provider_start_vm(p, 3, NULL);
	is_int(wait_notice(p, 3, &n), 1, "vm_since: VM 3 gets a notice");
	ok(n.deadline - t0 >= 0.5 - 1e-3 && n.deadline - t0 < 0.5 + 0.1,
	    "vm_since: VM 3's life counts from its own start (deadline %.3f s after, "
	    "want 0.5 s)", n.deadline - t0);
	sr_provider_stop_vm(p, NULL);
	sr_provider_free(p);
	c.vm_since = 0;

	c.trace_start = 121;
	is_int(sr_provider_new(&c, &p, err), SR_PROVIDER_ECONF,
	    "trace_start past the last period: a configuration error (the run exits 65)");
	snprintf(want_reason, sizeof want_reason, "create provider local: trace_start = "
	    "121 s: inside the last up-period of trace %s (120 s to 150 s); no up-period "
	    "starts at or after it; use a start time of at most 120 s, where the last one "
	    "starts", path);
	is_str(err, want_reason, "trace_start past the last period is refused");
	c.trace_start = 120;
	ok(sr_provider_new(&c, &p, err) == 0, "trace_start at the last period's start: created");
	sr_provider_free(p);
	c.trace_start = 0;
	c.trace_scale = 0;
	is_int(sr_provider_new(&c, &p, err), SR_PROVIDER_ECONF, "trace_scale 0: a configuration "
	    "error");
	is_str(err, "create provider local: trace_scale is 0; it must be > 0 (trace "
	    "seconds per real second, 1 = real time)", "trace_scale 0 is refused");
	free(path);
}

static void
test_real_trace(void)
{
	const char *top = getenv("top_srcdir");
	char err[SR_ERRMAX] = "", *path;
	const struct sr_trace_period *first, *last;
	struct sr_trace *t;
	double up = 0;
	size_t k;

	path = sr_asprintf("%s/../shared/data/spot-traces/"
	    "aws-p3.2xlarge-us-east-1c-2023-04-22.json", top ? top : "");
	if (top == NULL || access(path, R_OK) == -1) {
		ok(1, "real trace # SKIP %s", top == NULL ? "top_srcdir is not set "
		    "(run under make check)" : "no ../shared/data/spot-traces next to top_srcdir");
		free(path);
		return;
	}
	if (!ok(sr_trace_load(path, &t, err) == 0, "real trace loads")) {
		tap_diag("%s", err);
		free(path);
		return;
	}
	is_int(sr_trace_nperiods(t), 41, "real trace: 41 up-periods");
	for (k = 0; k < sr_trace_nperiods(t); k++)
		up += sr_trace_period(t, k)->length;
	first = sr_trace_period(t, 0);
	last = sr_trace_period(t, 40);
	ok(sr_trace_gap(t) == 32 && sr_trace_duration(t) == 638752 && up == 200768,
	    "real trace: 32 s ticks, 638752 s long, 200768 s up");
	ok(first->start == 11200 && first->length == 608 && last->start == 623104 &&
	    last->length == 2528 && !last->reaches_end,
	    "real trace: first and last up-periods");
	sr_trace_free(t);
	free(path);
}

static void
test_trace_errors(void)
{
	static const struct {
		const char *name, *text, *msg;
	} bad[] = {
		{ "badjson.json", "{\"metadata\": {\"gap_seconds\": 32},\n \"data\": [1, 0,",
		  "bad JSON at line 2, column 15: ']' expected near end of file" },
		{ "array.json", "[0, 1]", "the top level is an array; expected "
		  "{\"metadata\": {\"gap_seconds\": N}, \"data\": [0|1|..., ...]}" },
		{ "nometa.json", "{\"data\": [1]}", "\"metadata\" is missing; expected "
		  "{\"metadata\": {\"gap_seconds\": N}, \"data\": [0|1|..., ...]}" },
		{ "metastr.json", "{\"metadata\": \"32\", \"data\": [1]}",
		  "\"metadata\" is a string, not an object" },
		{ "nogap.json", "{\"metadata\": {}, \"data\": [1]}",
		  "\"metadata\".\"gap_seconds\" is missing; it gives the seconds between "
		  "two values of \"data\"" },
		{ "gapstr.json", "{\"metadata\": {\"gap_seconds\": \"32\"}, \"data\": [1]}",
		  "\"metadata\".\"gap_seconds\" is a string, not a number" },
		{ "gap0.json", "{\"metadata\": {\"gap_seconds\": 0}, \"data\": [1]}",
		  "\"metadata\".\"gap_seconds\" is 0; it must be > 0" },
		{ "gapneg.json", "{\"metadata\": {\"gap_seconds\": -2.5}, \"data\": [1]}",
		  "\"metadata\".\"gap_seconds\" is -2.5; it must be > 0" },
		{ "nodata.json", "{\"metadata\": {\"gap_seconds\": 32}}",
		  "\"data\" is missing; expected {\"metadata\": {\"gap_seconds\": N}, "
		  "\"data\": [0|1|..., ...]}" },
		{ "dataobj.json", "{\"metadata\": {\"gap_seconds\": 32}, \"data\": {}}",
		  "\"data\" is an object, not an array" },
		{ "neg.json", "{\"metadata\": {\"gap_seconds\": 32}, \"data\": [0, 1, -1]}",
		  "\"data\"[2] is -1; each value must be an integer from 0 to 4096: the "
		  "instances up (0: down, 1: up, N: N nodes of a multi-node trace)" },
		{ "big.json", "{\"metadata\": {\"gap_seconds\": 32}, \"data\": [4, 4097]}",
		  "\"data\"[1] is 4097; each value must be an integer from 0 to 4096: the "
		  "instances up (0: down, 1: up, N: N nodes of a multi-node trace)" },
		{ "str.json", "{\"metadata\": {\"gap_seconds\": 32}, \"data\": [\"1\"]}",
		  "\"data\"[0] is a string; each value must be an integer from 0 to 4096: "
		  "the instances up (0: down, 1: up, N: N nodes of a multi-node trace)" },
		{ "real.json", "{\"metadata\": {\"gap_seconds\": 32}, \"data\": [0, 1.0]}",
		  "\"data\"[1] is a real number; each value must be an integer from 0 to "
		  "4096: the instances up (0: down, 1: up, N: N nodes of a multi-node "
		  "trace)" },
		{ "down.json", "{\"metadata\": {\"gap_seconds\": 32}, \"data\": [0, 0, 0]}",
		  "no up-period: \"data\" has no 1 in its 3 values" },
		{ "empty.json", "{\"metadata\": {\"gap_seconds\": 32}, \"data\": []}",
		  "no up-period: \"data\" has no 1 in its 0 values" },
		{ "n5.json", "{\"metadata\": {\"gap_seconds\": 32, \"nodes\": 4}, "
		  "\"data\": [0, 4, 3, 5]}", "\"data\"[3] is 5; each value must be an "
		  "integer from 0 to 4 (\"metadata\".\"nodes\"): the nodes up" },
		{ "nneg.json", "{\"metadata\": {\"gap_seconds\": 32, \"nodes\": 4}, "
		  "\"data\": [2, -1]}", "\"data\"[1] is -1; each value must be an "
		  "integer from 0 to 4 (\"metadata\".\"nodes\"): the nodes up" },
		{ "nstr.json", "{\"metadata\": {\"gap_seconds\": 32, \"nodes\": 2}, "
		  "\"data\": [true]}", "\"data\"[0] is true; each value must be an "
		  "integer from 0 to 2 (\"metadata\".\"nodes\"): the nodes up" },
		{ "nodes0.json", "{\"metadata\": {\"gap_seconds\": 32, \"nodes\": 0}, "
		  "\"data\": [1]}", "\"metadata\".\"nodes\" is 0; it must be 1 to 4096 "
		  "(the nodes a value of \"data\" counts)" },
		{ "nodesstr.json", "{\"metadata\": {\"gap_seconds\": 32, \"nodes\": \"4\"}, "
		  "\"data\": [1]}", "\"metadata\".\"nodes\" is a string, not an integer" },
	};
	struct sr_provider_conf c = conf_local();
	char err[SR_ERRMAX], *path, *want;
	struct sr_provider *p;
	struct sr_trace *t;
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(bad); i++) {
		path = write_tmp(bad[i].name, bad[i].text);
		want = sr_asprintf("load trace %s: %s", path, bad[i].msg);
		strlcpy(err, "", sizeof err);
		t = NULL;
		is_int(sr_trace_load(path, &t, err), -1, "%s is refused", bad[i].name);
		is_str(err, want, "%s: message", bad[i].name);
		ok(t == NULL, "%s: nothing returned", bad[i].name);
		free(want);
		free(path);
	}

	path = sr_asprintf("%s/missing.json", tmpdir);
	want = sr_asprintf("load trace %s: No such file or directory", path);
	sr_trace_load(path, &t, err);
	is_str(err, want, "a missing trace file: message");
	free(want);
	c.trace = path;
	is_int(sr_provider_new(&c, &p, err), SR_PROVIDER_ECONF,
	    "a missing trace is a configuration error");
	want = sr_asprintf("create provider local: load trace %s: No such file or directory",
	    path);
	is_str(err, want, "the local provider reports a bad trace");
	free(want);
	free(path);

	want = sr_asprintf("load trace %s: not a regular file", tmpdir);
	sr_trace_load(tmpdir, &t, err);
	is_str(err, want, "a directory as trace: message");
	free(want);
}

/* A multi-node trace (values: nodes up, 0..4): node k is up while more
 * than k nodes are, so the highest nodes go first; node 0 is what
 * sr_trace_load gives; a node past "nodes" is refused; the local provider
 * replays node trace_node's periods, and a one-node trace the same for
 * every node. */
static void
test_trace_nodes(void)
{
	/* 10 s ticks: 4 4 3 3 1 0 2 4 */
	const char *text = "{\"metadata\": {\"gap_seconds\": 10, \"nodes\": 4}, "
	    "\"data\": [4, 4, 3, 3, 1, 0, 2, 4]}";
	/* each node's two up-periods: start, length; the second reaches the end */
	static const double want[4][2][2] = {
		{ { 0, 50 }, { 60, 20 } },
		{ { 0, 40 }, { 60, 20 } },
		{ { 0, 40 }, { 70, 10 } },
		{ { 0, 20 }, { 70, 10 } },
	};
	struct sr_provider_conf c = conf_local();
	char err[SR_ERRMAX] = "", *path, *msg;
	struct sr_provider *p;
	struct sr_trace *t;
	int node, good;
	size_t k;

	path = write_tmp("four.json", text);
	for (node = 0; node < 4; node++) {
		t = NULL;
		is_int(sr_trace_load_node(path, node, &t, err), 0, "4 nodes: node %d loads",
		    node + 1);
		if (t == NULL)
			continue;
		good = sr_trace_nodes(t) == 4 && sr_trace_nperiods(t) == 2;
		for (k = 0; good && k < 2; k++) {
			const struct sr_trace_period *tp = sr_trace_period(t, k);

			if (tp->start != want[node][k][0] || tp->length != want[node][k][1] ||
			    tp->reaches_end != (k == 1)) {
				tap_diag("node %d period %zu: %g +%g end %d", node + 1, k,
				    tp->start, tp->length, tp->reaches_end);
				good = 0;
			}
		}
		ok(good, "4 nodes: node %d's exact up-periods", node + 1);
		sr_trace_free(t);
	}
	is_int(sr_trace_load_node(path, 4, &t, err), -1, "4 nodes: node 5 is refused");
	msg = sr_asprintf("load trace %s: node 5 is not in it: it has 4 nodes "
	    "(\"metadata\".\"nodes\"); a gang replaying it may have at most that many",
	    path);
	is_str(err, msg, "4 nodes: node 5: message");
	free(msg);

	/* The provider of node 4 (trace_node 3) loads its own periods. */
	c.trace = path;
	c.trace_scale = 80;
	c.window = 0.1;
	c.trace_node = 3;
	is_int(sr_provider_new(&c, &p, err), 0, "4 nodes: node 4's provider starts");
	sr_provider_free(p);
	c.trace_node = 4;
	is_int(sr_provider_new(&c, &p, err), SR_PROVIDER_ECONF,
	    "4 nodes: a provider for node 5 is a configuration error");
	msg = sr_asprintf("create provider local: load trace %s: node 5 is not in it: "
	    "it has 4 nodes (\"metadata\".\"nodes\"); a gang replaying it may have "
	    "at most that many", path);
	is_str(err, msg, "4 nodes: node 5's provider: message");
	free(msg);
	free(path);

	/* The spot-traces format's own 4-node traces say no "nodes": the
	 * count is the largest value, and the periods are the same. */
	path = write_tmp("four-real.json", "{\"metadata\": {\"gap_seconds\": 10}, "
	    "\"data\": [4, 4, 3, 3, 1, 0, 2, 4]}");
	for (node = 0; node < 4; node++) {
		t = NULL;
		is_int(sr_trace_load_node(path, node, &t, err), 0,
		    "4 nodes by the largest value: node %d loads", node + 1);
		if (t == NULL)
			continue;
		good = sr_trace_nodes(t) == 4 && sr_trace_nperiods(t) == 2;
		for (k = 0; good && k < 2; k++)
			good = sr_trace_period(t, k)->start == want[node][k][0] &&
			    sr_trace_period(t, k)->length == want[node][k][1];
		ok(good, "4 nodes by the largest value: node %d's up-periods as with "
		    "\"nodes\": 4", node + 1);
		sr_trace_free(t);
	}
	is_int(sr_trace_load_node(path, 4, &t, err), -1,
	    "4 nodes by the largest value: node 5 is refused");
	msg = sr_asprintf("load trace %s: node 5 is not in it: it has 4 nodes (the "
	    "largest value of \"data\"); a gang replaying it may have at most that many",
	    path);
	is_str(err, msg, "4 nodes by the largest value: node 5: message");
	free(msg);
	free(path);

	/* A one-node trace replays the same for every node of a gang. */
	path = write_tmp("one.json", synthetic);
	c.trace = path;
	c.trace_node = 3;
	is_int(sr_provider_new(&c, &p, err), 0, "1 node: node 4's provider replays it");
	sr_provider_free(p);
	free(path);
}

/* Random traces, good and bad (values from -2 to 6, a few not integers,
 * "nodes" said or not): each either loads, with up-periods that lie in
 * the trace, in order, and that shrink from node to node (node k is up
 * only while node k - 1 is), or fails with "load trace PATH: "; never a
 * crash. A fixed seed: a failure reruns the same. */
static void
test_trace_fuzz(void)
{
	static const char *const odd[] = { "1.5", "\"2\"", "null", "true", "[1]" };
	char err[SR_ERRMAX], text[4096], digit[2] = "0", *path, *prefix;
	struct sr_trace *t[8];
	unsigned seed = 22;
	int trial, bad = 0, loaded = 0, node, nodes, said, i, n;
	size_t len, k;
	double dur, up[8];

	for (trial = 0; trial < 400; trial++) {
		said = rand_r(&seed) % 3 == 0 ? 1 + rand_r(&seed) % 5 : 0;
		n = rand_r(&seed) % 40;
		len = (size_t)snprintf(text, sizeof text, "{\"metadata\": {\"gap_seconds\": %d%s",
		    1 + rand_r(&seed) % 60, said ? ", \"nodes\": " : "");
		if (said)
			len += (size_t)snprintf(text + len, sizeof text - len, "%d", said);
		len += (size_t)snprintf(text + len, sizeof text - len, "}, \"data\": [");
		for (i = 0; i < n; i++) {
			digit[0] = (char)('0' + rand_r(&seed) % 7);
			len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", i ? ", " : "",
			    rand_r(&seed) % 50 == 0 ? odd[rand_r(&seed) % SR_ARRAY_LEN(odd)] : digit);
		}
		if (rand_r(&seed) % 20 == 0 && n > 0)	/* a negative value */
			len += (size_t)snprintf(text + len, sizeof text - len, ", -%d",
			    1 + rand_r(&seed) % 2);
		snprintf(text + len, sizeof text - len, "]}");
		path = write_tmp("fuzz.json", text);
		prefix = sr_asprintf("load trace %s: ", path);
		memset(t, 0, sizeof t);
		nodes = 0;
		for (node = 0; node < 8; node++) {
			if (sr_trace_load_node(path, node, &t[node], err) == -1) {
				if (strncmp(err, prefix, strlen(prefix)) != 0) {
					tap_diag("trial %d node %d: %s (trace %s)", trial, node, err,
					    text);
					bad++;
				}
				break;
			}
			nodes = sr_trace_nodes(t[node]);
			if (said && nodes != said)
				bad++;
		}
		for (node = 0; node < 8 && t[node] != NULL; node++) {
			dur = sr_trace_duration(t[node]);
			up[node] = 0;
			for (k = 0; k < sr_trace_nperiods(t[node]); k++) {
				const struct sr_trace_period *tp = sr_trace_period(t[node], k);

				up[node] += tp->length;
				if (tp->start < 0 || tp->length <= 0 || tp->start + tp->length > dur ||
				    (k > 0 && tp->start <= sr_trace_period(t[node], k - 1)->start))
					bad++;
			}
			if (node > 0 && up[node] > up[node - 1])
				bad++;
			if (node >= nodes)	/* loaded past its node count */
				bad++;
			loaded++;
		}
		for (node = 0; node < 8; node++)
			sr_trace_free(t[node]);
		free(prefix);
		free(path);
	}
	is_int(bad, 0, "fuzz: 400 random traces load with sound up-periods or fail with "
	    "\"load trace PATH: \" (%d node loads)", loaded);
}

/* Where a start can lie past the last up-period, in words, and
 * sr_trace_check's statuses, which tell `spotrun check` which key is
 * wrong; a FIFO is refused at once, never waited on. */
static void
test_trace_check(void)
{
	/* One up-period, 10 s to 30 s, in a trace of 50 s. */
	const char *text = "{\"metadata\": {\"gap_seconds\": 10}, \"data\": [0, 1, 1, 0, 0]}";
	static const struct { double start; const char *where; } past[] = {
		{ 20, "inside the last up-period of trace %s (10 s to 30 s)" },
		{ 35, "after the last up-period of trace %s (10 s to 30 s)" },
		{ 50, "past the end of trace %s (it lasts 50 s)" },
		{ 1e6, "past the end of trace %s (it lasts 50 s)" },
	};
	char err[SR_ERRMAX], where[SR_ERRMAX], *want, *path = write_tmp("one.json", text);
	char *bad = write_tmp("bad.json", "{\"metadata\": ");
	char *fifo = sr_asprintf("%s/fifo.json", tmpdir), *missing;
	struct sr_trace *t;
	size_t i, k = 99;
	double took;

	if (sr_trace_load(path, &t, err) == -1)
		sr_fatal("%s", err);
	ok(sr_trace_start_period(t, path, 0, &k, err) == 0 && k == 0,
	    "start 0: the first period");
	ok(sr_trace_start_period(t, path, 10, &k, err) == 0 && k == 0,
	    "start at the period's start: that period");
	for (i = 0; i < SR_ARRAY_LEN(past); i++) {
		snprintf(where, sizeof where, past[i].where, path);
		want = sr_asprintf("%s; no up-period starts at or after it; use a start time "
		    "of at most 10 s, where the last one starts", where);
		is_int(sr_trace_start_period(t, path, past[i].start, &k, err), -1,
		    "start %g: no period", past[i].start);
		is_str(err, want, "start %g: the message", past[i].start);
		free(want);
	}
	sr_trace_free(t);

	is_int(sr_trace_check(path, 10, 1, err), SR_TRACE_OK, "check: a good start");
	is_int(sr_trace_check(path, 20, 1, err), SR_TRACE_BAD_START, "check: a start past the last "
	    "period's");
	snprintf(where, sizeof where, "inside the last up-period of trace %s (10 s to 30 s); "
	    "no up-period starts at or after it; use a start time of at most 10 s, where the "
	    "last one starts", path);
	is_str(err, where, "check: its message");
	/* a gang: a one-node trace replays for each node; a multi-node one
	 * must have as many nodes as the gang */
	is_int(sr_trace_check(path, 10, 8, err), SR_TRACE_OK, "check: a one-node trace, a gang "
	    "of 8");
	want = write_tmp("two-nodes.json", "{\"metadata\": {\"gap_seconds\": 10}, "
	    "\"data\": [0, 2, 1, 0]}");
	is_int(sr_trace_check(want, 0, 2, err), SR_TRACE_OK, "check: 2 nodes, a gang of 2");
	is_int(sr_trace_check(want, 0, 3, err), SR_TRACE_BAD_FILE, "check: 2 nodes, a gang of 3");
	snprintf(where, sizeof where, "load trace %s: node 3 is not in it: it has 2 nodes (the "
	    "largest value of \"data\"); a gang replaying it may have at most that many", want);
	is_str(err, where, "check: 2 nodes, a gang of 3: its message");
	free(want);
	is_int(sr_trace_check(bad, 0, 1, err), SR_TRACE_BAD_FILE, "check: bad JSON");
	want = sr_asprintf("load trace %s: bad JSON at line 1, column 13: unexpected token "
	    "near end of file", bad);
	is_str(err, want, "check: its message");
	free(want);
	missing = sr_asprintf("%s/missing.json", tmpdir);
	is_int(sr_trace_check(missing, 0, 1, err), SR_TRACE_UNREADABLE, "check: a missing file "
	    "is not known yet");
	want = sr_asprintf("load trace %s: No such file or directory", missing);
	is_str(err, want, "check: its message");
	free(want);
	if (mkfifo(fifo, 0600) == -1)
		sr_fatal("mkfifo %s: %s", fifo, strerror(errno));
	took = sr_mono();
	is_int(sr_trace_check(fifo, 0, 1, err), SR_TRACE_BAD_FILE, "check: a FIFO is a bad file");
	took = sr_mono() - took;
	ok(took < 0.5, "check: a FIFO is refused at once (%.3f s)", took);
	want = sr_asprintf("load trace %s: not a regular file", fifo);
	is_str(err, want, "check: the FIFO's message");
	free(want);
	free(missing);
	free(fifo);
	free(bad);
	free(path);
}

static volatile sig_atomic_t got_signal;

static void
on_signal(int signo)
{
	got_signal = signo;
}

static void
test_signal(void)
{
	struct sr_provider_conf c = conf_local();
	struct sr_provider *p;
	struct sr_notice n, n2;
	struct sr_facts f;
	char err[SR_ERRMAX], host[64];
	double t0, t1;

	c.name = "signal";
	c.grace = 5;
	c.after = 0.1;	/* local settings: ignored by signal */
	p = new_provider(&c);
	is_str(sr_provider_name(p), "signal", "signal provider by name");
	sr_provider_start_vm(p, 1, NULL);
	is_int(wait_notice(p, 0.4, &n), 0, "signal: no notice by itself");

	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	raise(SIGINT);
	is_int(got_signal, SIGINT, "signal: SIGINT reached the test");
	is_int(sr_provider_on_signal(p, got_signal), 0, "signal: SIGINT is not a notice");
	is_int(sr_provider_on_signal(p, SIGUSR1), 0, "signal: SIGUSR1 is not a notice");
	is_int(wait_notice(p, 0, &n), 0, "signal: nothing queued for SIGINT");

	t0 = sr_now();
	raise(SIGTERM);
	is_int(got_signal, SIGTERM, "signal: SIGTERM reached the test");
	is_int(sr_provider_on_signal(p, got_signal), 1, "signal: SIGTERM is a notice");
	t1 = sr_now();
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	is_int(wait_notice(p, 0, &n), 1, "signal: the notice is queued");
	is_int(n.kind, SR_NOTICE_PREEMPT, "signal: kind PREEMPT");
	ok(n.seen >= t0 && n.seen <= t1, "signal: seen now");
	ok(fabs(n.deadline - (n.seen + 5)) < 1e-6, "signal: deadline = now + grace");
	is_str(n.reason, "SIGTERM", "signal: reason");
	usleep(50 * 1000);
	is_int(sr_provider_on_signal(p, SIGTERM), 1, "signal: a second SIGTERM");
	is_int(wait_notice(p, 0, &n2), 1, "signal: queues another notice");
	ok(n2.deadline == n.deadline, "signal: the grace period is not restarted");
	is_int(sr_provider_next_vm(p), 0, "signal: no next VM (exit 75)");
	is_int(sr_provider_ack(p, &n, err), 0, "signal: ack is a no-op");

	is_int(sr_provider_facts(p, &f, err), 0, "signal: facts");
	sr_provider_hostname(host, sizeof host, 0);
	is_str(f.provider, "signal", "signal facts: provider");
	is_str(f.instance_id, host, "signal facts: instance id is the host name");
	is_str(f.lifecycle, "unknown", "signal facts: lifecycle");
	sr_provider_free(p);
}

static void
test_local_facts(void)
{
	struct sr_provider_conf c = conf_local();
	struct sr_provider *p;
	struct sr_facts f;
	char err[SR_ERRMAX], host[64], want[128];
	int n = sr_ncpus();

	p = new_provider(&c);
	sr_provider_hostname(host, sizeof host, 1);
	sr_provider_facts(p, &f, err);
	snprintf(want, sizeof want, "local-%s-1", host);
	is_str(f.instance_id, want, "local facts before the first VM: those of VM 1");
	sr_provider_start_vm(p, 3, NULL);
	is_int(sr_provider_facts(p, &f, err), 0, "local: facts");
	snprintf(want, sizeof want, "local-%s-3", host);
	is_str(f.instance_id, want, "local facts: instance id local-<host>-<attempt>");
	is_str(f.provider, "local", "local facts: provider");
	if (access("/dev/nvidia0", F_OK) == -1) {
		snprintf(want, sizeof want, "local (%d CPU%s, no GPU)", n, n == 1 ? "" : "s");
		is_str(f.instance_type, want, "local facts: instance type");
	} else {
		ok(strncmp(f.instance_type, "local (", 7) == 0 &&
		    strstr(f.instance_type, " GPU") != NULL,
		    "local facts: instance type %s", f.instance_type);
	}
	is_str(f.zone, "local", "local facts: zone");
	is_str(f.lifecycle, "spot (simulated)", "local facts: lifecycle");
	sr_provider_free(p);
}

int
main(void)
{
	char err[SR_ERRMAX];

	if (mkdtemp(tmpdir) == NULL)
		sr_fatal("mkdtemp: %s", strerror(errno));
	/* "auto" probes the clouds: only ever a closed loopback port here. */
	setenv("SPOTRUN_AWS_ENDPOINT", "http://127.0.0.1:1", 1);
	setenv("SPOTRUN_GCP_ENDPOINT", "http://127.0.0.1:1", 1);
	setenv("SPOTRUN_AZURE_ENDPOINT", "http://127.0.0.1:1", 1);
	test_names();
	test_after();
	test_stop_left();
	test_machine_only();
	test_random();
	test_notice_file();
	test_max_preemptions();
	test_prompt_stop();
	test_trace_schedule();
	test_trace_nodes();
	test_real_trace();
	test_trace_errors();
	test_trace_check();
	test_trace_fuzz();
	test_signal();
	test_local_facts();
	if (sr_rmtree(tmpdir, err) == -1)
		tap_diag("%s", err);
	return tap_done();
}
