/*
 * jobspec-sweep.c: the checks of a sweep file that need the whole file
 * (see sr_js_check_sweep in jobspec-int.h), so that `spotrun check` finds
 * at the file's lines what would otherwise fail trial by trial in the
 * queue: too many trials, names too long, a ${name} that names nothing, a
 * trial whose command does not split, a trial's job file too large.
 * sweep.c does the expanding; this file only asks it and reports.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobspec-int.h"
#include "jobspec-msg.h"
#include "sweep.h"
#include "util.h"
#include "words.h"

/* "lr = 3e-4, seed = 2": trial t's values, for a message. */
static void
trial_values(const struct sr_jobspec *js, size_t t, char *buf, size_t size)
{
	size_t k;

	buf[0] = '\0';
	for (k = 0; k < js->nsweep && strlen(buf) + 1 < size; k++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s = %s", k ? ", " : "",
		    js->sweep[k].key, sr_sweep_value(js, t, k));
}

/* Every trial's command splits into words and names a program; js->argv
 * becomes the first trial's. One error at most: the first trial that
 * fails. */
static void
check_commands(struct sr_js_parse *p, size_t ntrials)
{
	struct sr_jobspec *js = p->js;
	char err[SR_ERRMAX], name[SR_JOBSPEC_NAME_MAX + 1], vals[400], b[SR_JS_SHOW_MAX + 4];
	char *cmd, **argv;
	size_t t;
	int r;

	/* Without a reference, every trial runs the same command. */
	if (sr_sweep_subst(js, SR_SWEEP_CHECK, js->command, NULL, err) == -1)
		return;
	for (t = 0; t < ntrials; t++) {
		argv = NULL;
		if (sr_sweep_subst(js, t, js->command, &cmd, err) == 0)
			r = sr_js_argv(cmd, js->shell, &argv, err);
		else
			r = -1, cmd = NULL;
		if (r != 0) {
			sr_sweep_trial_name(js, t, name, (char[SR_ERRMAX]){ 0 });
			trial_values(js, t, vals, sizeof vals);
			sr_js_error(p, js->command_line, "command of trial %s (%s): %s%s", name,
			    sr_js_show(vals, b), r == -2 ? "the program name is empty; " : "",
			    r == -2 ? SR_JS_COMMAND_HINT : err);
			free(cmd);
			sr_words_free(argv);
			return;
		}
		free(cmd);
		if (t == 0)
			js->argv = argv;
		else
			sr_words_free(argv);
		if (strstr(js->command, "${") == NULL)
			break;	/* every trial's is the same */
	}
}

/* Every ${name} of the command and the [env] values names a parameter, and
 * no [env] variable is one that a parameter sets. Returns -1 when any of
 * them failed (then the trials are not tried). */
static int
check_references(struct sr_js_parse *p)
{
	struct sr_jobspec *js = p->js;
	char err[SR_ERRMAX], *eq;
	size_t i, k, n;
	int bad = 0;

	if (js->command != NULL && sr_sweep_subst(js, SR_SWEEP_CHECK, js->command, NULL, err) == -1) {
		sr_js_error(p, js->command_line, "command: %s", err);
		bad = -1;
	}
	for (i = 0; js->env[i] != NULL; i++) {
		eq = strchr(js->env[i], '=');
		n = (size_t)(eq - js->env[i]);
		if (sr_sweep_subst(js, SR_SWEEP_CHECK, eq + 1, NULL, err) == -1) {
			sr_js_error(p, js->env_line[i], "[env] %.*s: %s", (int)n, js->env[i], err);
			bad = -1;
		}
		if (strncmp(js->env[i], "SPOTRUN_PARAM_", 14) != 0)
			continue;
		for (k = 0; k < js->nsweep; k++) {
			if (strlen(js->sweep[k].key) == n - 14 &&
			    strncasecmp(js->sweep[k].key, js->env[i] + 14, n - 14) == 0) {
				sr_js_error(p, js->env_line[i], "[env] %.*s: the sweep's parameter %s "
				    "(line %d) sets it in every trial; remove it here", (int)n,
				    js->env[i], js->sweep[k].key, js->sweep[k].line);
				bad = -1;
			}
		}
	}
	return bad;
}

void
sr_js_check_sweep(struct sr_js_parse *p)
{
	struct sr_jobspec *js = p->js;
	struct sr_sweep_trial tr;
	char err[SR_ERRMAX], b[SR_JS_SHOW_MAX + 4];
	size_t n = sr_sweep_count(js);
	int w;

	if (n > SR_SWEEP_TRIALS_MAX) {
		if (n == SIZE_MAX)
			sr_js_error(p, p->sweep_first_line, "the sweep has more than %d trials; "
			    "split it into several job files", SR_SWEEP_TRIALS_MAX);
		else
			sr_js_error(p, p->sweep_first_line, "the sweep has %zu trials, more than "
			    "%d; split it into several job files", n, SR_SWEEP_TRIALS_MAX);
		return;
	}
	if (js->name != NULL) {
		for (w = 1; n >= 10; n /= 10)
			w++;
		n = sr_sweep_count(js);
		if (strlen(js->name) + 1 + (size_t)w > SR_JOBSPEC_NAME_MAX)
			sr_js_error(p, js->name_line, "name = %s: too long for a sweep: its %zu "
			    "trials are named %s.%0*d to %s.%zu, and a job name has at most %d "
			    "characters; use at most %d", sr_js_show(js->name, b), n, "NAME", w, 1,
			    "NAME", n, SR_JOBSPEC_NAME_MAX, SR_JOBSPEC_NAME_MAX - 1 - w);
	}
	if (check_references(p) == -1 || js->command == NULL || js->name == NULL || p->errs->n > 0)
		return;
	check_commands(p, n);
	if (p->errs->n > 0)
		return;
	/* The longest trial makes the longest lines and job file of all. */
	if (sr_sweep_trial(js, sr_sweep_longest(js), &tr, err) == -1)
		sr_js_error(p, p->sweep_first_line, "%s; shorten the values or the lines that "
		    "use them", err);
	sr_sweep_trial_free(&tr);
}
