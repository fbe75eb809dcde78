/*
 * t-fleet-conf.c: what the fleet's commands and the agent share to find
 * their queue and prices (cli/fleet.c, cli/settings.c): the settings
 * file's path under XDG_CONFIG_HOME or HOME, its settings and the exact
 * message of each fault, the order --queue, $SPOTRUN_QUEUE, queue =, the
 * default, and the price table from --prices, prices = or the built-in.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"
#include "settings.h"
#include "util.h"
#include "tap.h"

static struct sr_settings
parse(const char *text, int want, const char *msg)
{
	struct sr_settings s;
	char err[SR_ERRMAX] = "";
	int rc = sr_settings_parse(&s, "/h/c.ini", text, strlen(text), err);

	is_int(rc, want, "settings %s: %s", want == 0 ? "read" : "refused", msg);
	if (want != 0)
		is_str(err, msg, "... exactly");
	return s;
}

static void
test_settings(void)
{
	struct sr_settings s;
	char path[256], err[SR_ERRMAX];

	setenv("XDG_CONFIG_HOME", "/x/cfg", 1);
	ok(sr_settings_path(path, sizeof path) == 0 && strcmp(path,
	    "/x/cfg/spotrun/config.ini") == 0, "the settings file under XDG_CONFIG_HOME (%s)", path);
	setenv("XDG_CONFIG_HOME", "relative", 1);
	setenv("HOME", "/home/me", 1);
	ok(sr_settings_path(path, sizeof path) == 0 && strcmp(path,
	    "/home/me/.config/spotrun/config.ini") == 0,
	    "a relative XDG_CONFIG_HOME: under HOME/.config (%s)", path);
	unsetenv("XDG_CONFIG_HOME");
	setenv("HOME", "/nonexistent-home", 1);
	memset(&s, 1, sizeof s);
	ok(sr_settings_load(&s, err) == 0 && !s.exists && s.queue == NULL && s.prices == NULL &&
	    strcmp(s.path, "/nonexistent-home/.config/spotrun/config.ini") == 0,
	    "no settings file: nothing set, no error");
	sr_settings_free(&s);

	s = parse("# mine\n[fleet]\nqueue = /srv/q ; shared\nprices = /etc/p.ini\n", 0,
	    "a queue path and a price table");
	ok(s.queue != NULL && strcmp(s.queue, "file:///srv/q") == 0 && s.queue_line == 3 &&
	    strcmp(s.prices, "/etc/p.ini") == 0 && s.prices_line == 4,
	    "... the path made file://, the comment dropped, their lines kept");
	sr_settings_free(&s);
	s = parse("[fleet]\nqueue = s3://bkt/q?endpoint=http://127.0.0.1:9\n", 0,
	    "an s3:// queue");
	ok(s.queue != NULL && strcmp(s.queue, "s3://bkt/q?endpoint=http://127.0.0.1:9") == 0,
	    "... kept as it is");
	sr_settings_free(&s);
	parse("[fleet]\nqueue = ftp://b/q\n", -1, "/h/c.ini:2: queue = ftp://b/q: open store "
	    "ftp://b/q: unsupported scheme \"ftp\" (supported: file://, s3://, gs://, az://)");
	parse("[fleet]\nqueue =\n", -1, "/h/c.ini:2: queue is empty; give the queue's store URL, "
	    "or remove the line");
	parse("[fleet]\nprices =\n", -1, "/h/c.ini:2: prices is empty; give the price table's "
	    "absolute path, or remove the line");
	parse("[fleet]\npirces = /p\n", -1, "/h/c.ini:2: unknown key 'pirces' in [fleet] (did you "
	    "mean 'prices'?); [fleet] takes queue, prices and provider");
	parse("[fleet]\nagent = x\n", -1, "/h/c.ini:2: unknown key 'agent' in [fleet]; [fleet] "
	    "takes queue, prices and provider");
	parse("[agent]\nidle = 5m\n", -1, "/h/c.ini:2: unknown section [agent]: the settings file "
	    "has a [fleet] section only; put idle under [fleet] or remove it");
	parse("[fleet\n", -1, "/h/c.ini:1: a section header must end with ']'");
	s = parse("[fleet]\nprovider = local\n", 0, "provider = local");
	ok(s.provider != NULL && strcmp(s.provider, "local") == 0 && s.provider_line == 2,
	    "... kept, with its line");
	sr_settings_free(&s);
	parse("[fleet]\nprovider = ec2\n", -1, "/h/c.ini:2: provider = ec2: not a provider; give "
	    "one of auto, aws, azure, gcp, local or signal");
	parse("[fleet]\nprovider = local\nprovider = aws\n", -1, "/h/c.ini:3: provider appears "
	    "twice in [fleet] (first on line 2); keep one");
	parse("[fleet]\nprovider =\n", -1, "/h/c.ini:2: provider is empty; give the machine's "
	    "provider, or remove the line");
}

static void
test_queue_url(void)
{
	struct sr_settings s = { .path = "/h/c.ini", .queue = "s3://b/q", .queue_line = 7 };
	char from[SR_FLEET_FROM_MAX], err[SR_ERRMAX], *url;

	setenv("SPOTRUN_QUEUE", "gs://g/q", 1);
	setenv("XDG_DATA_HOME", "/data", 1);
	ok(sr_fleet_queue_url("s3://given/q", &s, &url, from, sizeof from, err) == 0 &&
	    strcmp(url, "s3://given/q") == 0 && strcmp(from, "--queue") == 0, "--queue first");
	free(url);
	ok(sr_fleet_queue_url("/abs/q", &s, &url, from, sizeof from, err) == 0 &&
	    strcmp(url, "file:///abs/q") == 0, "--queue DIR: made file://");
	free(url);
	ok(sr_fleet_queue_url(NULL, &s, &url, from, sizeof from, err) == 0 &&
	    strcmp(url, "gs://g/q") == 0 && strcmp(from, "$SPOTRUN_QUEUE") == 0,
	    "then $SPOTRUN_QUEUE");
	free(url);
	setenv("SPOTRUN_QUEUE", "", 1);
	ok(sr_fleet_queue_url(NULL, &s, &url, from, sizeof from, err) == 0 &&
	    strcmp(url, "s3://b/q") == 0 && strcmp(from, "/h/c.ini:7") == 0,
	    "then queue = of the settings file (an empty $SPOTRUN_QUEUE is none)");
	free(url);
	unsetenv("SPOTRUN_QUEUE");
	ok(sr_fleet_queue_url(NULL, NULL, &url, from, sizeof from, err) == 0 &&
	    strcmp(url, "file:///data/spotrun/queue") == 0 && strcmp(from, "the default") == 0,
	    "then the default, under XDG_DATA_HOME");
	free(url);
	is_int(sr_fleet_queue_url("", &s, &url, from, sizeof from, err), -1, "an empty --queue fails");
	is_str(err, "--queue is empty; give the queue's store URL or directory", "... saying so");
}

static void
test_prices(const char *dir)
{
	struct sr_settings s = { .path = "/h/c.ini", .prices_line = 3 };
	struct sr_prices *t;
	char path[512], err[SR_ERRMAX];
	FILE *f;

	snprintf(path, sizeof path, "%s/p.ini", dir);
	if ((f = fopen(path, "w")) == NULL)
		sr_fatal("%s: cannot write", path);
	fprintf(f, "[mine]\nas_of = 2026-11-30\nsource = my bill\nbox = 2 1\n");
	fclose(f);
	ok(sr_fleet_prices(NULL, NULL, &t, err) == 0 && sr_prices_find(t, "p4d.24xlarge") != NULL,
	    "no --prices, no prices =: the built-in table");
	sr_prices_free(t);
	s.prices = path;
	ok(sr_fleet_prices(NULL, &s, &t, err) == 0 && sr_prices_count(t) == 1 &&
	    sr_prices_find(t, "box") != NULL, "prices = of the settings file");
	sr_prices_free(t);
	ok(sr_fleet_prices(SR_TOP_SRCDIR "/data/prices.ini", &s, &t, err) == 0 &&
	    sr_prices_find(t, "box") == NULL, "--prices wins");
	sr_prices_free(t);
	s.prices = "/nonexistent/p.ini";
	is_int(sr_fleet_prices(NULL, &s, &t, err), -1, "a price table that is not there fails");
	is_str(err, "the price table of /h/c.ini:3: read price table: open /nonexistent/p.ini: No "
	    "such file or directory", "... naming the setting's line");
}

int
main(void)
{
	char dir[] = "/tmp/t-fleet-conf.XXXXXX", cmd[64];

	if (mkdtemp(dir) == NULL)
		sr_fatal("mkdtemp failed");
	test_settings();
	test_queue_url();
	test_prices(dir);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		tap_diag("cleanup of %s failed", dir);
	return tap_done();
}
