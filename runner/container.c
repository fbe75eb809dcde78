/*
 * container.c: [job] image, the ranks run inside containers (container.h):
 * the runtime found on PATH, the image pulled once per machine, each rank's
 * command wrapped in the runtime's `run`, and the container killed by name
 * when its client dies before it.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "container.h"
#include "jobspec.h"
#include "util.h"

/* What the runtime's last line of error may hold in a message. */
#define CTR_LINE_MAX	400

struct sr_container {
	char *path;		/* the client, absolute */
	int docker;		/* 1: docker's flags (--gpus); 0: podman's (CDI) */
	char *image;
	char *job;		/* the job's name, in container names */
	char how[256];
};

/* path of prog on the PATH of envp, executable; NULL: none. */
static char *
find_on_path(const char *prog, char *const *envp)
{
	const char *path = "/usr/local/bin:/usr/bin:/bin", *p, *end;
	char *cand;
	size_t i;

	for (i = 0; envp != NULL && envp[i] != NULL; i++)
		if (strncmp(envp[i], "PATH=", 5) == 0) {
			path = envp[i] + 5;
			break;
		}
	for (p = path; p != NULL; p = *end == ':' ? end + 1 : NULL) {
		end = strchrnul(p, ':');
		if (end == p)
			continue;	/* the current directory: never for a runtime */
		cand = sr_asprintf("%.*s/%s", (int)(end - p), p, prog);
		if (access(cand, X_OK) == 0)
			return cand;
		free(cand);
	}
	return NULL;
}

int
sr_container_open(const struct sr_jobspec *js, char *const *envp,
    struct sr_container **out, char *err)
{
	static const char *const names[] = { "podman", "docker" };
	struct sr_container *c;
	char *path = NULL;
	int i, first = 0, last = 1;

	*out = NULL;
	if (js->container_runtime == SR_CONTAINER_PODMAN)
		last = 0;
	else if (js->container_runtime == SR_CONTAINER_DOCKER)
		first = 1;
	for (i = first; i <= last && path == NULL; i++)
		path = find_on_path(names[i], envp);
	if (path == NULL) {
		if (first == last)
			return sr_err(err, "image = %s: no container runtime: container_runtime = %s "
			    "and %s is not on PATH; install it, or set container_runtime = auto",
			    js->image, names[first], names[first]);
		return sr_err(err, "image = %s: no container runtime: neither podman nor docker "
		    "is on PATH; install one, or remove image to run the job without a container",
		    js->image);
	}
	c = sr_calloc(1, sizeof *c);
	c->path = path;
	c->docker = strcmp(strrchr(path, '/') + 1, "docker") == 0;
	c->image = sr_strdup(js->image);
	c->job = sr_strdup(js->name);
	snprintf(c->how, sizeof c->how, "%s (%s)", c->docker ? "docker" : "podman", path);
	*out = c;
	return 0;
}

const char *
sr_container_how(const struct sr_container *c)
{
	return c->how;
}

/* Run the runtime with args (argv[0] included) and envp, its stdout and
 * stderr read into out (the last len-1 bytes kept; NULL: dropped), and
 * wait for it. Its exit code, or -1 with errno when it cannot start. */
static int
run_runtime(const struct sr_container *c, char *const *argv, char *const *envp,
    char *out, size_t len)
{
	posix_spawn_file_actions_t fa;
	char buf[4096];
	size_t have = 0;
	int p[2], st, rc;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	rc = posix_spawn(&pid, c->path, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (rc != 0) {
		close(p[0]);
		errno = rc;
		return -1;
	}
	for (;;) {
		n = read(p[0], buf, sizeof buf);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (out == NULL)
			continue;
		if ((size_t)n >= len - 1) {	/* keep the tail */
			memcpy(out, buf + (size_t)n - (len - 1), len - 1);
			have = len - 1;
		} else {
			if (have + (size_t)n > len - 1) {
				memmove(out, out + (have + (size_t)n - (len - 1)),
				    len - 1 - (size_t)n);
				have = len - 1 - (size_t)n;
			}
			memcpy(out + have, buf, (size_t)n);
			have += (size_t)n;
		}
	}
	close(p[0]);
	if (out != NULL)
		out[have] = '\0';
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The last non-empty line of text, its control characters made blanks. */
static const char *
last_line(char *text)
{
	char *end = text + strlen(text), *p;

	while (end > text && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		*--end = '\0';
	p = strrchr(text, '\n');
	p = p != NULL ? p + 1 : text;
	if (strlen(p) > CTR_LINE_MAX)
		p[CTR_LINE_MAX] = '\0';
	for (end = p; *end != '\0'; end++)
		if ((unsigned char)*end < 0x20 || *end == 0x7f)
			*end = ' ';
	return *p != '\0' ? p : "(no message)";
}

int
sr_container_pull(struct sr_container *c, char *const *envp, int *pulled, double *secs,
    char *err)
{
	char *inspect[] = { c->path, "image", "inspect", "--format", "{{.Id}}", c->image, NULL };
	char *pull[] = { c->path, "pull", c->image, NULL };
	char out[4096];
	double t0;
	int rc;

	*pulled = 0;
	*secs = 0;
	rc = run_runtime(c, inspect, envp, NULL, 0);
	if (rc == -1)
		return sr_errno(err, "image = %s: run %s", c->image, c->path);
	if (rc == 0)
		return 0;
	t0 = sr_mono();
	rc = run_runtime(c, pull, envp, out, sizeof out);
	*secs = sr_mono() - t0;
	if (rc == -1)
		return sr_errno(err, "image = %s: run %s", c->image, c->path);
	if (rc != 0)
		return sr_err(err, "image = %s: %s pull failed (exit %d): %s; give an image this "
		    "machine has or can pull, or remove image", c->image,
		    c->docker ? "docker" : "podman", rc, last_line(out));
	*pulled = 1;
	return 0;
}

/* argv grows by one string, malloc'd. */
static void
push(char ***v, size_t *n, size_t *cap, char *s)
{
	if (*n + 2 > *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*v = sr_reallocarray(*v, *cap, sizeof **v);
	}
	(*v)[(*n)++] = s;
	(*v)[*n] = NULL;
}

/* Whether entry (NAME=VALUE) is in base verbatim. */
static int
inherited(char *const *base, const char *entry)
{
	size_t i;

	for (i = 0; base != NULL && base[i] != NULL; i++)
		if (strcmp(base[i], entry) == 0)
			return 1;
	return 0;
}

/* The bind mount of dir at the same path, read-write. */
static char *
mount_of(const char *dir)
{
	return sr_asprintf("%s:%s", dir, dir);
}

/* A [data] entry inside the container (runner/data.h made its destination
 * a link into the machine's cache): the cached copy mounted read-only at
 * its own path, so that the link resolves inside as outside (a relative
 * destination's link lies in the mounted working directory), and an
 * absolute destination, outside every mount, mounted there too. Read-only
 * mounts: not even a job running as root writes to the data. A link that
 * does not resolve (nothing fetched) adds nothing; the job then finds no
 * data, as it would without a container. */
static void
push_data_mounts(char ***v, size_t *n, size_t *cap, const struct sr_jobspec *js,
    const struct sr_data_entry *d)
{
	char *dest = d->dest[0] == '/' ? sr_strdup(d->dest) :
	    sr_asprintf("%s/%s", strcmp(js->workdir, "/") == 0 ? "" : js->workdir, d->dest);
	char *real = realpath(dest, NULL);

	if (real != NULL) {
		push(v, n, cap, sr_strdup("-v"));
		push(v, n, cap, sr_asprintf("%s:%s:ro", real, real));
		if (d->dest[0] == '/') {
			push(v, n, cap, sr_strdup("-v"));
			push(v, n, cap, sr_asprintf("%s:%s:ro", real, dest));
		}
	}
	free(real);
	free(dest);
}

const char *
sr_container_name(const struct sr_container *c, int attempt, int rank, char *buf, size_t len)
{
	snprintf(buf, len, "spotrun-%s-%ld-a%d-r%d", c->job, (long)getpid(), attempt, rank);
	return buf;
}

char **
sr_container_argv(const struct sr_container *c, const struct sr_jobspec *js,
    const struct sr_container_rank *k, char *const *argv, char *const *env)
{
	char **v = NULL, name[256], *ids, *id, *save, *inside = NULL;
	size_t n = 0, cap = 0, i, len;
	int ngpu = 0;

	push(&v, &n, &cap, sr_strdup(c->path));
	push(&v, &n, &cap, sr_strdup("run"));
	push(&v, &n, &cap, sr_strdup("--rm"));
	/* An init as the container's pid 1 passes signals on to the job and
	 * reaps; a job as pid 1 would ignore every signal it has no handler
	 * for, SIGTERM included. */
	push(&v, &n, &cap, sr_strdup("--init"));
	push(&v, &n, &cap, sr_strdup("--sig-proxy=true"));
	push(&v, &n, &cap, sr_strdup("--name"));
	push(&v, &n, &cap, sr_strdup(sr_container_name(c, k->attempt, k->rank, name, sizeof name)));
	push(&v, &n, &cap, sr_strdup("--network=host"));
	push(&v, &n, &cap, sr_strdup("--ipc=host"));
	/* Files the job writes are spotrun's user's, as without a container;
	 * rootless podman maps that user only with keep-id. */
	push(&v, &n, &cap, sr_asprintf("--user=%ld:%ld", (long)geteuid(), (long)getegid()));
	if (!c->docker && geteuid() != 0)
		push(&v, &n, &cap, sr_strdup("--userns=keep-id"));
	push(&v, &n, &cap, sr_strdup("-v"));
	push(&v, &n, &cap, mount_of(js->workdir));
	len = strlen(js->workdir);
	/* The local directory is most often inside the working directory
	 * (.spotrun/NAME): mounted already. */
	if (!(strncmp(k->local_dir, js->workdir, len) == 0 &&
	    (k->local_dir[len] == '/' || (len == 1 && js->workdir[0] == '/')))) {
		push(&v, &n, &cap, sr_strdup("-v"));
		push(&v, &n, &cap, mount_of(k->local_dir));
	}
	for (i = 0; i < js->ndata; i++)
		push_data_mounts(&v, &n, &cap, js, &js->data[i]);
	push(&v, &n, &cap, sr_strdup("-w"));
	push(&v, &n, &cap, sr_strdup(js->workdir));
	if (k->visible != NULL && *k->visible != '\0') {
		ids = sr_strdup(k->visible);
		for (id = strtok_r(ids, ",", &save); id != NULL; id = strtok_r(NULL, ",", &save)) {
			if (c->docker) {
				push(&v, &n, &cap, sr_strdup("--gpus"));
				push(&v, &n, &cap, sr_asprintf("device=%s", id));
			} else {
				push(&v, &n, &cap, sr_strdup("--device"));
				push(&v, &n, &cap, sr_asprintf("nvidia.com/gpu=%s", id));
			}
			/* the container sees only these, numbered from 0 */
			id = inside;
			inside = inside == NULL ? sr_strdup("0") :
			    sr_asprintf("%s,%d", inside, ngpu);
			free(id);
			ngpu++;
		}
		free(ids);
	}
	for (i = 0; env != NULL && env[i] != NULL; i++) {
		const char *eq = strchr(env[i], '=');

		if (eq == NULL || eq == env[i])
			continue;
		if (inside != NULL && strncmp(env[i], "CUDA_VISIBLE_DEVICES=", 21) == 0) {
			push(&v, &n, &cap, sr_strdup("-e"));
			push(&v, &n, &cap, sr_asprintf("CUDA_VISIBLE_DEVICES=%s", inside));
			continue;
		}
		if (inherited(k->base, env[i]))
			continue;
		push(&v, &n, &cap, sr_strdup("-e"));
		push(&v, &n, &cap, sr_strndup(env[i], (size_t)(eq - env[i])));
	}
	free(inside);
	push(&v, &n, &cap, sr_strdup(c->image));
	for (i = 0; argv[i] != NULL; i++)
		push(&v, &n, &cap, sr_strdup(argv[i]));
	return v;
}

void
sr_container_argv_free(char **argv)
{
	size_t i;

	for (i = 0; argv != NULL && argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
}

void
sr_container_kill(const struct sr_container *c, const char *name, char *const *envp)
{
	char *argv[] = { c->path, "kill", (char *)name, NULL };

	(void)run_runtime(c, argv, envp, NULL, 0);
}

int
sr_container_status(int wstatus)
{
	int code;

	if (!WIFEXITED(wstatus))
		return wstatus;
	code = WEXITSTATUS(wstatus);
	if (code > 128 && code < 128 + NSIG)
		return code - 128;	/* a wait status: killed by that signal, no core */
	return wstatus;
}

void
sr_container_free(struct sr_container *c)
{
	if (c == NULL)
		return;
	free(c->path);
	free(c->image);
	free(c->job);
	free(c);
}
