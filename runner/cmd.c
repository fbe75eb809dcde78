/*
 * cmd.c: the command table, lookup, and usage lines generated from it.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cmd.h"

const struct sr_cmd_entry *const sr_cmd_table[] = {
	&sr_cmd_run_entry,
	&sr_cmd_check_entry,
	&sr_cmd_ls_entry,
	&sr_cmd_help_entry,
	NULL
};

const struct sr_cmd_entry *
sr_cmd_find(const char *name)
{
	size_t i;

	for (i = 0; sr_cmd_table[i] != NULL; i++) {
		if (strcmp(sr_cmd_table[i]->name, name) == 0)
			return sr_cmd_table[i];
	}
	return NULL;
}

void
sr_cmd_usage(const struct sr_cmd_entry *e, void *fp)
{
	fprintf(fp, "usage: spotrun %s%s%s\n", e->name, *e->args ? " " : "", e->args);
}
