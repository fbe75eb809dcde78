/*
 * t-supervise.c: the supervisor's process layer (runner/supervise.c) on
 * real processes: exit codes and 128+N, exec failures and the PATH of the
 * job's environment, process groups, signal mask and dispositions of the
 * job, captured output, reaping of reparented zombies, stopping a job and
 * its escaped descendants, the self-pipe.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervise.h"
#include "util.h"
#include "tap.h"

extern char **environ;

static int sigfd;
static char tmp[] = "/tmp/t-supervise.XXXXXX";
/* The jobs' groups, killed at the end whatever happened: a failing test
 * must not leave processes behind. */
static pid_t groups[64];
static size_t ngroups;

/* Wait (through the self-pipe) until c's leader exits; its exit code, or
 * -1 after 20 s. */
static int
wait_job(const struct sr_child *c)
{
	struct pollfd pfd = { .fd = sigfd, .events = POLLIN };
	double end = sr_mono() + 20;
	int st, signo;

	while (sr_mono() < end) {
		if (sr_reap(c, &st))
			return sr_exit_code(st);
		poll(&pfd, 1, 200);
		while (sr_sig_next(sigfd, &signo))
			;
	}
	return -1;
}

/* Run argv with envp (and cwd); the exit code; *xerrno the exec errno. */
static int
run(char *const *argv, char *const *envp, const char *cwd, int *xerrno)
{
	struct sr_spawn_opts o = { .argv = argv, .envp = envp, .cwd = cwd, .stdin_null = 1 };
	struct sr_child c;
	char err[SR_ERRMAX];

	if (sr_spawn(&o, &c, err) == -1) {
		tap_diag("%s", err);
		return -1;
	}
	if (xerrno != NULL)
		*xerrno = c.exec_errno;
	return wait_job(&c);
}

static int
sh(const char *script)
{
	char *argv[] = { "sh", "-c", (char *)script, NULL };

	return run(argv, environ, NULL, NULL);
}

/* Read fd until EOF (at most 20 s) into buf (NUL-terminated). */
static void
slurp(int fd, char *buf, size_t size)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	double end = sr_mono() + 20;
	size_t len = 0;
	ssize_t n;

	while (sr_mono() < end && len + 1 < size) {
		n = read(fd, buf + len, size - 1 - len);
		if (n == 0)
			break;
		if (n > 0)
			len += (size_t)n;
		else if (errno == EAGAIN)
			poll(&pfd, 1, 200);
		else if (errno != EINTR)
			break;
	}
	buf[len] = '\0';
}

/* Read one line ("ready\n") from a captured stdout, at most 20 s. */
static int
wait_line(int fd, const char *want)
{
	char buf[256];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	double end = sr_mono() + 20;
	size_t len = 0;
	ssize_t n;

	while (sr_mono() < end && len + 1 < sizeof buf) {
		n = read(fd, buf + len, 1);
		if (n == 1 && buf[len++] == '\n')
			break;
		if (n == 0)
			break;
		if (n == -1)
			poll(&pfd, 1, 200);
	}
	buf[len] = '\0';
	return strcmp(buf, want) == 0;
}

static int
spawn_sh(const char *script, struct sr_child *c)
{
	char *argv[] = { "sh", "-c", (char *)script, NULL };
	struct sr_spawn_opts o = { .argv = argv, .envp = environ, .cwd = tmp, .capture = 1,
		.stdin_null = 1 };
	char err[SR_ERRMAX];

	if (sr_spawn(&o, c, err) == -1) {
		tap_diag("%s", err);
		return -1;
	}
	if (ngroups < SR_ARRAY_LEN(groups))
		groups[ngroups++] = c->pid;
	return 0;
}

/* How many processes have ppid as parent, and how many of them are
 * zombies. */
static void
count_children(pid_t ppid, int *all, int *zombies)
{
	char path[64], buf[512], *p, state;
	struct dirent *de;
	DIR *d = opendir("/proc");
	int fd, pp;
	ssize_t n;

	*all = *zombies = 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
		if ((fd = open(path, O_RDONLY)) == -1)
			continue;
		n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		if ((p = strrchr(buf, ')')) == NULL ||
		    sscanf(p + 1, " %c %d", &state, &pp) != 2 || pp != ppid)
			continue;
		(*all)++;
		*zombies += (state == 'Z');
	}
	closedir(d);
}

static int
alive(pid_t pid)
{
	return kill(pid, 0) == 0;
}

static pid_t
read_pid(const char *name)
{
	char path[256], *s = NULL;
	pid_t pid = -1;
	double end = sr_mono() + 20;

	snprintf(path, sizeof path, "%s/%s", tmp, name);
	while (sr_mono() < end) {
		if (sr_read_file(path, 64, &s, NULL, NULL) == 0 &&
		    strchr(s, '\n') != NULL) {
			pid = atoi(s);
			free(s);
			break;
		}
		free(s);
		s = NULL;
		sr_sleep(0.02);
	}
	return pid;
}

static void
write_file(const char *name, const char *text, mode_t mode)
{
	char path[256];
	int fd;

	snprintf(path, sizeof path, "%s/%s", tmp, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd == -1 || sr_write_all(fd, text, strlen(text)) == -1)
		sr_fatal("write %s", path);
	close(fd);
}

static void
test_codes(void)
{
	char script[32], bad[2048] = "";
	int n, code, nbad = 0;

	is_int(sr_exit_code(0), 0, "sr_exit_code: exit 0");
	is_int(sr_exit_code(W_EXITCODE(255, 0)), 255, "sr_exit_code: exit 255");
	is_int(sr_exit_code(W_EXITCODE(0, SIGKILL)), 137, "sr_exit_code: SIGKILL is 137");
	is_int(sr_exec_code(ENOENT), 127, "sr_exec_code: ENOENT is 127");
	is_int(sr_exec_code(ENOTDIR), 127, "sr_exec_code: ENOTDIR is 127");
	is_int(sr_exec_code(EACCES), 126, "sr_exec_code: EACCES is 126");
	is_int(sr_exec_code(ENOEXEC), 126, "sr_exec_code: ENOEXEC is 126");
	is_int(sr_exec_code(EISDIR), 126, "sr_exec_code: EISDIR is 126");

	for (n = 0; n < 256; n++) {
		snprintf(script, sizeof script, "exit %d", n);
		if ((code = sh(script)) != n) {
			nbad++;
			snprintf(bad + strlen(bad), sizeof bad - strlen(bad),
			    " %d->%d", n, code);
		}
	}
	if (!ok(nbad == 0, "every exit code 0..255 passes through"))
		tap_diag("wrong:%s", bad);
}

static void
test_signals(void)
{
	static const int sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGKILL, SIGSEGV,
	    SIGTERM, SIGUSR1, SIGUSR2, SIGPIPE, SIGABRT, SIGALRM, SIGCHLD };
	char script[64];
	sigset_t set, old;
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(sigs); i++) {
		snprintf(script, sizeof script, "kill -%d $$; exit 3", sigs[i]);
		is_int(sh(script), sigs[i] == SIGCHLD ? 3 : 128 + sigs[i],
		    "killed by %s: %d", strsignal(sigs[i]),
		    sigs[i] == SIGCHLD ? 3 : 128 + sigs[i]);
	}
	/* The job does not inherit a blocked mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &old);
	is_int(sh("kill -TERM $$; exit 3"), 128 + SIGTERM,
	    "a signal blocked in the supervisor is not blocked in the job");
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void
test_exec(void)
{
	char *argv[] = { NULL, NULL };
	char *sharg[] = { "sh", "-c", "exit 5", NULL };
	char path[512], pathenv[1100], *env1[] = { pathenv, NULL };
	char *noenv[] = { "HOME=/", NULL };
	char err[SR_ERRMAX];
	struct sr_spawn_opts o = { .argv = argv, .envp = environ,
		.cwd = "/nonexistent-dir-t-sup", .stdin_null = 1 };
	struct sr_child c;
	int xe = 0;

	snprintf(path, sizeof path, "%s/bin1", tmp);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/bin2", tmp);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/bin1/dir", tmp);
	mkdir(path, 0755);
	write_file("bin1/tool", "#!/bin/sh\nexit 6\n", 0644);
	write_file("bin2/tool", "#!/bin/sh\nexit 7\n", 0755);
	write_file("bin2/empty", "", 0755);
	write_file("bin2/plain", "exit 8\n", 0755);

	argv[0] = "/nonexistent/t-supervise-cmd";
	is_int(run(argv, environ, NULL, &xe), 127, "nonexistent command: 127");
	is_int(xe, ENOENT, "nonexistent command: exec_errno ENOENT");
	argv[0] = "t-supervise-no-such-command";
	is_int(run(argv, environ, NULL, &xe), 127, "command not in PATH: 127");
	snprintf(path, sizeof path, "%s/bin1/tool", tmp);
	argv[0] = path;
	is_int(run(argv, environ, NULL, &xe), 126, "non-executable file: 126");
	is_int(xe, EACCES, "non-executable file: exec_errno EACCES");
	snprintf(path, sizeof path, "%s/bin1/tool/x", tmp);
	is_int(run(argv, environ, NULL, &xe), 127, "file as a directory: 127");
	is_int(xe, ENOTDIR, "file as a directory: exec_errno ENOTDIR");
	snprintf(path, sizeof path, "%s/bin1", tmp);
	is_int(run(argv, environ, NULL, &xe), 126, "a directory: 126");
	snprintf(path, sizeof path, "%s/bin2/empty", tmp);
	is_int(run(argv, environ, NULL, &xe), 126, "empty executable file: 126");
	is_int(xe, ENOEXEC, "empty executable file: exec_errno ENOEXEC");
	snprintf(path, sizeof path, "%s/bin2/plain", tmp);
	is_int(run(argv, environ, NULL, &xe), 126,
	    "executable without #! is not run through sh: 126");

	/* PATH of the job's environment, with execvp's rules. */
	argv[0] = "tool";
	snprintf(pathenv, sizeof pathenv, "PATH=/nonexistent:%s/bin1:%s/bin2", tmp, tmp);
	is_int(run(argv, env1, NULL, &xe), 7,
	    "PATH lookup skips a non-executable match and runs the next");
	snprintf(pathenv, sizeof pathenv, "PATH=%s/bin1", tmp);
	is_int(run(argv, env1, NULL, &xe), 126,
	    "PATH lookup finding only a non-executable file: 126");
	argv[0] = "dir";
	is_int(run(argv, env1, NULL, &xe), 126, "PATH lookup finding a directory: 126");
	snprintf(pathenv, sizeof pathenv, "PATH=/nonexistent");
	is_int(run(sharg, env1, NULL, &xe), 127,
	    "PATH is the job's: sh not found in the job's PATH");
	is_int(run(sharg, noenv, NULL, &xe), 5,
	    "no PATH in the job's environment: /bin:/usr/bin");
	snprintf(pathenv, sizeof pathenv, "PATH=");
	snprintf(path, sizeof path, "%s/bin2", tmp);
	argv[0] = "tool";
	is_int(run(argv, env1, path, &xe), 7,
	    "an empty PATH element is the job's cwd");
	argv[0] = "./tool";
	is_int(run(argv, environ, path, &xe), 7, "a relative command runs in cwd");

	argv[0] = "true";
	is_int(sr_spawn(&o, &c, err), -1, "nonexistent cwd: sr_spawn fails");
	is_str(err, "chdir /nonexistent-dir-t-sup: No such file or directory",
	    "nonexistent cwd: message");
	o.argv = (char *[]){ NULL };
	o.cwd = NULL;
	is_int(sr_spawn(&o, &c, err), -1, "empty argv: sr_spawn fails");
	is_str(err, "start job: empty command", "empty argv: message");
}

/* The fds open in this process now, as a string " 0 1 2 ... ". */
static void
list_fds(char *buf, size_t size)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int dfd = dirfd(d);

	buf[0] = '\0';
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || atoi(de->d_name) == dfd)
			continue;
		snprintf(buf + strlen(buf), size - strlen(buf), " %s ", de->d_name);
	}
	closedir(d);
}

static void
test_capture(const char *basefds)
{
	struct sr_child c;
	char out[4096], errb[4096], want[64], *p, *tok;
	int leaked = 0;

	if (spawn_sh("echo out; echo err >&2; cat; echo $?", &c) == -1)
		return;
	ok((fcntl(c.out_fd, F_GETFL) & O_NONBLOCK) && (fcntl(c.err_fd,
	    F_GETFL) & O_NONBLOCK), "captured read ends are non-blocking");
	slurp(c.out_fd, out, sizeof out);
	slurp(c.err_fd, errb, sizeof errb);
	is_str(out, "out\n0\n", "captured stdout; stdin is /dev/null");
	is_str(errb, "err\n", "captured stderr");
	is_int(wait_job(&c), 0, "captured job exits 0");
	close(c.out_fd);
	close(c.err_fd);

	/* The job has its own group, and sees it from inside too. */
	if (spawn_sh("read a b c d e rest < /proc/$$/stat; echo $e", &c) == -1)
		return;
	is_int(getpgid(c.pid), c.pid, "the job leads a process group of its own");
	slurp(c.out_fd, out, sizeof out);
	snprintf(want, sizeof want, "%d\n", (int)c.pid);
	is_str(out, want, "the job sees its own pid as its group");
	wait_job(&c);
	close(c.out_fd);
	close(c.err_fd);

	/* No fd of the supervisor's leaks into the job. */
	if (spawn_sh("ls /proc/$$/fd", &c) == -1)
		return;
	slurp(c.out_fd, out, sizeof out);
	wait_job(&c);
	close(c.out_fd);
	close(c.err_fd);
	for (tok = strtok_r(out, " \n", &p); tok; tok = strtok_r(NULL, " \n", &p)) {
		snprintf(want, sizeof want, " %s ", tok);
		if (atoi(tok) > 2 && strstr(basefds, want) == NULL) {
			tap_diag("fd %s leaked into the job", tok);
			leaked++;
		}
	}
	is_int(leaked, 0, "the job inherits only 0, 1, 2 (and what we inherited)");
}

static void
test_signal_job(void)
{
	struct sr_child c;

	if (spawn_sh("trap 'exit 42' TERM; echo ready; while :; do sleep 0.05; done",
	    &c) == -1)
		return;
	ok(wait_line(c.out_fd, "ready\n"), "trapping job is ready");
	is_int(sr_child_signal(&c, SIGTERM), 0, "sr_child_signal to the group");
	is_int(wait_job(&c), 42, "the job's trap ran: exit 42");
	sr_child_stop(&c, 1.0);
	close(c.out_fd);
	close(c.err_fd);
	errno = 0;
	is_int(sr_child_signal(&c, SIGTERM), -1, "sr_child_signal to a gone group fails");
	is_int(errno, ESRCH, "... with ESRCH");
}

static void
test_zombies(void)
{
	struct sr_child c;
	int all, zombies, st = 0;
	pid_t self = getpid();

	/* The middle shell forks 40 children that exit at once, then
	 * becomes a sleep that never waits for them; when it exits, its 40
	 * zombies are reparented to us (subreaper). */
	if (spawn_sh("sh -c 'for i in $(seq 40); do true & done; exec sleep 0.3';"
	    " echo ready; exec sleep 1000", &c) == -1)
		return;
	ok(wait_line(c.out_fd, "ready\n"), "zombie maker is done");
	sr_sleep(0.1);
	count_children(self, &all, &zombies);
	is_int(zombies, 40, "40 orphaned zombies reparented to the subreaper");
	is_int(sr_reap(&c, &st), 0, "sr_reap: the leader is still running");
	count_children(self, &all, &zombies);
	is_int(zombies, 0, "sr_reap reaped every zombie");
	is_int(all, 1, "only the leader is left");
	is_int(sr_child_stop_set(&c, 1, 1.0, &st, NULL), 0, "stop: nothing left");
	is_int(sr_exit_code(st), 128 + SIGTERM, "stop reports the leader's status");
	count_children(self, &all, &zombies);
	is_int(all, 0, "no child left after stop");
	close(c.out_fd);
	close(c.err_fd);
}

static void
test_stop(void)
{
	struct sr_child c, two[2];
	int st[2] = { -1, -1 }, reaped[2] = { 0, 0 }, all, z;
	pid_t esc, bg;
	double t;

	/* A job ignoring SIGTERM is killed after the grace period. */
	if (spawn_sh("trap '' TERM; echo ready; while :; do sleep 0.05; done", &c) == -1)
		return;
	ok(wait_line(c.out_fd, "ready\n"), "TERM-ignoring job is ready");
	t = sr_mono();
	is_int(sr_child_stop_set(&c, 1, 0.5, st, reaped), 0, "stop: nothing left");
	t = sr_mono() - t;
	ok(t >= 0.5 && t < 2.5, "SIGKILL came after the 0.5 s grace (%.2f s)", t);
	is_int(reaped[0], 1, "the leader was reaped by stop");
	is_int(sr_exit_code(st[0]), 137, "the leader was killed by SIGKILL");
	close(c.out_fd);
	close(c.err_fd);

	/* A job that exits on SIGTERM: stop returns without the whole grace. */
	if (spawn_sh("trap 'exit 42' TERM; echo ready; while :; do sleep 0.05; done", &c) == -1)
		return;
	ok(wait_line(c.out_fd, "ready\n"), "trapping job is ready");
	t = sr_mono();
	reaped[0] = 0;
	sr_child_stop_set(&c, 1, 10.0, st, reaped);
	t = sr_mono() - t;
	ok(t < 2.0, "stop returns once all is gone (%.2f s of 10 s grace)", t);
	is_int(reaped[0] ? sr_exit_code(st[0]) : -1, 42, "the job's trap ran: 42");
	close(c.out_fd);
	close(c.err_fd);

	/* Descendants that left the group (setsid) and ignore SIGTERM, while
	 * their parent is still alive, and a background process in the
	 * group: all gone after stop. */
	if (spawn_sh("setsid sh -c 'trap \"\" TERM; echo $$ > esc; exec sleep 1000' &"
	    " sleep 1000 & echo $! > bg; echo ready; wait", &c) == -1)
		return;
	ok(wait_line(c.out_fd, "ready\n"), "escaping job is ready");
	esc = read_pid("esc");
	bg = read_pid("bg");
	ok(esc > 0 && getpgid(esc) == esc, "the escaped process has a group of its own");
	ok(bg > 0 && getpgid(bg) == c.pid, "the background process is in the job's group");
	is_int(sr_child_stop_set(&c, 1, 0.3, NULL, NULL), 0, "stop: nothing left");
	ok(!alive(esc), "the escaped, TERM-ignoring descendant is gone");
	ok(!alive(bg), "the background process is gone");
	if (alive(esc))		/* a failed test leaves nothing behind */
		kill(esc, SIGKILL);
	if (alive(bg))
		kill(bg, SIGKILL);
	count_children(getpid(), &all, &z);
	is_int(all, 0, "no child left after stop");
	close(c.out_fd);
	close(c.err_fd);

	/* Two jobs (two GPUs): both statuses come back. */
	if (spawn_sh("exit 3", &two[0]) == -1 || spawn_sh("exit 4", &two[1]) == -1)
		return;
	st[0] = st[1] = -1;
	reaped[0] = reaped[1] = 0;
	t = sr_mono() + 20;
	while ((!reaped[0] || !reaped[1]) && sr_mono() < t) {
		sr_reap_set(two, 2, st, reaped);
		sr_sleep(0.02);
	}
	ok(reaped[0] && reaped[1], "sr_reap_set reaped both jobs");
	is_int(sr_exit_code(st[0]), 3, "first job's code");
	is_int(sr_exit_code(st[1]), 4, "second job's code");
	close(two[0].out_fd);
	close(two[0].err_fd);
	close(two[1].out_fd);
	close(two[1].err_fd);
}

static void
test_sigpipe(void)
{
	int signo = 0, again;

	raise(SIGUSR1);
	raise(SIGHUP);
	ok(sr_sig_next(sigfd, &signo) == 1 && signo == SIGUSR1,
	    "self-pipe delivers SIGUSR1");
	ok(sr_sig_next(sigfd, &signo) == 1 && signo == SIGHUP,
	    "self-pipe delivers SIGHUP next");
	again = sr_sig_next(sigfd, &signo);
	is_int(again, 0, "self-pipe is then empty");
}

int
main(void)
{
	struct rlimit nocore = { 0, 0 };
	char err[SR_ERRMAX], basefds[4096];
	int fd2, signo;

	setrlimit(RLIMIT_CORE, &nocore);	/* kill -SEGV, -QUIT, -ABRT */
	if (mkdtemp(tmp) == NULL)
		sr_fatal("mkdtemp");
	list_fds(basefds, sizeof basefds);

	is_int(sr_subreaper_enable(err), 0, "child subreaper enabled");
	is_int(sr_sig_init(&sigfd, err), 0, "sr_sig_init");
	ok(sr_sig_init(&fd2, err) == 0 && fd2 == sigfd, "sr_sig_init twice: same pipe");
	ok(fcntl(sigfd, F_GETFL) & O_NONBLOCK, "self-pipe is non-blocking");
	ok(fcntl(sigfd, F_GETFD) & FD_CLOEXEC, "self-pipe is close-on-exec");
	while (sr_sig_next(sigfd, &signo))
		;

	test_sigpipe();
	test_codes();
	test_signals();
	test_exec();
	test_capture(basefds);
	test_signal_job();
	test_zombies();
	test_stop();

	while (ngroups > 0)
		kill(-groups[--ngroups], SIGKILL);
	sr_sig_reset();
	sr_rmtree(tmp, NULL);
	return tap_done();
}
