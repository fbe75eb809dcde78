/*
 * agent-setup.c: a job's [job] setup command run by the agent before the
 * job's first attempt on this machine (sr_agent_setup, agent-int.h; doc/
 * fleet.md "Setup"), once per machine per code and setup text: the
 * snapshot of a shipped working directory (its cache name, unique to the
 * store and the id) or the path of one that was not shipped, and the
 * command, hashed into H. Under DIR/setup/:
 *   H.lock  a flock: one agent of the machine sets up H at a time, the
 *           others wait and then find it done;
 *   H.log   setup's output, in the job log's format (joblog.h), shipped
 *           too, as the job's run's attempt 0;
 *   H.done  written once setup exited 0: the seconds it took; a failed or
 *           stopped setup leaves none, so the next claim runs it again;
 *   H/      a shipped working directory's set-up tree: a copy of the
 *           pristine cache (agent-workdir.c) that setup runs in, and from
 *           which each job's copy is then made, so that what setup writes
 *           into the working directory (a .venv) is in every job's copy
 *           while the cache stays as restored. A working directory that
 *           was not shipped is set up in place.
 * While setup runs, the agent's signals and the job's cancel pipe are
 * watched: SIGTERM (a spot machine's shutdown) or another signal that ends
 * the agent, or a cancel, stops setup's process group and is no failure
 * of the job; the lease is renewed by the caller's keeper, whose loss
 * stops it too.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent-int.h"
#include "chunksum.h"
#include "copytree.h"
#include "jobenv.h"
#include "joblog.h"
#include "jobspec.h"
#include "snapshot.h"
#include "supervise.h"
#include "util.h"

#define STOP_GRACE 10.0		/* seconds a stopped setup gets before SIGKILL */
#define DRAIN_MAX 2.0		/* seconds its output is read after it exited */

extern char **environ;

struct tail {
	struct sr_agent_setup *s;
	char line[SR_AGENT_SETUP_TAIL][SR_AGENT_SETUP_LINEMAX];
	size_t n;			/* lines kept so far (the last ones) */
};

/* Each log line to the caller, and the text of out and err lines kept for
 * the tail of a failed setup. */
static void
sink(void *arg, const char *buf, size_t len)
{
	struct tail *t = arg;
	struct sr_agent_setup *s = t->s;
	const char *p = buf, *end = buf + len;

	if (s->log != NULL)
		s->log(s->log_arg, buf, len);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl != NULL ? nl : end, *text = memchr(p, ' ', (size_t)(e - p));
		size_t n;

		/* "+0001.234 out TEXT": not spotrun's own lines */
		if (text != NULL && (size_t)(e - text) > 4 &&
		    (memcmp(text, " out ", 5) == 0 || memcmp(text, " err ", 5) == 0)) {
			text += 5;
			if (t->n == SR_AGENT_SETUP_TAIL) {
				memmove(t->line[0], t->line[1], sizeof t->line[0] * (SR_AGENT_SETUP_TAIL - 1));
				t->n--;
			}
			n = (size_t)(e - text) < SR_AGENT_SETUP_LINEMAX - 1 ? (size_t)(e - text) :
			    SR_AGENT_SETUP_LINEMAX - 1;
			memcpy(t->line[t->n], text, n);
			t->line[t->n++][n] = '\0';
		}
		p = e + 1;
	}
}

/* Take H.lock, watching the agent's signals meanwhile: 0 with *fd, 1 when
 * a signal that ends the agent came (*sig), or -1 with err. */
static int
lock_setup(struct sr_agent *ag, const char *id, const char *path, int *fd, int *sig, char *err)
{
	int said = 0, n;

	if ((*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644)) == -1)
		return sr_errno(err, "open %s", path);
	while (flock(*fd, LOCK_EX | LOCK_NB) == -1) {
		struct pollfd pf = { .fd = ag->sigfd, .events = POLLIN };

		if (errno != EWOULDBLOCK && errno != EINTR) {
			sr_errno(err, "lock %s", path);
			close(*fd);
			return -1;
		}
		if (!said++)
			sr_agent_say("%s: setup: waiting for another agent of this machine to set up "
			    "the same code", id);
		(void)poll(&pf, 1, 1000);
		while (sr_sig_next(ag->sigfd, &n) == 1) {
			if (n == SIGINT || n == SIGTERM || n == SIGHUP || n == SIGQUIT) {
				*sig = n;
				close(*fd);
				return 1;
			}
			if (n == SIGCHLD)
				while (waitpid(-1, NULL, WNOHANG) > 0)
					;
		}
	}
	return 0;
}

/* Run the command in dir, its output to the log l: 0 with s->code (its
 * exit code) or with s->signal / s->cancelled / s->lost set when it was
 * stopped, or -1 with err when it could not be started. */
static int
run_setup(struct sr_agent *ag, struct sr_agent_setup *s, const char *dir, struct sr_joblog *l,
    char *err)
{
	char *argv[] = { "/bin/sh", "-c", s->js->setup, NULL }, **env;
	struct sr_spawn_opts so;
	struct sr_child c;
	int status = 0, reaped = 0, stopped = 0, sig, i;
	double exited = 0;

	env = sr_jobenv_setup(environ, s->js, s->js->provider.name);
	memset(&so, 0, sizeof so);
	so.argv = argv;
	so.envp = env;
	so.cwd = dir;
	so.capture = 1;
	so.stdin_null = 1;
	so.parent_death_signal = SIGKILL;	/* a dead agent's setup is not finished */
	i = sr_spawn(&so, &c, err);
	sr_jobenv_free(env);
	if (i == -1)
		return sr_err_prefix(err, "run setup");
	for (;;) {
		struct pollfd pf[5];
		int np = 0, lost_fd = s->keeper != NULL ? sr_lease_keeper_fd(s->keeper) : -1;

		if (c.out_fd != -1)
			pf[np++] = (struct pollfd){ .fd = c.out_fd, .events = POLLIN };
		if (c.err_fd != -1)
			pf[np++] = (struct pollfd){ .fd = c.err_fd, .events = POLLIN };
		pf[np++] = (struct pollfd){ .fd = ag->sigfd, .events = POLLIN };
		if (s->stop_fd != -1 && !stopped)
			pf[np++] = (struct pollfd){ .fd = s->stop_fd, .events = POLLIN };
		if (lost_fd != -1 && !stopped)
			pf[np++] = (struct pollfd){ .fd = lost_fd, .events = POLLIN };
		(void)poll(pf, (nfds_t)np, reaped ? 100 : 1000);
		if (c.out_fd != -1 && sr_joblog_feed(l, SR_JOBLOG_OUT, c.out_fd, -1) != 1) {
			close(c.out_fd);
			c.out_fd = -1;
		}
		if (c.err_fd != -1 && sr_joblog_feed(l, SR_JOBLOG_ERR, c.err_fd, -1) != 1) {
			close(c.err_fd);
			c.err_fd = -1;
		}
		while (sr_sig_next(ag->sigfd, &sig) == 1) {
			if ((sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT) &&
			    !stopped) {
				s->signal = sig;
				stopped = 1;
			}
		}
		if (!stopped && s->stop_fd != -1) {
			char b;

			if (read(s->stop_fd, &b, 1) == 1)
				s->cancelled = stopped = 1;
		}
		if (!stopped && s->keeper != NULL &&
		    sr_lease_keeper_status(s->keeper, s->lost_why) != SR_LEASE_OK)
			s->lost = stopped = 1;
		if (!reaped && sr_reap(&c, &status) == 1) {
			reaped = 1;
			exited = sr_mono();
		}
		if (stopped && !reaped) {
			sr_child_stop(&c, STOP_GRACE);	/* reaps it all */
			reaped = 1;
			exited = sr_mono();
		}
		/* what a background process of setup's keeps open ends too */
		if (reaped && ((c.out_fd == -1 && c.err_fd == -1) || sr_mono() - exited > DRAIN_MAX))
			break;
	}
	sr_child_stop(&c, 0);
	if (c.out_fd != -1)
		close(c.out_fd);
	if (c.err_fd != -1)
		close(c.err_fd);
	s->code = c.exec_errno != 0 ? sr_exec_code(c.exec_errno) : sr_exit_code(status);
	return 0;
}

/* Say msg in the agent's log and in the job's (l). */
static void
say_both(struct sr_joblog *l, const char *id, const char *msg)
{
	sr_agent_say("%s: %s", id, msg);
	(void)sr_joblog_note(l, "%s", msg);
}

int
sr_agent_setup(struct sr_agent *ag, struct sr_agent_setup *s, char *err)
{
	const struct sr_jobspec *js = s->js;
	char name[33], hex[33], *key, *top, *base = NULL, *tree = NULL, *done = NULL;
	char *logp = NULL, *text = NULL, msg[SR_ERRMAX];
	uint8_t h[16];
	struct tail *t = NULL;
	struct sr_joblog *l = NULL;
	double t0, took;
	size_t len;
	int fd = -1, rc = -1, r;

	s->code = s->signal = s->cancelled = s->lost = 0;
	s->lost_why[0] = '\0';
	s->seconds = 0;
	/* the setup text is one line: after the last newline */
	if (s->snap != NULL) {
		if (sr_snapshot_cache_name(sr_queue_ckpt_url(ag->q), s->snap, name, err) == -1)
			return -1;
		key = sr_asprintf("snapshot %s\n%s", name, js->setup);
	} else {
		key = sr_asprintf("path %s\n%s", js->workdir, js->setup);
	}
	len = strlen(key);
	sr_chunksum(key, len, h);
	free(key);
	sr_hex_of(h, sizeof h, hex);
	top = sr_asprintf("%s/setup", ag->dir);
	base = sr_asprintf("%s/%s", top, hex);
	done = sr_asprintf("%s.done", base);
	logp = sr_asprintf("%s.log", base);
	tree = s->snap != NULL ? sr_strdup(base) : sr_strdup(js->workdir);
	if (sr_mkdirs(top, 0755, err) == -1)
		goto out;
	{
		char *lockp = sr_asprintf("%s.lock", base);

		r = lock_setup(ag, s->id, lockp, &fd, &s->signal, err);
		free(lockp);
		if (r == -1)
			goto out;
		if (r == 1) {
			rc = 0;		/* stopped while waiting: nothing ran */
			goto out;
		}
	}
	t = sr_malloc(sizeof *t);
	t->s = s;
	t->n = 0;
	if (sr_read_file(done, 64, &text, NULL, msg) == 0) {
		took = strtod(text, NULL);
		snprintf(msg, sizeof msg, "setup: done before on this machine (took %.1f s)", took);
		if ((l = sr_joblog_open(NULL, sr_mono(), err)) == NULL)
			goto out;
		sr_joblog_set_sink(l, sink, t);
		say_both(l, s->id, msg);
	} else {
		if (s->snap != NULL) {
			/* a tree a stopped setup left is not set up: start again
			 * from the pristine cache */
			char *cache = sr_asprintf("%s/workdirs/%s", ag->dir, name);

			r = sr_rmtree(tree, err) == -1 || sr_copytree(cache, tree, err) == -1 ? -1 : 0;
			free(cache);
			if (r == -1)
				goto out;
		}
		t0 = sr_mono();
		/* the log of this run of setup alone */
		if (unlink(logp) == -1 && errno != ENOENT) {
			sr_errno(err, "remove %s", logp);
			goto out;
		}
		if ((l = sr_joblog_open(logp, t0, err)) == NULL)
			goto out;
		sr_joblog_set_sink(l, sink, t);
		snprintf(msg, sizeof msg, "setup: %s: started in %s (its log: %s)", js->setup, tree, logp);
		say_both(l, s->id, msg);
		if (run_setup(ag, s, tree, l, err) == -1)
			goto out;
		s->seconds = sr_mono() - t0;
		if (s->signal != 0 || s->cancelled || s->lost) {
			snprintf(msg, sizeof msg, "setup: %s: stopped after %.1f s (%s)", js->setup,
			    s->seconds, s->signal != 0 ? strsignal(s->signal) :
			    s->cancelled ? "the job was cancelled" : "its lease was lost");
			say_both(l, s->id, msg);
			rc = 0;
			goto out;
		}
		snprintf(msg, sizeof msg, "setup: %s: %.1f s, exit %d", js->setup, s->seconds, s->code);
		say_both(l, s->id, msg);
		if (s->code != 0) {
			size_t i;

			snprintf(msg, sizeof msg, "setup failed (exit %d)", s->code);
			say_both(l, s->id, msg);
			if (t->n > 0)
				sr_agent_say("%s: setup: the last %zu line%s of its log:", s->id, t->n,
				    t->n == 1 ? "" : "s");
			for (i = 0; i < t->n; i++)
				sr_agent_say("%s: setup: | %s", s->id, t->line[i]);
			rc = 0;
			goto out;
		}
		free(text);
		text = sr_asprintf("%.3f\n", s->seconds);
		if (sr_write_file_atomic(done, text, strlen(text), 1, err) == -1)
			goto out;
	}
	if (s->snap != NULL && s->copy != NULL) {
		/* the job's copy, made again from the set-up tree */
		if (sr_rmtree(s->copy, err) == -1)
			goto out;
		if (sr_copytree(tree, s->copy, err) == -1) {
			char e2[SR_ERRMAX];

			(void)sr_rmtree(s->copy, e2);
			goto out;
		}
	}
	rc = 0;
out:
	if (l != NULL)
		sr_joblog_close(l);
	if (fd != -1)
		close(fd);	/* and its lock */
	free(t);
	free(text);
	free(top);
	free(base);
	free(tree);
	free(done);
	free(logp);
	return rc;
}
