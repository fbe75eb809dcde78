/*
 * settings.c: the user's settings file (settings.h), read with common/inifile.h;
 * every fault is named by file and line, with the fix.
 */
#include "config.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inifile.h"
#include "provider.h"
#include "settings.h"
#include "similar.h"
#include "store.h"
#include "target.h"
#include "util.h"

static const char *const sections[] = { "fleet" };
static const char *const fleet_keys[] = { "queue", "prices", "provider" };

int
sr_settings_path(char *buf, size_t len)
{
	const char *x = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int n;

	if (x != NULL && x[0] == '/')
		n = snprintf(buf, len, "%s/spotrun/config.ini", x);
	else {
		if (home == NULL || home[0] != '/') {
			struct passwd *pw = getpwuid(getuid());

			home = pw != NULL && pw->pw_dir != NULL && pw->pw_dir[0] == '/' ? pw->pw_dir :
			    NULL;
		}
		if (home == NULL)
			return -1;
		n = snprintf(buf, len, "%s/.config/spotrun/config.ini", home);
	}
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* A did-you-mean for name among n candidates, or "". */
static const char *
suggest(const char *name, const char *const *cands, size_t n, const char *fmt, char *buf,
    size_t len)
{
	int k = sr_similar_closest(name, cands, n);

	if (k < 0)
		return "";
	snprintf(buf, len, fmt, cands[k]);
	return buf;
}

static int
set_queue(struct sr_settings *c, const char *value, int line, char *err)
{
	char why[SR_ERRMAX], forms[192];
	char *url;

	sr_store_url_forms(forms, sizeof forms);
	if (strstr(value, "://") == NULL && value[0] != '/')
		return sr_err(err, "%s:%d: queue = %.200s: neither a URL nor an absolute path; give "
		    "a store URL (%s) or an absolute path", c->path, line, value, forms);
	url = sr_target_store_url(value);
	if (sr_store_url_check(url, why) == -1) {
		free(url);
		return sr_err(err, "%s:%d: queue = %.200s: %s", c->path, line, value, why);
	}
	c->queue = url;
	c->queue_line = line;
	return 0;
}

static int
on_setting(void *arg, const char *section, const char *key, const char *value, int line,
    char *err)
{
	struct sr_settings *c = arg;
	struct sr_provider_kind kind;
	char hint[64], names[128];
	int *seen;

	if (strcmp(section, "fleet") != 0)
		return sr_err(err, "%s:%d: %s%s%s: the settings file has a [fleet] section only%s; "
		    "put %s under [fleet] or remove it", c->path, line,
		    section[0] != '\0' ? "unknown section [" : "a setting before any section",
		    section, section[0] != '\0' ? "]" : "",
		    suggest(section, sections, SR_ARRAY_LEN(sections), " (did you mean [%s]?)", hint,
		    sizeof hint), key);
	seen = strcmp(key, "queue") == 0 ? &c->queue_line : strcmp(key, "prices") == 0 ?
	    &c->prices_line : strcmp(key, "provider") == 0 ? &c->provider_line : NULL;
	if (seen == NULL)
		return sr_err(err, "%s:%d: unknown key '%s' in [fleet]%s; [fleet] takes queue, "
		    "prices and provider", c->path, line, key, suggest(key, fleet_keys,
		    SR_ARRAY_LEN(fleet_keys), " (did you mean '%s'?)", hint, sizeof hint));
	if (*seen != 0)
		return sr_err(err, "%s:%d: %s appears twice in [fleet] (first on line %d); keep one",
		    c->path, line, key, *seen);
	if (value[0] == '\0')
		return sr_err(err, "%s:%d: %s is empty; give %s, or remove the line", c->path, line,
		    key, key[0] == 'q' ? "the queue's store URL" : strcmp(key, "prices") == 0 ?
		    "the price table's absolute path" : "the machine's provider");
	if (key[0] == 'q')
		return set_queue(c, value, line, err);
	if (seen == &c->provider_line) {
		sr_provider_names(0, names, sizeof names);
		if (sr_provider_kind(value, &kind) == -1)
			return sr_err(err, "%s:%d: provider = %.64s: not a provider; give one of %s",
			    c->path, line, value, names);
		c->provider = sr_strdup(value);
		c->provider_line = line;
		return 0;
	}
	if (value[0] != '/')
		return sr_err(err, "%s:%d: prices = %.200s: not an absolute path; give the price "
		    "table's full path, as in prices = /etc/spotrun/prices.ini", c->path, line, value);
	c->prices = sr_strdup(value);
	c->prices_line = line;
	return 0;
}

int
sr_settings_parse(struct sr_settings *c, const char *path, const char *text, size_t len,
    char *err)
{
	memset(c, 0, sizeof *c);
	c->path = sr_strdup(path);
	c->exists = 1;
	if (sr_inifile_each(path, text, len, on_setting, c, err) == -1) {
		sr_settings_free(c);
		return -1;
	}
	return 0;
}

int
sr_settings_load(struct sr_settings *c, char *err)
{
	char path[4096], *text;
	struct stat sb;
	size_t len;
	int rc;

	memset(c, 0, sizeof *c);
	if (sr_settings_path(path, sizeof path) == -1)
		return 0;
	if (stat(path, &sb) == -1) {
		if (errno == ENOENT || errno == ENOTDIR) {
			c->path = sr_strdup(path);
			return 0;
		}
		return sr_errno(err, "read settings %s", path);
	}
	if (!S_ISREG(sb.st_mode))
		return sr_err(err, "read settings %s: it is %s, not a file; remove it or make it "
		    "a settings file", path, sr_file_kind(sb.st_mode));
	if (sr_read_file(path, SR_SETTINGS_FILE_MAX, &text, &len, err) == -1)
		return sr_err_prefix(err, "read settings");
	rc = sr_settings_parse(c, path, text, len, err);
	free(text);
	return rc;
}

void
sr_settings_free(struct sr_settings *c)
{
	free(c->path);
	free(c->queue);
	free(c->prices);
	free(c->provider);
	memset(c, 0, sizeof *c);
}
