/*
 * pymodule.c: writes out the spotrun Python module this binary carries
 * (pymodule.h). Run at each run's start into the job's local folder: a
 * few small files, compared before they are written.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pymodule.h"
#include "util.h"

static const struct {
	const char *name, *text;
} files[] = {
	{ "__init__.py", sr_pymodule_init_py },
	{ "torch.py", sr_pymodule_torch_py },
	{ "hf.py", sr_pymodule_hf_py },
	{ "lightning.py", sr_pymodule_lightning_py },
};

/* Nonzero unless path holds exactly want (len bytes). */
static int
differs(const char *path, const char *want, size_t len)
{
	char err[SR_ERRMAX], *have;
	size_t n;
	int rc;

	if (sr_read_file(path, len + 1, &have, &n, err) == -1)
		return 1;
	rc = n != len || memcmp(have, want, len) != 0;
	free(have);
	return rc;
}

int
sr_pymodule_place(const char *dir, char *err)
{
	char *pkg = sr_asprintf("%s/spotrun", dir), *path;
	size_t i, len;
	int rc = 0;

	if (sr_mkdirs(pkg, 0755, err) == -1)
		rc = -1;
	for (i = 0; rc == 0 && i < sizeof files / sizeof files[0]; i++) {
		path = sr_asprintf("%s/%s", pkg, files[i].name);
		len = strlen(files[i].text);
		if (differs(path, files[i].text, len))
			rc = sr_write_file_atomic(path, files[i].text, len, 0, err);
		free(path);
	}
	free(pkg);
	return rc == 0 ? 0 : sr_err_prefix(err, "write module spotrun into %s", dir);
}
