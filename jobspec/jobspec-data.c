/*
 * jobspec-data.c: the [data] section, each line "DESTINATION = URL": a
 * store's object, or every object under a prefix, copied to the machine
 * before the job starts (runner/data.c does it). A destination is a path,
 * absolute or relative to the working directory, without "..", set once,
 * holding no other destination, and outside what spotrun keeps for itself
 * (the working directory's .spotrun/, the job's local_dir) and outside
 * nothing that holds the working directory; the URL is the store module's
 * to judge (sr_store_url_explain), its trailing '/' kept: it says "a
 * folder".
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobspec-int.h"
#include "jobspec-msg.h"
#include "store.h"

/* Whether path has a ".." segment. */
static int
has_dotdot(const char *path)
{
	const char *s = path;

	for (;;) {
		size_t n = strcspn(s, "/");

		if (n == 2 && s[0] == '.' && s[1] == '.')
			return 1;
		if (s[n] == '\0')
			return 0;
		s += n + 1;
	}
}

/* Whether a is b or inside b (both absolute and tidied). */
static int
within(const char *a, const char *b)
{
	size_t n = strlen(b);

	if (strcmp(b, "/") == 0)
		return 1;
	return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}

void
sr_js_set_data(struct sr_js_parse *p, const char *name, const char *v)
{
	struct sr_jobspec *js = p->js;
	struct sr_store_url_problem pb;
	char b[SR_JS_SHOW_MAX + 4], b2[SR_JS_SHOW_MAX + 4], forms[400], *dest;
	size_t i;

	if (has_dotdot(name)) {
		sr_js_error(p, p->line, "[data] %s: a destination cannot hold \"..\"; name the "
		    "path without it (e.g. data/train or /data/train)", sr_js_show(name, b));
		return;
	}
	dest = sr_js_absolute_path("/", name);	/* tidied; a relative one loses its '/' */
	if (name[0] != '/')
		memmove(dest, dest + 1, strlen(dest));
	if (dest[0] == '\0' || strcmp(dest, "/") == 0) {
		sr_js_error(p, p->line, "[data] %s: names %s itself; name a folder or a file "
		    "inside it (e.g. %s)", sr_js_show(name, b), dest[0] == '\0' ?
		    "the working directory" : "the root", dest[0] == '\0' ? "data/train" :
		    "/data/train");
		free(dest);
		return;
	}
	for (i = 0; i < js->ndata; i++) {
		if (strcmp(js->data[i].dest, dest) == 0) {
			sr_js_error(p, p->line, "duplicate destination '%s' in [data] (first set on "
			    "line %d); keep one", sr_js_show(name, b), js->data[i].line);
			free(dest);
			return;
		}
	}
	switch (sr_store_url_explain(v, &pb)) {
	case SR_STORE_URL_OK:
		break;
	case SR_STORE_URL_UNKNOWN:
		sr_store_url_forms(forms, sizeof forms);
		sr_js_error(p, p->line, "[data] %s = %s: not a store URL; use %s (a folder ends "
		    "in '/')", sr_js_show(name, b), sr_js_show(v, b2), forms);
		free(dest);
		return;
	case SR_STORE_URL_NO_ROOT:
	case SR_STORE_URL_BAD:
		sr_js_error(p, p->line, "[data] %s = %s: %s%s%s", sr_js_show(name, b),
		    sr_js_show(v, b2), pb.reason, pb.fix[0] != '\0' ? "; " : "", pb.fix);
		free(dest);
		return;
	}
	js->data = sr_reallocarray(js->data, js->ndata + 1, sizeof *js->data);
	js->data[js->ndata].dest = dest;
	js->data[js->ndata].url = sr_strdup(v);
	js->data[js->ndata].line = p->line;
	js->ndata++;
}

void
sr_js_check_data(struct sr_js_parse *p)
{
	const struct sr_jobspec *js = p->js;
	char b[SR_JS_SHOW_MAX + 4], b2[SR_JS_SHOW_MAX + 4], **abs, *own;
	size_t i, j;

	abs = sr_calloc(js->ndata, sizeof *abs);
	for (i = 0; i < js->ndata; i++)
		abs[i] = sr_js_absolute_path(js->workdir, js->data[i].dest);
	own = sr_asprintf("%s/.spotrun", strcmp(js->workdir, "/") == 0 ? "" : js->workdir);
	for (i = 0; i < js->ndata; i++) {
		const struct sr_data_entry *d = &js->data[i];

		if (within(abs[i], own)) {
			sr_js_error(p, d->line, "[data] %s: inside the working directory's .spotrun/, "
			    "which is spotrun's own; choose another destination",
			    sr_js_show(d->dest, b));
			continue;
		}
		if (js->local_dir != NULL && (within(abs[i], js->local_dir) ||
		    within(js->local_dir, abs[i]))) {
			sr_js_error(p, d->line, "[data] %s: %s local_dir %s, the job's checkpoint "
			    "copy; choose another destination", sr_js_show(d->dest, b),
			    within(abs[i], js->local_dir) ? "inside" : "holds",
			    sr_js_show(js->local_dir, b2));
			continue;
		}
		if (within(js->workdir, abs[i])) {
			sr_js_error(p, d->line, "[data] %s: holds the working directory %s; name a "
			    "folder inside it or elsewhere (e.g. data/train or /data/train)",
			    sr_js_show(d->dest, b), sr_js_show(js->workdir, b2));
			continue;
		}
		for (j = 0; j < js->ndata; j++) {
			if (j != i && within(abs[i], abs[j])) {
				sr_js_error(p, d->line, "[data] %s: inside %s (line %d); one "
				    "destination cannot hold another: copy the outer one alone, or "
				    "put them side by side", sr_js_show(d->dest, b),
				    sr_js_show(js->data[j].dest, b2), js->data[j].line);
				break;
			}
		}
	}
	for (i = 0; i < js->ndata; i++)
		free(abs[i]);
	free(abs);
	free(own);
}
