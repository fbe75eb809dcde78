/*
 * target.c: see target.h.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog.h"
#include "defaults.h"
#include "jobfile.h"
#include "target.h"
#include "util.h"

char *
sr_target_store_url(const char *s)
{
	char *cwd, *url;

	if (strstr(s, "://") != NULL)
		return sr_strdup(s);
	if (s[0] == '/')
		return sr_asprintf("file://%s", s);
	if ((cwd = getcwd(NULL, 0)) == NULL)
		return sr_asprintf("file://./%s", s);	/* the store's open says what is wrong */
	url = sr_asprintf("file://%s%s%s", cwd, strcmp(cwd, "/") == 0 ? "" : "/", s);
	free(cwd);
	return url;
}

int
sr_target_is_file(const char *arg)
{
	struct stat sb;
	size_t len = strlen(arg);

	return (stat(arg, &sb) == 0 && S_ISREG(sb.st_mode)) ||
	    (len > 4 && strcmp(arg + len - 4, ".ini") == 0);
}

enum sr_target_result
sr_target_resolve(const char *arg, const char *store, struct sr_target *t)
{
	char err[SR_ERRMAX];

	memset(t, 0, sizeof *t);
	if (sr_target_is_file(arg)) {
		if (sr_jobfile_load(arg, &t->js) != SR_JOBFILE_OK)
			return SR_TARGET_BAD_FILE;
		t->name = t->js->name;
	} else {
		if (sr_ckpt_job_check(arg, err) == -1) {
			fprintf(stderr, "spotrun: %s is not a job file, and %s\n", arg, err);
			return SR_TARGET_BAD_NAME;
		}
		t->name = arg;
	}
	if (store != NULL)
		t->store = sr_target_store_url(store);
	else if (t->js != NULL)
		t->store = sr_strdup(t->js->store);
	else
		t->store = sr_default_store();
	return SR_TARGET_OK;
}

void
sr_target_free(struct sr_target *t)
{
	sr_jobspec_free(t->js);
	free(t->store);
	memset(t, 0, sizeof *t);
}
