/*
 * cmd-help.c: `spotrun help [COMMAND]`: the usage of every command, or of
 * one, generated from the command table.
 */
#include "config.h"

#include <stdio.h>

#include "cmd.h"

static int
cmd_help_exec(int argc, char **argv)
{
	const struct sr_cmd_entry *e;
	size_t i;

	if (argc > 2) {
		sr_cmd_usage(&sr_cmd_help_entry, stderr);
		return SR_EXIT_USAGE;
	}
	if (argc == 2) {
		e = sr_cmd_find(argv[1]);
		if (e == NULL) {
			fprintf(stderr, "spotrun: unknown command '%s'; try 'spotrun help'\n", argv[1]);
			return SR_EXIT_USAGE;
		}
		sr_cmd_usage(e, stdout);
		printf("%s\n", e->summary);
		return 0;
	}
	printf("usage: spotrun COMMAND [ARGS]\n       spotrun --version\n\ncommands:\n");
	for (i = 0; sr_cmd_table[i] != NULL; i++) {
		e = sr_cmd_table[i];
		printf("  %-6s %-34s %s\n", e->name, e->args, e->summary);
	}
	printf("\nSee spotrun(1) and spotrun-job(5).\n");
	return 0;
}

const struct sr_cmd_entry sr_cmd_help_entry = {
	"help", "[COMMAND]", "", "show the commands and their usage", cmd_help_exec
};
