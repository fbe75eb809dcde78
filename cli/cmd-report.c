/*
 * cmd-report.c: `spotrun report [--queue URL] [--metric NAME[:min|max]]
 * -o FILE SWEEP|JOB`: a sweep's trials, or one job, as one self-contained
 * HTML page (report.h: what is read, report-html.c: the page). The page is
 * written to a temporary file beside FILE and renamed onto it once whole,
 * so that FILE is never half a page; "-o -" writes it to standard output.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "fleet-index.h"
#include "fleet-target.h"
#include "fleet.h"
#include "report.h"
#include "termsafe.h"
#include "util.h"

enum { REPORT_OUT, REPORT_QUEUE, REPORT_METRIC };

static const struct sr_opt report_opts[] = {
	[REPORT_OUT] = { 'o', "output", "FILE", "write the page to FILE (- : standard output)" },
	[REPORT_QUEUE] = { 0, "queue", "URL", "the queue: a store URL or a directory" },
	[REPORT_METRIC] = { 0, "metric", "NAME", "the metric, NAME[:min|max] (as status takes it)" },
	{ 0 }
};

/* Where the page goes: a temporary file beside path (its name into tmp),
 * or stdout for "-". NULL after saying why. */
static FILE *
out_open(const char *path, char *tmp, size_t len)
{
	char err[SR_ERRMAX], safe[SR_TERMSAFE_LEN(SR_ERRMAX)];
	mode_t um;
	FILE *fp;
	int fd;

	tmp[0] = '\0';
	if (strcmp(path, "-") == 0)
		return stdout;
	if ((size_t)snprintf(tmp, len, "%s.tmp-XXXXXX", path) >= len) {
		fprintf(stderr, "spotrun: report: -o: a path shorter than %zu bytes\n", len - 12);
		tmp[0] = '\0';
		return NULL;
	}
	if ((fd = mkstemp(tmp)) == -1) {
		sr_errno(err, "write %s", path);
		fprintf(stderr, "spotrun: report: %s\n", sr_termsafe(err, safe, sizeof safe));
		tmp[0] = '\0';
		return NULL;
	}
	um = umask(0);
	umask(um);
	if (fchmod(fd, 0666 & ~um) == -1 || (fp = fdopen(fd, "w")) == NULL) {
		sr_errno(err, "write %s", path);
		fprintf(stderr, "spotrun: report: %s\n", sr_termsafe(err, safe, sizeof safe));
		close(fd);
		unlink(tmp);
		tmp[0] = '\0';
		return NULL;
	}
	return fp;
}

/* The page not written: the temporary file removed. */
static void
out_discard(FILE *fp, const char *tmp)
{
	if (tmp[0] == '\0')
		return;
	fclose(fp);
	unlink(tmp);
}

/* The page written: into place (0), or said why and removed (74). */
static int
out_close(FILE *fp, const char *path, const char *tmp, int ok)
{
	char err[SR_ERRMAX], safe[SR_TERMSAFE_LEN(SR_ERRMAX)];

	if (tmp[0] == '\0')
		return ok ? 0 : SR_EXIT_IOERR;
	if (fclose(fp) == EOF)
		ok = 0;
	if (ok && rename(tmp, path) == 0)
		return 0;
	sr_errno(err, "write %s", path);
	fprintf(stderr, "spotrun: report: %s\n", sr_termsafe(err, safe, sizeof safe));
	unlink(tmp);
	return SR_EXIT_IOERR;
}

/* The jobs named, each in the index (else said: 66); *is_sweep and title
 * (len bytes) say what they are. 0, or an exit code said. */
static int
targets(const struct sr_args *a, const struct sr_fleet *fl, const struct sr_fleet_index *ix,
    struct sr_fleet_ids *ids, int *is_sweep, char *title, size_t len)
{
	size_t i;
	int rc;

	if ((rc = sr_fleet_targets(a->argv, 1, ix, fl->where, ids)) != 0)
		return rc;
	for (i = 0; i < ids->n; i++)
		if (sr_fleet_index_find(ix, ids->v[i]) == NULL) {
			char safe[SR_TERMSAFE_LEN(SR_QUEUE_ID_MAX)];

			fprintf(stderr, "spotrun: %s: not in queue %s (submit it with spotrun "
			    "submit)\n", sr_termsafe(ids->v[i], safe, sizeof safe), fl->where);
			sr_fleet_ids_free(ids);
			return SR_EXIT_NOINPUT;
		}
	*is_sweep = ids->n > 1 || (ids->n == 1 && ids->of_sweep[0]);
	if (!*is_sweep || !sr_fleet_sweep_of(ids->v[0], title, len))
		snprintf(title, len, "%s", ids->n > 0 ? ids->v[0] : a->argv[0]);
	return 0;
}

static int
cmd_report_exec(const struct sr_args *a)
{
	const char *out = sr_args_get(a, REPORT_OUT);
	struct sr_fleet fl;
	struct sr_fleet_index ix;
	struct sr_fleet_ids ids;
	struct sr_report r;
	char err[SR_ERRMAX], safe[SR_TERMSAFE_LEN(SR_ERRMAX)], title[SR_QUEUE_ID_MAX + 1];
	char tmp[4096];
	int rc, is_sweep = 0;
	FILE *fp;

	if (out == NULL) {
		fprintf(stderr, "spotrun: report: where the page goes is missing: -o FILE "
		    "(- for standard output)\n");
		return SR_EXIT_USAGE;
	}
	if ((rc = sr_fleet_open(&fl, "report", sr_args_get(a, REPORT_QUEUE))) != 0)
		return rc;
	if (sr_fleet_index_read(fl.q, &ix, err) == -1) {
		fprintf(stderr, "spotrun: queue %s: %s\n", fl.where,
		    sr_termsafe(err, safe, sizeof safe));
		sr_fleet_close(&fl);
		return SR_EXIT_IOERR;
	}
	if ((rc = targets(a, &fl, &ix, &ids, &is_sweep, title, sizeof title)) != 0) {
		sr_fleet_index_free(&ix);
		sr_fleet_close(&fl);
		return rc;
	}
	/* the file first: a folder that is not there is said before any read */
	if ((fp = out_open(out, tmp, sizeof tmp)) == NULL)
		rc = SR_EXIT_IOERR;
	else if (sr_report_read(&fl, &ix, title, is_sweep, ids.v, ids.n,
	    sr_args_get(a, REPORT_METRIC), &r, err) == -1) {
		fprintf(stderr, "spotrun: report: %s\n", sr_termsafe(err, safe, sizeof safe));
		out_discard(fp, tmp);
		rc = SR_EXIT_USAGE;
	} else {
		rc = out_close(fp, out, tmp, sr_report_write_html(&r, fp) == 0);
		sr_report_free(&r);
	}
	sr_fleet_ids_free(&ids);
	sr_fleet_index_free(&ix);
	sr_fleet_close(&fl);
	return rc;
}

const struct sr_cmd_entry sr_cmd_report_entry = {
	.name = "report",
	.args = { .opts = report_opts, .operands = "SWEEP|JOB", .min = 1, .max = 1 },
	.summary = "write a sweep's or a job's results as one HTML page",
	.help = "Write one self-contained HTML page (inline CSS and SVG; no script, font\n"
	    "or image, nothing fetched) of a sweep's trials, or of one job: the curves\n"
	    "of a metric the jobs reported (--metric, loss by default), the best\n"
	    "highlighted; the table of trials as status shows it; the cost against\n"
	    "on-demand machines; a timeline of the attempts, their machines,\n"
	    "checkpoints, preemptions and work lost; and the best trial's job file.\n"
	    "The SWEEP or JOB is a name in the queue, or a sweep's or job's file.",
	.exec = cmd_report_exec,
};
