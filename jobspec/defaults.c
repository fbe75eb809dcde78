/*
 * defaults.c: see defaults.h.
 */
#include "config.h"

#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "defaults.h"
#include "util.h"

char *
sr_default_store(void)
{
	const char *data = getenv("XDG_DATA_HOME"), *home = getenv("HOME");

	if (data != NULL && data[0] == '/')
		return sr_asprintf("file://%s/spotrun", data);
	if (home == NULL || home[0] != '/') {
		struct passwd *pw = getpwuid(getuid());
		home = pw != NULL && pw->pw_dir != NULL ? pw->pw_dir : "/tmp";
	}
	return sr_asprintf("file://%s/.local/share/spotrun", home);
}

const char *
sr_default_python_dir(void)
{
	char self[PATH_MAX], built[PATH_MAX];

	/* The build tree's binary, not a copy or an installed one: those
	 * would point a job at a source tree that may have moved on. */
	if (realpath("/proc/self/exe", self) == NULL || realpath(SR_BUILD_BINARY, built) == NULL ||
	    strcmp(self, built) != 0)
		return NULL;
	if (access(SR_SRC_PYTHONDIR "/spotrun/__init__.py", R_OK) != 0)
		return NULL;
	return SR_SRC_PYTHONDIR;
}
