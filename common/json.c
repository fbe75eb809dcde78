/*
 * json.c: jansson's parser with its out-of-memory told apart (json.h).
 */
#include "config.h"

#include <errno.h>

#include "json.h"

json_t *
sr_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *je, int *oom)
{
	json_error_t own;
	json_t *root;

	errno = 0;
	root = json_loadb(buf, len, flags, je != NULL ? je : &own);
	*oom = errno == ENOMEM ||
	    (root == NULL && json_error_code(je != NULL ? je : &own) == json_error_out_of_memory);
	if (*oom) {
		json_decref(root);	/* it may be short of a byte */
		return NULL;
	}
	return root;
}
