/*
 * keeper-main.c: the main of the keeper's own program (runner/spotrun-keeper,
 * contain.h): keeper.c and what it uses, linked against libc alone, so that
 * a run's keeper starts in about 2 ms of CPU, where spotrun re-executed
 * (libcurl, libcrypto and theirs loaded and relocated) takes about 15 ms on
 * every run of every machine. The program is built into spotrun as data
 * (keeper-bin.h) and started from memory; its arguments are the ones
 * spotrun re-executed takes ("__keeper" first), so either can be started.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "contain.h"

int
main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "__keeper") != 0) {
		fprintf(stderr, "spotrun-keeper: a run's keeper, started by spotrun only\n");
		return 2;
	}
	return sr_keeper_main(argc - 1, argv + 1);
}
