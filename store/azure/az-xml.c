/*
 * az-xml.c: the Azure Blob reply readers of az-xml.h, functions over the
 * closed elements store/xmlwalk.c hands them.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "az-xml.h"
#include "util.h"
#include "xmlwalk.h"

struct list_state {
	const char *base;
	int (*fn)(const struct sr_object_info *, void *);
	void *fn_arg;
	char name[SR_XML_TEXT_MAX + 1];
	int have_name;
	struct sr_object_info info;
	char *next;
	int is_list;
	char err[SR_ERRMAX];
	int bad;
};

static int
list_end(const char *path, const char *text, void *arg)
{
	static const char root[] = "EnumerationResults";
	struct list_state *ls = arg;

	if (strcmp(path, root) == 0) {
		ls->is_list = 1;
		return 0;
	}
	if (strncmp(path, root, sizeof root - 1) != 0 || path[sizeof root - 1] != '/')
		return 0;
	path += sizeof root;
	if (text == NULL) {
		snprintf(ls->err, sizeof ls->err, "read listing: <%s> is too long", path);
		ls->bad = 1;
		return -1;
	}
	if (strcmp(path, "NextMarker") == 0) {
		free(ls->next);
		ls->next = text[0] != '\0' ? sr_strdup(text) : NULL;
	} else if (strcmp(path, "Blobs/Blob/Name") == 0) {
		sr_xml_copy(ls->name, sizeof ls->name, text);
		ls->have_name = 1;
	} else if (strcmp(path, "Blobs/Blob/Properties/Content-Length") == 0)
		ls->info.size = strtoull(text, NULL, 10);
	else if (strcmp(path, "Blobs/Blob/Properties/Last-Modified") == 0) {
		time_t t = curl_getdate(text, NULL);

		ls->info.mtime = t < 0 ? 0 : (double)t;
	} else if (strcmp(path, "Blobs/Blob/Properties/Etag") == 0) {
		size_t n = strlen(text);

		if (n >= 2 && text[0] == '"' && text[n - 1] == '"')
			snprintf(ls->info.etag, sizeof ls->info.etag, "%.*s", (int)n - 2, text + 1);
		else
			sr_xml_copy(ls->info.etag, sizeof ls->info.etag, text);
	} else if (strcmp(path, "Blobs/Blob") == 0) {
		int rc = 0;
		size_t blen;

		if (!ls->have_name) {
			snprintf(ls->err, sizeof ls->err, "read listing: a blob without <Name>");
			ls->bad = 1;
			return -1;
		}
		blen = strlen(ls->base);
		if (strlen(ls->name) > blen && strncmp(ls->name, ls->base, blen) == 0) {
			ls->info.key = ls->name + blen;
			rc = ls->fn(&ls->info, ls->fn_arg);
		}
		memset(&ls->info, 0, sizeof ls->info);
		ls->have_name = 0;
		return rc;
	}
	return 0;
}

int
sr_az_xml_list(const char *body, size_t len, const char *base,
    int (*fn)(const struct sr_object_info *info, void *arg), void *arg, char **next,
    char *err)
{
	struct list_state *ls = sr_calloc(1, sizeof *ls);
	int rc;

	*next = NULL;
	ls->base = base;
	ls->fn = fn;
	ls->fn_arg = arg;
	rc = sr_xml_walk(body, len, list_end, ls, err);
	if (ls->bad)
		rc = sr_err(err, "%s", ls->err);
	else if (rc == 0 && !ls->is_list)
		rc = sr_err(err, "read listing: the reply is not an EnumerationResults");
	if (rc == 0) {
		*next = ls->next;
		ls->next = NULL;
	}
	free(ls->next);
	free(ls);
	return rc;
}

struct blocks_state {
	int committed, uncommitted, is_list;
};

static int
blocks_end(const char *path, const char *text, void *arg)
{
	struct blocks_state *bs = arg;

	(void)text;
	if (strcmp(path, "BlockList") == 0)
		bs->is_list = 1;
	else if (strcmp(path, "BlockList/CommittedBlocks/Block") == 0)
		bs->committed++;
	else if (strcmp(path, "BlockList/UncommittedBlocks/Block") == 0)
		bs->uncommitted++;
	return 0;
}

int
sr_az_xml_blocks(const char *body, size_t len, int *committed, int *uncommitted, char *err)
{
	struct blocks_state bs = { 0, 0, 0 };

	if (sr_xml_walk(body, len, blocks_end, &bs, err) != 0)
		return -1;
	if (!bs.is_list)
		return sr_err(err, "read block list: the reply is not a BlockList");
	*committed = bs.committed;
	*uncommitted = bs.uncommitted;
	return 0;
}
