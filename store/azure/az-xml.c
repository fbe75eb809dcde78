/*
 * az-xml.c: the Azure Blob reply readers of az-xml.h, functions over the
 * closed elements store/xmlwalk.c hands them.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "az-xml.h"
#include "util.h"
#include "xmlwalk.h"

static const struct sr_xml_listing az_shape = {
	.root = "EnumerationResults", .entry = "Blobs/Blob", .entry_noun = "a blob",
	.key = "Name", .size = "Properties/Content-Length", .mtime = "Properties/Last-Modified",
	.etag = "Properties/Etag", .next = "NextMarker",
};

int
sr_az_xml_list(const char *body, size_t len, const char *base,
    int (*fn)(const struct sr_object_info *info, void *arg), void *arg, char **next,
    char *err)
{
	int truncated;

	return sr_xml_list(body, len, &az_shape, base, fn, arg, &truncated, next, err);
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
