/*
 * spotrun.c: main(). Finds the subcommand in the command table and runs it
 * through sr_cmd_exec; `spotrun --version` and `spotrun --help` are
 * answered here.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "contain.h"

int
main(int argc, char **argv)
{
	const struct sr_cmd_entry *e;

	if (argc < 2) {
		sr_cmd_exec(&sr_cmd_help_entry, 1, (char *[]){ "help", NULL });
		return SR_EXIT_USAGE;
	}
	/* A run's keeper (runner/contain.h): spotrun re-executed by itself. */
	if (strcmp(argv[1], "__keeper") == 0)
		return sr_keeper_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("spotrun %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return sr_cmd_exec(&sr_cmd_help_entry, argc - 1, argv + 1);
	if ((e = sr_cmd_find(argv[1])) == NULL) {
		sr_cmd_unknown(argv[1]);
		return SR_EXIT_USAGE;
	}
	return sr_cmd_exec(e, argc - 1, argv + 1);
}
