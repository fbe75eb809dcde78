/*
 * az-xml.h: reading the XML replies of Azure Blob (errors are
 * store/xmlwalk.h's): List Blobs pages and Get Block List. Each reader
 * streams the whole reply through store/xmlwalk.c, so a page of 5000 names
 * is never a document tree in memory.
 */
#ifndef SR_AZ_XML_H
#define SR_AZ_XML_H

#include <stddef.h>

#include "store.h"

/* One List Blobs page (EnumerationResults). For each <Blob> in order,
 * call fn with its <Name> less the store's prefix base (names not starting
 * with it, or equal to it, are skipped), Content-Length, Last-Modified
 * and the Etag without quotes. A nonzero return from fn stops and is
 * returned. Else 0 with *next set to the <NextMarker> (malloc'd; NULL on
 * the last page); or -1 with err for a reply that is not such a page. */
int sr_az_xml_list(const char *body, size_t len, const char *base,
    int (*fn)(const struct sr_object_info *info, void *arg), void *arg, char **next,
    char *err);

/* A Get Block List reply (BlockList): how many blocks are committed and
 * uncommitted. 0, or -1 with err when the reply is not one. */
int sr_az_xml_blocks(const char *body, size_t len, int *committed, int *uncommitted, char *err);

#endif
