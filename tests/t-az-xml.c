/*
 * t-az-xml.c: the Azure Blob reply readers (store/azure/az-xml.c) on
 * replies shaped as Azure and Azurite send them: a List Blobs page (names
 * with entities and UTF-8, the store's prefix stripped and names outside it
 * skipped, Content-Length, an RFC 1123 Last-Modified, quoted and unquoted
 * Etags, NextMarker; an empty one ends the listing), a Get Block List reply,
 * and hostile input (not XML, not a listing, a blob without a name), none
 * of which may crash or be taken for success; and an Azure error document.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "az-xml.h"
#include "tap.h"
#include "util.h"
#include "xmlwalk.h"

#define S(lit) (lit), (sizeof(lit) - 1)

struct seen {
	int n;
	char keys[8][64], etags[8][64];
	uint64_t sizes[8];
	double mtimes[8];
};

static int
collect(const struct sr_object_info *info, void *arg)
{
	struct seen *s = arg;

	if (s->n < 8) {
		snprintf(s->keys[s->n], sizeof s->keys[0], "%s", info->key);
		snprintf(s->etags[s->n], sizeof s->etags[0], "%s", info->etag);
		s->sizes[s->n] = info->size;
		s->mtimes[s->n] = info->mtime;
	}
	s->n++;
	return 0;
}

int
main(void)
{
	static const char page[] =
	    "\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"utf-8\"?>"
	    "<EnumerationResults ServiceEndpoint=\"http://127.0.0.1:10000/devstoreaccount1\" "
	    "ContainerName=\"c01\"><Prefix>run 1/</Prefix><MaxResults>5000</MaxResults><Blobs>"
	    "<Blob><Name>run 1/a &amp; b</Name><Properties><Creation-Time>Tue, 01 Dec 2026 "
	    "12:00:00 GMT</Creation-Time><Last-Modified>Tue, 01 Dec 2026 12:00:01 GMT"
	    "</Last-Modified><Etag>0x8DA7073A2000D1C</Etag><Content-Length>5</Content-Length>"
	    "<BlobType>BlockBlob</BlobType></Properties></Blob>"
	    "<Blob><Name>run 1/\xc3\xbc/x</Name><Properties><Etag>\"0x8DA7073A2000D1D\"</Etag>"
	    "<Content-Length>17179869184</Content-Length></Properties></Blob>"
	    "<Blob><Name>elsewhere/y</Name><Properties><Content-Length>1</Content-Length>"
	    "</Properties></Blob></Blobs><NextMarker>2!80!MDAwMDEy</NextMarker>"
	    "</EnumerationResults>";
	struct seen s;
	struct sr_xml_error e;
	char err[SR_ERRMAX], *next = NULL;
	int c, u;

	memset(&s, 0, sizeof s);
	is_int(sr_az_xml_list(S(page), "run 1/", collect, &s, &next, err), 0, "page: read");
	is_int(s.n, 2, "page: the two blobs under the prefix; the third skipped");
	is_str(s.keys[0], "a & b", "page: entity decoded, prefix stripped");
	is_str(s.keys[1], "\xc3\xbc/x", "page: UTF-8 name");
	ok(s.sizes[0] == 5 && s.sizes[1] == 17179869184ULL, "page: sizes");
	ok(s.mtimes[0] == 1796126401.0, "page: Last-Modified in RFC 1123");
	ok(s.mtimes[1] == 0, "page: no Last-Modified -> 0");
	is_str(s.etags[0], "0x8DA7073A2000D1C", "page: etag");
	is_str(s.etags[1], "0x8DA7073A2000D1D", "page: a quoted etag unquoted");
	is_str(next, "2!80!MDAwMDEy", "page: NextMarker");
	free(next);

	memset(&s, 0, sizeof s);
	is_int(sr_az_xml_list(S("<EnumerationResults><Blobs/><NextMarker/></EnumerationResults>"),
	    "", collect, &s, &next, err), 0, "an empty last page");
	ok(s.n == 0 && next == NULL, "... nothing, and no marker");
	is_int(sr_az_xml_list(S("<EnumerationResults><Blobs><Blob><Properties/></Blob></Blobs>"
	    "</EnumerationResults>"), "", collect, &s, &next, err), -1, "a blob without a name");
	is_str(err, "read listing: a blob without <Name>", "... message");
	is_int(sr_az_xml_list(S("<Error><Code>ContainerNotFound</Code></Error>"), "", collect, &s,
	    &next, err), -1, "an error document is not a listing");
	is_str(err, "read listing: the reply is not an EnumerationResults", "... message");
	is_int(sr_az_xml_list(S("<EnumerationResults><Blobs>"), "", collect, &s, &next, err), -1,
	    "a cut reply");
	ok(strncmp(err, "read reply: not XML: ", 21) == 0, "... message: %s", err);

	is_int(sr_az_xml_blocks(S("<?xml version=\"1.0\"?><BlockList><CommittedBlocks><Block><Name>"
	    "YmxrLTAwMDAwMDAx</Name><Size>5</Size></Block></CommittedBlocks><UncommittedBlocks>"
	    "<Block><Name>YmxrLTAwMDAwMDAy</Name><Size>1</Size></Block><Block><Name>x</Name>"
	    "<Size>1</Size></Block></UncommittedBlocks></BlockList>"), &c, &u, err), 0,
	    "a block list");
	ok(c == 1 && u == 2, "... 1 committed, 2 uncommitted");
	is_int(sr_az_xml_blocks(S("<EnumerationResults/>"), &c, &u, err), -1, "not a block list");
	is_str(err, "read block list: the reply is not a BlockList", "... message");

	is_int(sr_xml_error(S("<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>"
	    "AuthenticationFailed</Code><Message>Server failed to authenticate the request.\n"
	    "RequestId:1\nTime:2026-12-01T12:00:00Z</Message><AuthenticationErrorDetail>The MAC "
	    "signature found in the HTTP request 'xyz' is not the same as any computed signature."
	    "</AuthenticationErrorDetail></Error>"), &e, err), 0, "an Azure error document");
	is_str(e.code, "AuthenticationFailed", "... its code");
	ok(strncmp(e.detail, "The MAC signature", 17) == 0, "... its AuthenticationErrorDetail");
	return tap_done();
}
