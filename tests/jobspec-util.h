/*
 * jobspec-util.h: what the job file tests share. dump_spec: every field of
 * a struct sr_jobspec as text, one per line,
 * so that two specs can be compared whole (t-sweep: a trial's job file
 * parses back to the trial's spec; t-fuzz-jobspec: a file accepted once is
 * accepted again the same). With DUMP_NO_IDENTITY the fields a trial
 * changes on purpose (name, command, argv, env, local_dir, sweep) and
 * where the file came from (path, text, lines) are left out.
 */
#ifndef SR_TEST_JOBSPEC_UTIL_H
#define SR_TEST_JOBSPEC_UTIL_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "jobspec.h"
#include "method.h"
#include "util.h"

#ifndef SR_TOP_SRCDIR
#define SR_TOP_SRCDIR "."
#endif

/* The names the runner lets a job file give (its checkpoint methods), as
 * spotrun parses with them. */
static inline const struct sr_jobspec_names *
runner_names(void)
{
	static struct sr_jobspec_names names;

	sr_method_names(&names);
	return &names;
}

/* tests/jobspec/ of the source tree ($top_srcdir, else the build's), made
 * absolute, into datadir (PATH_MAX bytes); then a new directory from the
 * mkdtemp template tmpdir becomes the current one, and XDG_DATA_HOME is
 * set so that the default store is the same everywhere. */
static inline void
jobspec_test_dirs(char *datadir, char *tmpdir)
{
	const char *top = getenv("top_srcdir");
	char *dir;

	snprintf(datadir, PATH_MAX, "%s/tests/jobspec", top != NULL ? top : SR_TOP_SRCDIR);
	if ((dir = realpath(datadir, NULL)) == NULL)
		sr_fatal("no test data in %s", datadir);
	snprintf(datadir, PATH_MAX, "%s", dir);
	free(dir);
	if (mkdtemp(tmpdir) == NULL || chdir(tmpdir) == -1)
		sr_fatal("make %s", tmpdir);
	setenv("XDG_DATA_HOME", "/xdg/data", 1);
}

#define DUMP_NO_IDENTITY 0x1

static inline void
dump_words(FILE *f, const char *what, char *const *v)
{
	size_t i;

	fprintf(f, "%s:", what);
	for (i = 0; v != NULL && v[i] != NULL; i++)
		fprintf(f, " [%s]", v[i]);
	fprintf(f, "\n");
}

#define DUMP_S(f, name, v) fprintf(f, "%s=%s\n", name, (v) != NULL ? (v) : "(null)")

/* malloc'd */
static inline char *
dump_spec(const struct sr_jobspec *js, int flags)
{
	const struct sr_provider_conf *pc = &js->provider;
	char *out = NULL;
	size_t len = 0, i, j;
	FILE *f = open_memstream(&out, &len);

	if (f == NULL)
		abort();
	if (!(flags & DUMP_NO_IDENTITY)) {
		DUMP_S(f, "path", js->path);
		DUMP_S(f, "name", js->name);
		DUMP_S(f, "command", js->command);
		dump_words(f, "argv", js->argv);
		dump_words(f, "env", js->env);
		DUMP_S(f, "local_dir", js->local_dir);
		for (i = 0; i < js->nsweep; i++) {
			fprintf(f, "sweep %s line %d:", js->sweep[i].key, js->sweep[i].line);
			for (j = 0; j < js->sweep[i].nvalues; j++)
				fprintf(f, " [%s]", js->sweep[i].values[j]);
			fprintf(f, "\n");
		}
	}
	DUMP_S(f, "dir", js->dir);
	fprintf(f, "shell=%d\n", js->shell);
	DUMP_S(f, "workdir", js->workdir);
	fprintf(f, "gpus=%d-%d\n", js->gpus_min, js->gpus_max);
	DUMP_S(f, "gpu_type", js->gpu_type);
	fprintf(f, "procs=%d-%d launch=%d\n", js->procs_min, js->procs_max, (int)js->launch);
	fprintf(f, "mode=%s interval=%.17g\n", js->mode, js->interval);
	DUMP_S(f, "store", js->store);
	fprintf(f, "signal=%d write_timeout=%.17g margin=%.17g\n", js->request_signal,
	    js->write_timeout, js->margin);
	fprintf(f, "chunk_size=%zu level=%d keep=%d\n", js->ckpt.chunk_size, js->ckpt.level,
	    js->ckpt.keep);
	DUMP_S(f, "provider", pc->name);
	DUMP_S(f, "endpoint", pc->endpoint);
	fprintf(f, "poll=%.17g ipv6=%d window=%.17g grace=%.17g after=%.17g random_mean=%.17g\n",
	    pc->poll, pc->ipv6, pc->window, pc->grace, pc->after, pc->random_mean);
	fprintf(f, "seed=%llu\n", (unsigned long long)pc->seed);
	DUMP_S(f, "notice_file", pc->notice_file);
	DUMP_S(f, "trace", pc->trace);
	fprintf(f, "trace_scale=%.17g trace_start=%.17g preemptions=%d early=%d\n",
	    pc->trace_scale, pc->trace_start, pc->max_preemptions, js->early_checkpoint);
	fprintf(f, "max_restarts=%d backoff=%.17g backoff_max=%.17g codes:", js->max_restarts,
	    js->backoff, js->backoff_max);
	for (i = 0; i < js->n_on_exit_codes; i++)
		fprintf(f, " %d", js->on_exit_codes[i]);
	fprintf(f, "\n");
	if (fclose(f) != 0)
		abort();
	return out;
}

#endif
