/*
 * t-args.c: the commands' shared parts: the argument parser against a
 * template with every kind of option (cli/args.c), the usage and option
 * lines generated from it, the did-you-mean distance (common/similar.c),
 * every command's template, the store argument as a URL (cli/target.c)
 * and the rule that tells a script from a job file (cli/jobfile.c). Each
 * case against its exact result or message.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "cmd.h"
#include "jobfile.h"
#include "similar.h"
#include "target.h"
#include "util.h"
#include "tap.h"

enum { T_QUIET, T_ALL, T_STORE, T_JSON, T_QUEUE, T_FORCE };

/* One of each kind: short flags, a short and long valued option, long-only
 * flag and valued option, a short-only flag. */
static const struct sr_opt test_opts[] = {
	[T_QUIET] = { 'q', "quiet", NULL, "say less" },
	[T_ALL] = { 'a', "all", NULL, "all of them" },
	[T_STORE] = { 's', "store", "STORE", "the store" },
	[T_JSON] = { 0, "json", NULL, "print JSON" },
	[T_QUEUE] = { 0, "queue", "URL", "the queue" },
	[T_FORCE] = { 'f', NULL, NULL, "even if running" },
	{ 0 }
};

static const struct sr_args_template one = { test_opts, "JOB.ini|NAME", 1, 1 };
static const struct sr_args_template many = { test_opts, "JOB.ini ...", 1, -1 };
static const struct sr_args_template upto = { test_opts, "[COMMAND]", 0, 1 };
static const struct sr_args_template none = { NULL, "", 0, 0 };

/* The parse as one line: each option given with its count and value, then
 * the positional arguments. */
static void
render(const struct sr_args_template *t, const struct sr_args *a, char *out, size_t len)
{
	size_t n = 0;
	int i;

	out[0] = '\0';
	for (i = 0; t->opts != NULL && (t->opts[i].short_name || t->opts[i].long_name); i++) {
		if (!sr_args_has(a, i))
			continue;
		n += (size_t)snprintf(out + n, len - n, "%s%d", n ? " " : "", i);
		if (sr_args_has(a, i) > 1)
			n += (size_t)snprintf(out + n, len - n, "x%d", sr_args_has(a, i));
		if (sr_args_get(a, i) != NULL)
			n += (size_t)snprintf(out + n, len - n, "=%s", sr_args_get(a, i));
	}
	n += (size_t)snprintf(out + n, len - n, " |");
	for (i = 0; i < a->argc; i++)
		n += (size_t)snprintf(out + n, len - n, " %s", a->argv[i]);
	if (a->argv[a->argc] != NULL)
		snprintf(out + n, len - n, " (argv not NULL-terminated)");
}

static const struct {
	const struct sr_args_template *t;
	const char *argv[8];
	int result;
	const char *want;	/* render() on success, else the message */
} cases[] = {
	{ &one, { "x" }, SR_ARGS_OK, " | x" },
	{ &one, { "-q", "x" }, SR_ARGS_OK, "0 | x" },
	{ &one, { "x", "-q" }, SR_ARGS_OK, "0 | x" },
	{ &one, { "-qa", "x" }, SR_ARGS_OK, "0 1 | x" },
	{ &one, { "-q", "-q", "x" }, SR_ARGS_OK, "0x2 | x" },
	{ &one, { "-s", "st", "x" }, SR_ARGS_OK, "2=st | x" },
	{ &one, { "-sst", "x" }, SR_ARGS_OK, "2=st | x" },
	{ &one, { "-qas", "st", "x" }, SR_ARGS_OK, "0 1 2=st | x" },
	{ &one, { "-qsst", "x" }, SR_ARGS_OK, "0 2=st | x" },
	{ &one, { "-s", "a", "-s", "b", "x" }, SR_ARGS_OK, "2x2=b | x" },
	{ &one, { "-s", "-q", "x" }, SR_ARGS_OK, "2=-q | x" },
	{ &one, { "--store=st", "x" }, SR_ARGS_OK, "2=st | x" },
	{ &one, { "--store", "st", "x" }, SR_ARGS_OK, "2=st | x" },
	{ &one, { "--store=", "x" }, SR_ARGS_OK, "2= | x" },
	{ &one, { "--store=a=b", "x" }, SR_ARGS_OK, "2=a=b | x" },
	{ &one, { "--quiet", "--all", "x" }, SR_ARGS_OK, "0 1 | x" },
	{ &one, { "--json", "--queue", "http://q", "x" }, SR_ARGS_OK, "3 4=http://q | x" },
	{ &one, { "-f", "x" }, SR_ARGS_OK, "5 | x" },
	{ &one, { "--", "-q" }, SR_ARGS_OK, " | -q" },
	{ &one, { "-q", "--", "--json" }, SR_ARGS_OK, "0 | --json" },
	{ &one, { "-" }, SR_ARGS_OK, " | -" },
	{ &many, { "a", "-q", "b", "c" }, SR_ARGS_OK, "0 | a b c" },
	{ &upto, { NULL }, SR_ARGS_OK, " |" },
	{ &none, { NULL }, SR_ARGS_OK, " |" },
	/* help, wherever it comes, unless an error came first */
	{ &one, { "-h" }, SR_ARGS_HELP, NULL },
	{ &one, { "--help" }, SR_ARGS_HELP, NULL },
	{ &one, { "x", "y", "-h" }, SR_ARGS_HELP, NULL },
	{ &one, { "-qh" }, SR_ARGS_HELP, NULL },
	{ &none, { "--help" }, SR_ARGS_HELP, NULL },
	{ &one, { "-x", "-h" }, SR_ARGS_ERROR, "unknown option -x" },
	/* errors */
	{ &one, { "-x", "a" }, SR_ARGS_ERROR, "unknown option -x" },
	{ &one, { "-qx", "a" }, SR_ARGS_ERROR, "unknown option -x" },
	{ &one, { "-\001" }, SR_ARGS_ERROR, "unknown option -\\x01" },
	{ &one, { "--stroe", "a" }, SR_ARGS_ERROR,
	    "unknown option --stroe (did you mean --store?)" },
	{ &one, { "--hlep" }, SR_ARGS_ERROR, "unknown option --hlep (did you mean --help?)" },
	{ &one, { "--frobnicate" }, SR_ARGS_ERROR, "unknown option --frobnicate" },
	{ &one, { "--stor", "a" }, SR_ARGS_ERROR, "unknown option --stor (did you mean --store?)" },
	{ &none, { "-q" }, SR_ARGS_ERROR, "unknown option -q" },
	{ &one, { "-s" }, SR_ARGS_ERROR, "option -s needs a value (STORE)" },
	{ &one, { "x", "-qs" }, SR_ARGS_ERROR, "option -s needs a value (STORE)" },
	{ &one, { "x", "--queue" }, SR_ARGS_ERROR, "option --queue needs a value (URL)" },
	{ &one, { "--quiet=yes", "x" }, SR_ARGS_ERROR, "option --quiet takes no value" },
	{ &one, { "--json=", "x" }, SR_ARGS_ERROR, "option --json takes no value" },
	{ &one, { NULL }, SR_ARGS_ERROR, "too few arguments (takes 1: JOB.ini|NAME)" },
	{ &one, { "-q" }, SR_ARGS_ERROR, "too few arguments (takes 1: JOB.ini|NAME)" },
	{ &one, { "a", "b" }, SR_ARGS_ERROR, "too many arguments: 'b' (takes 1: JOB.ini|NAME)" },
	{ &one, { "a", "--", "-b" }, SR_ARGS_ERROR,
	    "too many arguments: '-b' (takes 1: JOB.ini|NAME)" },
	{ &many, { "-q" }, SR_ARGS_ERROR, "too few arguments (takes at least 1: JOB.ini ...)" },
	{ &upto, { "a", "b", "c" }, SR_ARGS_ERROR,
	    "too many arguments: 'b' (takes at most 1: [COMMAND])" },
	{ &none, { "a" }, SR_ARGS_ERROR, "too many arguments: 'a' (takes none)" },
};

static void
test_parse(void)
{
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(cases); i++) {
		char *argv[10], err[SR_ERRMAX] = "", got[512], desc[256];
		struct sr_args a;
		int argc = 1, r;

		argv[0] = "cmd";
		while (argc <= 8 && cases[i].argv[argc - 1] != NULL) {
			argv[argc] = (char *)cases[i].argv[argc - 1];
			argc++;
		}
		argv[argc] = NULL;
		desc[0] = '\0';
		for (r = 1; r < argc; r++)
			snprintf(desc + strlen(desc), sizeof desc - strlen(desc), " %s", argv[r]);
		r = sr_args_parse(cases[i].t, argc, argv, &a, err);
		if (r == SR_ARGS_OK) {
			render(cases[i].t, &a, got, sizeof got);
		} else {
			strlcpy(got, r == SR_ARGS_HELP ? "(help)" : err, sizeof got);
		}
		is_int(r, cases[i].result, "parse '%s': result", desc);
		if (cases[i].want != NULL)
			is_str(got, cases[i].want, "parse '%s'", desc);
		sr_args_free(&a);
	}
}

static char *
capture_options(const struct sr_args_template *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	sr_args_print_options(t, fp);
	fclose(fp);
	return buf;
}

static void
test_usage(void)
{
	static const struct sr_opt short_only[] = { { 'v', NULL, NULL, "verbose" }, { 0 } };
	static const struct sr_args_template sv = { short_only, "FILE", 1, 1 };
	char *s;

	s = sr_args_synopsis(&one);
	is_str(s, "[-q] [-a] [-s STORE] [--json] [--queue URL] [-f] JOB.ini|NAME",
	    "synopsis: each option in its short form, else its long one, then the operands");
	free(s);
	s = sr_args_synopsis(&none);
	is_str(s, "", "synopsis of no options and no operands is empty");
	free(s);
	s = sr_args_synopsis(&upto);
	free(s);
	s = capture_options(&one);
	is_str(s,
	    "  -q, --quiet        say less\n"
	    "  -a, --all          all of them\n"
	    "  -s, --store STORE  the store\n"
	    "      --json         print JSON\n"
	    "      --queue URL    the queue\n"
	    "  -f                 even if running\n"
	    "  -h, --help         show this help\n",
	    "option lines: aligned, long-only options under the long names, -h last");
	free(s);
	s = capture_options(&sv);
	is_str(s, "  -v          verbose\n  -h, --help  show this help\n",
	    "option lines of a short-only option");
	free(s);
	s = capture_options(&none);
	is_str(s, "  -h, --help  show this help\n", "a command without options still has -h");
	free(s);
}

static void
test_templates(void)
{
	static const struct sr_opt dup_short[] = { { 'a', "x", NULL, "x" }, { 'a', "y", NULL, "y" },
		{ 0 } };
	static const struct sr_opt dup_long[] = { { 'a', "x", NULL, "x" }, { 'b', "x", NULL, "y" },
		{ 0 } };
	static const struct sr_opt own_help[] = { { 'h', "host", "HOST", "x" }, { 0 } };
	static const struct sr_opt own_help2[] = { { 'H', "help", NULL, "x" }, { 0 } };
	static const struct sr_opt no_help[] = { { 'a', NULL, NULL, NULL }, { 0 } };
	static const struct sr_opt bad_long[] = { { 0, "a=b", NULL, "x" }, { 0 } };
	static const struct {
		struct sr_args_template t;
		const char *want;
	} bad[] = {
		{ { dup_short, "", 0, 0 }, "check template: -a declared twice" },
		{ { dup_long, "", 0, 0 }, "check template: --x declared twice" },
		{ { own_help, "", 0, 0 }, "check template: option 0 redeclares -h/--help" },
		{ { own_help2, "", 0, 0 }, "check template: option 0 redeclares -h/--help" },
		{ { no_help, "", 0, 0 }, "check template: option 0 has no help line" },
		{ { bad_long, "", 0, 0 }, "check template: option 0: bad long name 'a=b'" },
		{ { NULL, "A B", 2, 1 }, "check template: positional arguments 2..1 (A B)" },
	};
	char err[SR_ERRMAX];
	size_t i;

	for (i = 0; sr_cmd_table[i] != NULL; i++) {
		const struct sr_cmd_entry *e = sr_cmd_table[i];
		int rc = sr_args_template_check(&e->args, err);

		ok(rc == 0, "the template of '%s' is well formed", e->name);
		if (rc != 0)
			tap_diag("%s", err);
		ok(e->help != NULL && e->summary != NULL && e->exec != NULL,
		    "'%s' has a summary, a description and an exec", e->name);
	}
	is_int(sr_args_template_check(&one, err), 0, "the test template is well formed");
	for (i = 0; i < SR_ARRAY_LEN(bad); i++) {
		err[0] = '\0';
		is_int(sr_args_template_check(&bad[i].t, err), -1, "bad template %zu refused", i);
		is_str(err, bad[i].want, "bad template %zu: message", i);
	}
}

static void
test_similar(void)
{
	static const char *const cmds[] = { "run", "check", "ls", "help", "status", "submit" };
	static const struct {
		const char *name;
		int want;
	} near[] = {
		{ "rnu", 0 }, { "urn", 0 }, { "ru", 0 }, { "rum", 0 }, { "chekc", 1 }, { "chek", 1 },
		{ "sl", 2 }, { "l", 2 }, { "hlep", 3 }, { "stauts", 4 }, { "sumbit", 5 },
		{ "frobnicate", -1 }, { "x", -1 }, { "rnnu", -1 }, { "", -1 }, { "RUN", -1 },
	};
	size_t i;
	char longer[80];

	is_int(sr_similar_distance("run", "run", 0), 0, "distance to itself is 0");
	is_int(sr_similar_distance("rnu", "run", 0), 1, "a swap of neighbours is one edit");
	is_int(sr_similar_distance("kitten", "sitting", 0), 3, "kitten -> sitting: 3");
	is_int(sr_similar_distance("", "abc", 0), 3, "from nothing: one edit a letter");
	is_int(sr_similar_distance("ca", "abc", 0), 3, "the restricted swap: ca -> abc is 3");
	is_int(sr_similar_distance("RUN", "run", 0), 3, "case counts by default");
	is_int(sr_similar_distance("RUN", "run", SR_SIMILAR_FOLD_CASE), 0, "... not when folded");
	is_int(sr_similar_distance("Itnerval", "interval", SR_SIMILAR_FOLD_CASE), 1,
	    "folded, a swap is still one edit");
	ok(sr_similar_close("intevral", "interval", SR_SIMILAR_FOLD_CASE),
	    "a job file key with two letters swapped is close");
	ok(!sr_similar_close("x", "ls", 0) && !sr_similar_close("", "ls", 0),
	    "no edit count as large as the name itself is close");
	memset(longer, 'a', 65);
	longer[65] = '\0';
	ok(sr_similar_distance(longer, "a", 0) == SIZE_MAX, "over 64 bytes counts as far");
	for (i = 0; i < SR_ARRAY_LEN(near); i++)
		is_int(sr_similar_closest(near[i].name, cmds, SR_ARRAY_LEN(cmds)), near[i].want,
		    "closest to '%s'", near[i].name);
}

static void
test_store_url(void)
{
	char *u, cwd[4096];

	is_str((u = sr_target_store_url("/srv/spotrun")), "file:///srv/spotrun",
	    "an absolute path is a file:// store");
	free(u);
	is_str((u = sr_target_store_url("s3://bucket/prefix")), "s3://bucket/prefix",
	    "a URL stays as it is");
	free(u);
	is_str((u = sr_target_store_url("file:///x")), "file:///x", "a file URL stays as it is");
	free(u);
	is_str((u = sr_target_store_url("nope://x")), "nope://x",
	    "an unknown scheme is left to the store's open to refuse");
	free(u);
	if (getcwd(cwd, sizeof cwd) == NULL || chdir("/tmp") != 0) {
		ok(0, "chdir /tmp: %s", strerror(errno));
		return;
	}
	is_str((u = sr_target_store_url("store")), "file:///tmp/store",
	    "a relative path is taken from the working directory");
	free(u);
	if (chdir("/") == 0) {
		is_str((u = sr_target_store_url("store")), "file:///store", "... also in /");
		free(u);
	}
	if (chdir(cwd) != 0)
		ok(0, "chdir back: %s", strerror(errno));
}

/* Write a file of content under dir; its path in buf. */
static const char *
put(const char *dir, const char *name, const char *content, size_t len, char *buf, size_t blen)
{
	FILE *fp;

	snprintf(buf, blen, "%s/%s", dir, name);
	fp = fopen(buf, "w");
	if (fp == NULL || fwrite(content, 1, len, fp) != len || fclose(fp) != 0)
		tap_diag("cannot write %s", buf);
	return buf;
}

static void
test_not_job(void)
{
	static const struct {
		const char *name, *content;
		const char *want;	/* the command, NULL: not a script */
	} files[] = {
		{ "train.py", "import torch\n", "python3 DIR/train.py" },
		{ "train.py", "", "python3 DIR/train.py" },
		{ "train.py", "# a comment\n\n; another\nimport os\n", "python3 DIR/train.py" },
		{ "train.py", "[1, 2]\n", NULL },
		{ "run.sh", "#!/bin/bash -e\necho\n", "bash DIR/run.sh" },
		{ "run.sh", "echo hi\n", "sh DIR/run.sh" },
		{ "tool", "#!/usr/bin/env -S python3 -u\nimport os\n", "python3 DIR/tool" },
		{ "tool", "#!/usr/bin/env LC_ALL=C perl\n", "perl DIR/tool" },
		{ "tool", "#! /usr/bin/ruby\nputs 1\n", "ruby DIR/tool" },
		{ "tool", "#!/opt/py@3\nx\n", "DIR/tool" },
		{ "tool", "import os\n", NULL },
		{ "tool", "#!/usr/bin/env spotrun\n[job]\nname = x\n", NULL },
		{ "job.ini", "import os\n", NULL },
		{ "job.py", "\xef\xbb\xbf  [job]\nname = x\n", NULL },
		{ "a b.py", "x = 1\n", "python3 'DIR/a b.py'" },
		{ "it's.py", "x = 1\n", "python3 'DIR/it'\\''s.py'" },
		{ "model.R", "x <- 1\n", "Rscript DIR/model.R" },
		{ "prog", "\x7f" "ELF\x02\x01\x01", "DIR/prog" },
		{ ".py", "x\n", NULL },
	};
	char dir[] = "/tmp/t-args.XXXXXX", path[512], cmd[1400], want[1400], fifo[512];
	const char *what = NULL;
	size_t i;

	if (mkdtemp(dir) == NULL) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	for (i = 0; i < SR_ARRAY_LEN(files); i++) {
		int got;

		put(dir, files[i].name, files[i].content, strlen(files[i].content), path,
		    sizeof path);
		cmd[0] = '\0';
		got = sr_jobfile_not_job(path, cmd, sizeof cmd, &what);
		if (files[i].want == NULL) {
			is_int(got, 0, "%s (%zu) is not taken for a script", files[i].name, i);
		} else {
			const char *d = strstr(files[i].want, "DIR");

			snprintf(want, sizeof want, "%.*s%s%s", (int)(d - files[i].want),
			    files[i].want, dir, d + 3);
			is_int(got, 1, "%s (%zu) is a script or program", files[i].name, i);
			is_str(cmd, want, "%s (%zu): the command to write", files[i].name, i);
			is_str(what, files[i].content[0] == '\x7f' ? "a program" : "a script",
			    "%s (%zu): what it is", files[i].name, i);
		}
		unlink(path);
	}
	/* a FIFO named like a script: never opened for a blocking read */
	snprintf(fifo, sizeof fifo, "%s/pipe.py", dir);
	if (mkfifo(fifo, 0600) == 0) {
		alarm(10);
		is_int(sr_jobfile_not_job(fifo, cmd, sizeof cmd, &what), 0,
		    "a FIFO is no script, and is not waited on");
		alarm(0);
		unlink(fifo);
	} else {
		ok(0, "mkfifo: %s", strerror(errno));
	}
	snprintf(path, sizeof path, "%s/missing.py", dir);
	is_int(sr_jobfile_not_job(path, cmd, sizeof cmd, &what), 0, "a missing file is no script");
	rmdir(dir);
}

int
main(void)
{
	test_parse();
	test_usage();
	test_templates();
	test_similar();
	test_store_url();
	test_not_job();
	return tap_done();
}
