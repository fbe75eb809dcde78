/*
 * fleet.c: where the queue is, and opening it for a fleet command; the
 * agent's price table (fleet.h). One resolver for every command, so that
 * `submit` on a laptop and `agent` on a VM find the same queue by the
 * same rules.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "fleet.h"
#include "store.h"
#include "target.h"
#include "util.h"

int
sr_fleet_queue_url(const char *given, const struct sr_settings *s, char **url, char *from,
    size_t fromlen, char *err)
{
	const char *env = getenv("SPOTRUN_QUEUE");
	char buf[4200];

	*url = NULL;
	if (given != NULL) {
		if (given[0] == '\0')
			return sr_err(err, "--queue is empty; give the queue's store URL or directory");
		*url = sr_target_store_url(given);
		snprintf(from, fromlen, "--queue");
	} else if (env != NULL && env[0] != '\0') {
		*url = sr_target_store_url(env);
		snprintf(from, fromlen, "$SPOTRUN_QUEUE");
	} else if (s != NULL && s->queue != NULL) {
		*url = sr_strdup(s->queue);
		snprintf(from, fromlen, "%s:%d", s->path, s->queue_line);
	} else {
		if (sr_queue_default_url(buf, sizeof buf, err) == -1)
			return -1;
		*url = sr_strdup(buf);
		snprintf(from, fromlen, "the default");
	}
	return 0;
}

int
sr_fleet_resolve(struct sr_fleet *f, const char *given)
{
	char err[SR_ERRMAX];

	memset(f, 0, sizeof *f);
	if (sr_settings_load(&f->set, err) == -1) {
		fprintf(stderr, "spotrun: %s\n", err);
		return SR_EXIT_CONFIG;
	}
	if (sr_fleet_queue_url(given, &f->set, &f->url, f->from, sizeof f->from, err) == -1) {
		fprintf(stderr, "spotrun: %s\n", err);
		sr_fleet_close(f);
		return SR_EXIT_USAGE;
	}
	f->where = strcmp(f->from, "the default") == 0 ?
	    sr_asprintf("%s (the default)", f->url) : sr_asprintf("%s (from %s)", f->url, f->from);
	if (sr_store_url_check(f->url, err) == -1) {
		fprintf(stderr, "spotrun: queue %s: %s\n", f->where, err);
		sr_fleet_close(f);
		return SR_EXIT_USAGE;
	}
	return 0;
}

int
sr_fleet_must_exist(const struct sr_fleet *f, int create)
{
	const char *path = sr_store_url_path(f->url);
	struct stat sb;
	int rc;

	/* The default queue is made at first use: it is no one's typo. A
	 * path that is written percent-encoded or with options is the
	 * store's to read: it is not second-guessed here. */
	if (create || strcmp(f->from, "the default") == 0 || path == NULL ||
	    strpbrk(path, "%?#") != NULL)
		return 0;
	if ((rc = stat(path, &sb)) == 0 && S_ISDIR(sb.st_mode))
		return 0;
	if (rc == 0 || errno == ENOENT)
		fprintf(stderr, "spotrun: queue %s: no such queue: %s %s; check the spelling, or "
		    "give --create to make a new queue there\n", f->where, path,
		    rc == 0 ? "is not a directory" : "does not exist");
	else
		fprintf(stderr, "spotrun: queue %s: %s: %s\n", f->where, path, strerror(errno));
	return SR_EXIT_NOINPUT;
}

int
sr_fleet_open(struct sr_fleet *f, const char *cmd, const char *given)
{
	int rc;

	if ((rc = sr_fleet_resolve(f, given)) != 0)
		return rc;
	return sr_fleet_attach(f, cmd);
}

int
sr_fleet_attach(struct sr_fleet *f, const char *cmd)
{
	char err[SR_ERRMAX], agent[64];

	if (sr_queue_open(f->url, &f->q, err) == -1) {
		fprintf(stderr, "spotrun: %s\n", err);
		sr_fleet_close(f);
		return SR_EXIT_IOERR;
	}
	snprintf(agent, sizeof agent, "spotrun %s", cmd);
	if (sr_lease_owner_local(&f->me, agent, NULL, NULL, err) == -1) {
		fprintf(stderr, "spotrun: %s\n", err);
		sr_fleet_close(f);
		return SR_EXIT_OSERR;
	}
	return 0;
}

void
sr_fleet_close(struct sr_fleet *f)
{
	sr_queue_close(f->q);
	sr_settings_free(&f->set);
	free(f->url);
	free(f->where);
	memset(f, 0, sizeof *f);
}

int
sr_fleet_prices(const char *given, const struct sr_settings *s, struct sr_prices **out,
    char *err)
{
	if (given != NULL)
		return sr_prices_load(given, out, err);
	if (s != NULL && s->prices != NULL) {
		if (sr_prices_load(s->prices, out, err) == 0)
			return 0;
		return sr_err_prefix(err, "the price table of %s:%d", s->path, s->prices_line);
	}
	return sr_prices_builtin(out, err);
}
