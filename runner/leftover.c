/*
 * leftover.c: see leftover.h. Reading /proc/PID/environ needs the same user
 * (or root), which is the case for a job this user's spotrun started.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "leftover.h"
#include "util.h"

#define ENVIRON_MAX ((size_t)1 << 20)

/* 1 if /proc/pid/environ holds entry exactly, else 0. */
static int
environ_has(pid_t pid, const char *entry)
{
	char path[64], *buf, *p, *end;
	size_t len, elen = strlen(entry);
	int found = 0;

	snprintf(path, sizeof path, "/proc/%ld/environ", (long)pid);
	if (sr_read_file(path, ENVIRON_MAX, &buf, &len, NULL) == -1)
		return 0;
	for (p = buf, end = buf + len; p < end; p += strlen(p) + 1) {
		if (strlen(p) == elen && memcmp(p, entry, elen) == 0) {
			found = 1;
			break;
		}
	}
	free(buf);
	return found;
}

/* Send sig to every matching process; returns how many matched. */
static int
sweep(const char *entry, int sig)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t self = getpid();
	int n = 0;

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		pid_t pid;
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = (pid_t)strtol(de->d_name, NULL, 10);
		if (pid <= 1 || pid == self || !environ_has(pid, entry))
			continue;
		if (sig != 0)
			kill(pid, sig);
		n++;
	}
	closedir(d);
	return n;
}

int
sr_leftover_kill(const char *entry, char *err)
{
	double until = sr_mono() + 2.0;
	int killed = sweep(entry, SIGKILL), left = killed;

	/* A zombie's environ reads empty, so it no longer matches. */
	while (left > 0 && sr_mono() < until) {
		sr_sleep(0.02);
		left = sweep(entry, SIGKILL);
	}
	if (left > 0)
		return sr_err(err, "stop leftover processes with %s: %d still running", entry, left);
	return killed;
}
