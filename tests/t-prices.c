/*
 * t-prices.c: the price table (runner/prices.h): the built-in table is
 * data/prices.ini as shipped, holds the common GPU types of the three
 * clouds with a date and a source, and finds them in any case; cost() of
 * spot and on-demand seconds; and the reader's exact message for every
 * fault of a table file (syntax, sections, dates, prices, duplicates, what
 * a section lacks).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prices.h"
#include "tap.h"
#include "util.h"

static void
test_builtin(void)
{
	static const char *const want[] = {
		"p4d.24xlarge", "p5.48xlarge", "g5.xlarge", "g5.48xlarge", "g6.xlarge",
		"g6.48xlarge", "a2-highgpu-1g", "a2-highgpu-8g", "a3-highgpu-8g", "g2-standard-4",
		"g2-standard-96", "Standard_ND96asr_v4", "Standard_ND96isr_H100_v5",
		"Standard_NC24ads_A100_v4", "Standard_NC4as_T4_v3", "local"
	};
	struct sr_prices *t, *f;
	const struct sr_price *p;
	char err[SR_ERRMAX], path[1024];
	size_t i, bad = 0, missing = 0;

	if (!ok(sr_prices_builtin(&t, err) == 0, "the built-in table reads")) {
		tap_diag("%s", err);
		return;
	}
	is_str(sr_prices_name(t), "the built-in price table", "named as such in messages");
	for (i = 0; i < SR_ARRAY_LEN(want); i++)
		if (sr_prices_find(t, want[i]) == NULL) {
			tap_diag("missing: %s", want[i]);
			missing++;
		}
	is_int(missing, 0, "it has the common GPU types of AWS, GCP and Azure, and local");
	for (i = 0; i < sr_prices_count(t); i++) {
		p = sr_prices_at(t, i);
		if (strcmp(p->type, "local") != 0 && !(p->spot > 0 && p->spot < p->on_demand)) {
			tap_diag("%s: spot %g, on demand %g", p->type, p->spot, p->on_demand);
			bad++;
		}
		if (strcmp(p->as_of, "2024-12-01") != 0)
			bad++;
	}
	is_int(bad, 0, "every cloud type costs something, spot less than on demand, as of "
	    "2024-12-01");
	p = sr_prices_find(t, "P4D.24XLARGE");
	ok(p != NULL && strcmp(p->type, "p4d.24xlarge") == 0 && p->on_demand == 32.7726 &&
	    p->spot == 13.11 && strcmp(p->cloud, "aws") == 0 && strcmp(p->region, "us-east-1") == 0,
	    "p4d.24xlarge found in upper case: aws us-east-1, 32.7726 on demand, 13.11 spot");
	p = sr_prices_find(t, "standard_nd96asr_v4");
	ok(p != NULL && strcmp(p->cloud, "azure") == 0 && strcmp(p->region, "eastus") == 0 &&
	    p->on_demand == 27.197, "Azure's types as IMDS writes them, any case");
	p = sr_prices_find(t, "local");
	ok(p != NULL && p->on_demand == 0 && p->spot == 0 && strcmp(p->region, "") == 0,
	    "local costs nothing and names no region");
	ok(sr_prices_find(t, "p4d") == NULL && sr_prices_find(t, "") == NULL,
	    "no match for a prefix or nothing");

	snprintf(path, sizeof path, "%s/data/prices.ini", SR_TOP_SRCDIR);
	if (ok(sr_prices_load(path, &f, err) == 0, "data/prices.ini reads as a file")) {
		int same = sr_prices_count(f) == sr_prices_count(t);

		for (i = 0; same && i < sr_prices_count(t); i++)
			same = strcmp(sr_prices_at(f, i)->type, sr_prices_at(t, i)->type) == 0 &&
			    sr_prices_at(f, i)->spot == sr_prices_at(t, i)->spot &&
			    sr_prices_at(f, i)->on_demand == sr_prices_at(t, i)->on_demand;
		ok(same, "the built-in table is data/prices.ini (%zu types)", sr_prices_count(t));
		is_str(sr_prices_name(f), path, "a file's table is named by its path");
		sr_prices_free(f);
	} else
		tap_diag("%s", err);
	sr_prices_free(t);
}

static void
test_cost(void)
{
	static const char table[] = "[aws]\nas_of = 2024-12-01\nsource = x\n"
	    "p4d.24xlarge = 32.7726 13.11\n[local]\nas_of = 2024-12-01\nsource = y\nlocal = 0 0\n";
	struct sr_prices *t;
	char err[SR_ERRMAX];
	double d = -1;

	if (sr_prices_parse("t.ini", table, strlen(table), &t, err) != 0)
		sr_fatal("%s", err);
	ok(sr_prices_cost(t, "p4d.24xlarge", 1, 1800, &d, err) == 0 && fabs(d - 6.555) < 1e-9,
	    "half an hour spot: 6.555 (got %g)", d);
	ok(sr_prices_cost(t, "P4d.24xlarge", 0, 3600, &d, err) == 0 && fabs(d - 32.7726) < 1e-9,
	    "an hour on demand: 32.7726 (got %g)", d);
	ok(sr_prices_cost(t, "p4d.24xlarge", 0, 0, &d, err) == 0 && d == 0, "no time: nothing");
	ok(sr_prices_cost(t, "local", 1, 86400, &d, err) == 0 && d == 0, "local: 0 for a day");
	d = 1;
	is_int(sr_prices_cost(t, "g9.huge", 1, 10, &d, err), -1, "an unknown type fails");
	is_str(err, "price instance type g9.huge: not in t.ini; add a line g9.huge = ON_DEMAND "
	    "SPOT (dollars an hour) to it", "naming the type, the table and the fix");
	is_int(d == 0, 1, "and prices it at 0");
	is_int(sr_prices_cost(t, "", 1, 10, &d, err), -1, "no type fails");
	is_str(err, "price a machine of no known instance type: name its type, or price a "
	    "machine spotrun does not rent as local", "saying what to pass");
	is_int(sr_prices_cost(t, "local", 1, -1, &d, err), -1, "negative seconds fail");
	is_str(err, "price -1 seconds of local: not a duration", "saying so");
	is_int(sr_prices_cost(t, "local", 1, NAN, &d, err), -1, "NaN seconds fail");
	sr_prices_free(t);
}

/* Each bad table and its exact message. */
static const struct {
	const char *text, *msg;
} bad[] = {
	{ "p4d = 1 2\n",
	  "t.ini:1: p4d = ...: a setting before any [cloud] section; put it under one, as in "
	  "[aws]" },
	{ "[aws]\nas_of = 2024-13-01\n",
	  "t.ini:2: as_of = 2024-13-01: not a date; write YYYY-MM-DD, as in as_of = 2024-12-01" },
	{ "[aws]\nas_of = 2023-02-29\n",
	  "t.ini:2: as_of = 2023-02-29: not a date; write YYYY-MM-DD, as in as_of = 2024-12-01" },
	{ "[aws]\nas_of = 1 Dec 2024\n",
	  "t.ini:2: as_of = 1 Dec 2024: not a date; write YYYY-MM-DD, as in as_of = 2024-12-01" },
	{ "[aws]\nas_of =\n",
	  "t.ini:2: as_of is empty; give the date the prices were read, as YYYY-MM-DD" },
	{ "[aws]\nsource = \n",
	  "t.ini:2: source is empty; give the page the prices come from" },
	{ "[aws]\nas_of = 2024-12-01\nas_of = 2024-12-02\n",
	  "t.ini:3: as_of appears twice in [aws] (first on line 2); keep one" },
	{ "[aws]\np4d = 1.5\n",
	  "t.ini:2: p4d = 1.5: want ON_DEMAND SPOT, two prices in dollars an hour from 0 to "
	  "1000000, as in p4d = 32.7726 12.5" },
	{ "[aws]\np4d = 1 2 3\n",
	  "t.ini:2: p4d = 1 2 3: want ON_DEMAND SPOT, two prices in dollars an hour from 0 to "
	  "1000000, as in p4d = 32.7726 12.5" },
	{ "[aws]\np4d = -1 2\n",
	  "t.ini:2: p4d = -1 2: want ON_DEMAND SPOT, two prices in dollars an hour from 0 to "
	  "1000000, as in p4d = 32.7726 12.5" },
	{ "[aws]\np4d = 1 $2\n",
	  "t.ini:2: p4d = 1 $2: want ON_DEMAND SPOT, two prices in dollars an hour from 0 to "
	  "1000000, as in p4d = 32.7726 12.5" },
	{ "[aws]\np4d = 2000000 2\n",
	  "t.ini:2: p4d = 2000000 2: want ON_DEMAND SPOT, two prices in dollars an hour from 0 "
	  "to 1000000, as in p4d = 32.7726 12.5" },
	{ "[aws]\np4d = nan 2\n",
	  "t.ini:2: p4d = nan 2: want ON_DEMAND SPOT, two prices in dollars an hour from 0 to "
	  "1000000, as in p4d = 32.7726 12.5" },
	{ "[aws]\nasof = 2024-12-01\n",
	  "t.ini:2: unknown key 'asof' (did you mean 'as_of'?); a section takes as_of, region, "
	  "source and TYPE = ON_DEMAND SPOT lines" },
	{ "[aws]\nas_of = 2024-12-01\nsource = x\np4d = 1 0.5\n[gcp]\nas_of = 2024-12-01\n"
	  "source = y\nP4D = 2 1\n",
	  "t.ini:8: instance type P4D is in the table twice (first on line 4, in [aws]); keep one" },
	{ "[aws]\nsource = x\np4d = 1 0.5\n",
	  "t.ini:2: section [aws] (its first setting is on this line) has no as_of; add as_of = "
	  "YYYY-MM-DD, the date its prices were read" },
	{ "[aws]\n; comment\nas_of = 2024-12-01\np4d = 1 0.5\n",
	  "t.ini:3: section [aws] (its first setting is on this line) has no source; add source "
	  "= the page its prices come from" },
	{ "", "t.ini: no instance types; add lines TYPE = ON_DEMAND SPOT (dollars an hour) under a "
	  "[cloud] section" },
	{ "# only a comment\n[aws]\nas_of = 2024-12-01\nsource = x\n",
	  "t.ini: no instance types; add lines TYPE = ON_DEMAND SPOT (dollars an hour) under a "
	  "[cloud] section" },
	{ "[aws]\nas_of = 2024-12-01\ngarbage\n",
	  "t.ini:3: not a setting: write key = value, a [section] header, or a comment starting "
	  "with ';' or '#'" },
	{ "[aws\n", "t.ini:1: a section header must end with ']'" },
	{ "[aws] x\n", "t.ini:1: text after a section header's ']'; only a comment may follow it" },
	{ "[]\n", "t.ini:1: an empty section name []" },
	{ "[a b]\np4d = 1 2\n",
	  "t.ini:2: section [a b]: a cloud's name is letters, digits, '_' and '-', as in [aws]" },
	{ "[aws]\n= 1 2\n", "t.ini:2: a setting without a key before its '='" },
	{ "[aws]\np4d:24 = 1 2\n", "t.ini:2: a key may not hold ':'; write key = value" },
	{ "[aws]\np4d/24 = 1 2\n",
	  "t.ini:2: p4d/24: not an instance type (1 to 63 letters, digits, '.', '_' and '-', as "
	  "in p4d.24xlarge)" },
	{ "[aws]\np4d = 1\0 2\n", "t.ini:2: a NUL byte; a settings file is text" },
};

static void
test_bad(void)
{
	struct sr_prices *t;
	char err[SR_ERRMAX];
	size_t i, len;

	for (i = 0; i < SR_ARRAY_LEN(bad); i++) {
		len = strlen(bad[i].text);
		if (strstr(bad[i].msg, "NUL") != NULL)
			len += 4;	/* the text goes on after its \0 */
		err[0] = '\0';
		t = (struct sr_prices *)1;
		is_int(sr_prices_parse("t.ini", bad[i].text, len, &t, err), -1, "bad table %zu fails",
		    i + 1);
		ok(t == NULL, "and gives no table");
		is_str(err, bad[i].msg, "bad table %zu: its message", i + 1);
	}
}

static void
test_good(void)
{
	static const char table[] = "\xEF\xBB\xBF# a table\r\n[my-cloud]\r\n  as_of = 2024-02-29\r\n"
	    "source = https://example.invalid/prices?a=b ; where\r\nregion = r1\r\n"
	    "big.box = 10 2.5 ; a comment\r\n[my-cloud] ; again\r\nsmall = 1e-1 0\r\n";
	struct sr_prices *t;
	const struct sr_price *p;
	char err[SR_ERRMAX], path[64];

	if (!ok(sr_prices_parse("t.ini", table, strlen(table), &t, err) == 0,
	    "a table with a BOM, CRLF, indentation, comments and a section given twice reads")) {
		tap_diag("%s", err);
		return;
	}
	is_int(sr_prices_count(t), 2, "two types");
	p = sr_prices_find(t, "big.box");
	ok(p != NULL && p->on_demand == 10 && p->spot == 2.5 && strcmp(p->cloud, "my-cloud") == 0 &&
	    strcmp(p->region, "r1") == 0 && strcmp(p->as_of, "2024-02-29") == 0 && p->line == 6,
	    "big.box: 10 and 2.5 in my-cloud r1 as of 2024-02-29, line 6 (inline comment dropped)");
	p = sr_prices_find(t, "small");
	ok(p != NULL && fabs(p->on_demand - 0.1) < 1e-12 && p->spot == 0,
	    "small: 1e-1 and 0 (the section's second header adds to it)");
	sr_prices_free(t);
	snprintf(path, sizeof path, "/nonexistent/prices.ini");
	is_int(sr_prices_load(path, &t, err), -1, "a missing file fails");
	ok(strncmp(err, "read price table: ", 18) == 0 && strstr(err, "/nonexistent/prices.ini") !=
	    NULL, "naming the file (%s)", err);
}

int
main(void)
{
	test_builtin();
	test_cost();
	test_bad();
	test_good();
	return tap_done();
}
