/*
 * defaults.c: see defaults.h.
 */
#include "config.h"

#include <pwd.h>
#include <stdlib.h>
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
