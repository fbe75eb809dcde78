/*
 * cmd-help.c: `spotrun help [COMMAND]`: the table of the commands, or the
 * full help of one (what `spotrun COMMAND --help` prints), generated from
 * the command table.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "util.h"

static int
cmd_help_exec(const struct sr_args *a)
{
	const struct sr_cmd_entry *e;
	size_t i;

	if (a->argc == 1) {
		if ((e = sr_cmd_find(a->argv[0])) == NULL) {
			sr_cmd_unknown(a->argv[0]);
			return SR_EXIT_USAGE;
		}
		sr_cmd_help(e, stdout);
		return 0;
	}
	printf("usage: spotrun COMMAND [ARGS]\n       spotrun --version\n\ncommands:\n");
	for (i = 0; sr_cmd_table[i] != NULL; i++) {
		char *syn;

		e = sr_cmd_table[i];
		syn = sr_args_synopsis(&e->args);
		if (strlen(syn) > 34) {	/* one line a command: its options are in its help */
			free(syn);
			syn = sr_asprintf("[options] %s", e->args.operands);
		}
		printf("  %-7s %-34s %s\n", e->name, syn, e->summary);
		free(syn);
	}
	printf("\n'spotrun help COMMAND' or 'spotrun COMMAND --help' shows a command's options.\n"
	    "See spotrun(1) and spotrun-job(5).\n");
	return 0;
}

const struct sr_cmd_entry sr_cmd_help_entry = {
	.name = "help",
	.args = { .opts = NULL, .operands = "[COMMAND]", .min = 0, .max = 1 },
	.summary = "show the commands and their usage",
	.help = "Show the commands and their usage, or with COMMAND the usage, options and\n"
	    "description of that command (the same as 'spotrun COMMAND --help').",
	.exec = cmd_help_exec,
};
