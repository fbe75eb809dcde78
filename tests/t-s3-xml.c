/*
 * t-s3-xml.c: the S3 reply readers (store/s3/s3-xml.c) on replies shaped as
 * S3 and RGW send them: errors with a region or server time, listing pages
 * (entities, UTF-8, the store prefix stripped, truncation), upload ids,
 * pages of unfinished multipart uploads (markers, times, keys outside the
 * store skipped), batch-delete results, and hostile input (not XML, huge text, a listing
 * without keys), none of which may crash or be taken for success.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "s3-xml.h"
#include "xmlwalk.h"
#include "tap.h"
#include "oom.h"
#include "oom-trial.h"
#include "util.h"

/* A string literal and its length. */
#define S(lit) (lit), (sizeof(lit) - 1)

struct seen {
	char keys[8][64];
	unsigned long long sizes[8];
	char etags[8][64];
	double mtimes[8];
	int n;
	int stop_at;
};

static int
collect(const struct sr_object_info *info, void *arg)
{
	struct seen *s = arg;

	if (s->n < 8) {
		snprintf(s->keys[s->n], sizeof s->keys[0], "%s", info->key);
		s->sizes[s->n] = info->size;
		snprintf(s->etags[s->n], sizeof s->etags[0], "%s", info->etag);
		s->mtimes[s->n] = info->mtime;
	}
	s->n++;
	return s->stop_at != 0 && s->n == s->stop_at ? 7 : 0;
}

struct ups {
	char keys[4][64];
	char ids[4][64];
	double initiated[4];
	int n;
	int stop_at;
};

static int
collect_upload(const struct sr_s3_upload *u, void *arg)
{
	struct ups *s = arg;

	if (s->n < 4) {
		snprintf(s->keys[s->n], sizeof s->keys[0], "%s", u->key);
		snprintf(s->ids[s->n], sizeof s->ids[0], "%s", u->upload_id);
		s->initiated[s->n] = u->initiated;
	}
	s->n++;
	return s->stop_at != 0 && s->n == s->stop_at ? 9 : 0;
}

static int
uploads(const char *xml, struct ups *s, int *trunc, char **nk, char **ni, char *err)
{
	memset(s, 0, sizeof *s);
	return sr_s3_xml_uploads(xml, strlen(xml), "run/", collect_upload, s, trunc, nk, ni, err);
}

static int
list(const char *xml, const char *base, struct seen *s, int *trunc, char **next, char *err)
{
	return sr_s3_xml_list(xml, strlen(xml), base, 0, collect, s, trunc, next, err);
}

/* ---- out of memory ---- */

/* One reply read under OOM (OOM_ALL: expat's allocations too). The result
 * is written out whole into got (entries, flags, markers, the error's
 * fields, or a reader's refusal), so that a trial that succeeded must
 * have read exactly what the unarmed run read, which the checks above
 * check field by field for the same replies. */
enum xml_reader { R_LIST, R_UPLOADS, R_UPLOAD_ID, R_DELETE, R_ERROR };

struct xml_trial {
	enum xml_reader reader;
	const char *body;
	char got[4096], want[4096];
};

static int
xml_op(void *arg, char *err)
{
	struct xml_trial *t = arg;
	char *a = NULL, *b = NULL;
	size_t o = 0, len = strlen(t->body);
	int rc = -1, trunc = 0, i;

	t->got[0] = '\0';
	switch (t->reader) {
	case R_LIST: {
		struct seen s;

		memset(&s, 0, sizeof s);
		if ((rc = list(t->body, "run/", &s, &trunc, &a, err)) == 0)
			for (i = 0; i < s.n && i < 8; i++)
				o += (size_t)snprintf(t->got + o, sizeof t->got - o, "%s|%llu|%s|%.3f;",
				    s.keys[i], s.sizes[i], s.etags[i], s.mtimes[i]);
		break;
	}
	case R_UPLOADS: {
		struct ups us;

		if ((rc = uploads(t->body, &us, &trunc, &a, &b, err)) == 0)
			for (i = 0; i < us.n && i < 4; i++)
				o += (size_t)snprintf(t->got + o, sizeof t->got - o, "%s|%s|%.3f;",
				    us.keys[i], us.ids[i], us.initiated[i]);
		break;
	}
	case R_UPLOAD_ID:
		rc = sr_s3_xml_upload_id(t->body, len, &a, err);
		break;
	case R_DELETE:
		/* the reply names a failed key: the reader's answer is -1 */
		if ((rc = sr_s3_xml_delete_result(t->body, len, err)) == -1 && !sr_err_is_oom(err)) {
			o += (size_t)snprintf(t->got + o, sizeof t->got - o, "refused: %s", err);
			rc = 0;
		}
		break;
	case R_ERROR: {
		struct sr_xml_error e;

		if ((rc = sr_xml_error(t->body, len, &e, err)) == 0)
			o += (size_t)snprintf(t->got + o, sizeof t->got - o, "%s|%s|%s|%s|%s", e.code,
			    e.message, e.region, e.server_time, e.request_time);
		break;
	}
	}
	if (rc == 0)
		snprintf(t->got + o, sizeof t->got - o, " trunc %d, %s, %s", trunc,
		    a != NULL ? a : "(none)", b != NULL ? b : "(none)");
	free(a);
	free(b);
	return rc == 0 ? 0 : -1;
}

/* After 0: exactly the unarmed run's reading (a failure leaves nothing:
 * xml_op freed what the reader gave). */
static int
xml_check(void *arg, int rc, char *why)
{
	struct xml_trial *t = arg;

	if (rc != 0 || strcmp(t->got, t->want) == 0)
		return 1;
	snprintf(why, SR_ERRMAX, "read '%s'", t->got);
	return 0;
}

static void
xml_trials(const char *name, enum xml_reader reader, const char *body)
{
	static struct xml_trial t;
	struct oom_trial sc = { name, OOM_ALL, xml_op, xml_check, NULL, &t };
	char err[SR_ERRMAX] = "";

	memset(&t, 0, sizeof t);
	t.reader = reader;
	t.body = body;
	if (xml_op(&t, err) == -1) {
		ok(0, "%s under OOM: read unarmed", name);
		tap_diag("%s", err);
		return;
	}
	memcpy(t.want, t.got, sizeof t.want);
	oom_trials(&sc);
}

int
main(void)
{
	struct sr_xml_error e;
	struct seen s;
	struct ups us;
	char err[SR_ERRMAX], *next, *id, *nk, *ni;
	int trunc;
	const char *skew =
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>RequestTimeTooSkewed</Code>"
	    "<Message>The difference between the request time and the current time is too "
	    "large.</Message><RequestTime>20261130T050000Z</RequestTime>"
	    "<ServerTime>2026-11-30T05:20:00Z</ServerTime><MaxAllowedSkewMilliseconds>900000"
	    "</MaxAllowedSkewMilliseconds></Error>";
	const char *region =
	    "<Error><Code>AuthorizationHeaderMalformed</Code><Message>the region 'us-east-1' is "
	    "wrong; expecting 'eu-west-1'</Message><Region>eu-west-1</Region>"
	    "<RequestId>X</RequestId></Error>";
	const char *page1 =
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
	    "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
	    "<Name>b</Name><Prefix>run/</Prefix><KeyCount>3</KeyCount><MaxKeys>3</MaxKeys>"
	    "<IsTruncated>true</IsTruncated>"
	    "<Contents><Key>run/a b&amp;c</Key><LastModified>2026-11-30T05:10:00.500Z</LastModified>"
	    "<ETag>&quot;0cc175b9c0f1b6a831c399e269772661&quot;</ETag><Size>1</Size>"
	    "<StorageClass>STANDARD</StorageClass></Contents>"
	    "<Contents><Key>run/\xc3\xbc+x</Key><LastModified>2026-11-30T05:10:01.000Z</LastModified>"
	    "<ETag>\"9e107d9d372bb6826bd81d3542a419d6-3\"</ETag><Size>17179869184</Size></Contents>"
	    "<Contents><Key>run/z</Key><Size>0</Size><ETag>\"d41d8cd98f00b204e9800998ecf8427e\""
	    "</ETag></Contents>"
	    "<NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>"
	    "</ListBucketResult>";
	/* ListMultipartUploads as S3 sends it (RGW adds nothing we read) */
	const char *ups1 =
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
	    "<ListMultipartUploadsResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
	    "<Bucket>b</Bucket><KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker>"
	    "<NextKeyMarker>run/j/packs/\xc3\xbc</NextKeyMarker>"
	    "<NextUploadIdMarker>2~id3</NextUploadIdMarker><Prefix>run/j/packs/</Prefix>"
	    "<MaxUploads>3</MaxUploads><IsTruncated>true</IsTruncated>"
	    "<Upload><Key>run/j/packs/a&amp;b.tar</Key><UploadId>2~Xy+/=</UploadId>"
	    "<Initiator><ID>arn:aws:iam::1:user/u</ID><DisplayName>u</DisplayName></Initiator>"
	    "<Owner><ID>75aa</ID><DisplayName>u</DisplayName></Owner>"
	    "<StorageClass>STANDARD</StorageClass>"
	    "<Initiated>2026-11-30T05:10:00.500Z</Initiated></Upload>"
	    "<Upload><Key>other/j/packs/x</Key><UploadId>2~id2</UploadId>"
	    "<Initiated>2026-11-30T05:10:00.000Z</Initiated></Upload>"
	    "<Upload><Key>run/j/packs/\xc3\xbc</Key><UploadId>2~id3</UploadId></Upload>"
	    "</ListMultipartUploadsResult>";
	const char *ups2 =
	    "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated>"
	    "<NextKeyMarker></NextKeyMarker><NextUploadIdMarker/>"
	    "<Upload><Key>run/k</Key><UploadId>u1</UploadId>"
	    "<Initiated>yesterday</Initiated></Upload></ListMultipartUploadsResult>";

	/* errors */
	is_int(sr_xml_error(skew, strlen(skew), &e, err), 0, "skew: an error document");
	is_str(e.code, "RequestTimeTooSkewed", "skew: code");
	is_str(e.server_time, "2026-11-30T05:20:00Z", "skew: server time");
	is_str(e.request_time, "20261130T050000Z", "skew: request time");
	ok(sr_xml_parse_iso8601(e.server_time) == 1796016000.0, "skew: server time parsed");
	is_int(sr_xml_error(region, strlen(region), &e, err), 0, "region: an error document");
	is_str(e.region, "eu-west-1", "region: the right region");
	ok(strncmp(e.message, "the region 'us-east-1'", 22) == 0, "region: message");
	is_int(sr_xml_error("", 0, &e, err), 1, "empty body: not an error document");
	is_str(e.code, "", "empty body: code cleared");
	is_int(sr_xml_error(S("<html>oops"), &e, err), 1, "HTML: not an error document");
	is_int(sr_xml_error(S("<Error><Message>m</Message></Error>"), &e, err), 1,
	    "an Error without a Code is not taken");

	/* listing */
	memset(&s, 0, sizeof s);
	is_int(list(page1, "run/", &s, &trunc, &next, err), 0, "page: read");
	is_int(s.n, 3, "page: three entries");
	is_str(s.keys[0], "a b&c", "page: entity decoded, prefix stripped");
	is_str(s.keys[1], "\xc3\xbc+x", "page: UTF-8 key");
	is_str(s.etags[0], "0cc175b9c0f1b6a831c399e269772661", "page: etag without &quot;");
	is_str(s.etags[1], "9e107d9d372bb6826bd81d3542a419d6-3", "page: multipart etag unquoted");
	ok(s.sizes[1] == 17179869184ULL, "page: 16 GiB size");
	ok(s.mtimes[0] == 1796015400.5, "page: LastModified with milliseconds");
	ok(s.mtimes[2] == 0, "page: no LastModified -> 0");
	is_int(trunc, 1, "page: truncated");
	is_str(next, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=", "page: continuation token");
	free(next);

	memset(&s, 0, sizeof s);
	is_int(sr_s3_xml_list(S("<ListBucketResult><Contents><Key>g/k</Key><Generation>1733000000123456"
	    "</Generation><MetaGeneration>1</MetaGeneration><ETag>\"abc\"</ETag><Size>3</Size>"
	    "</Contents></ListBucketResult>"), "g/", 1, collect, &s, &trunc, &next, err), 0,
	    "GCS page: read");
	is_str(s.etags[0], "1733000000123456", "GCS page: the etag is the generation");
	is_str(s.keys[0], "k", "GCS page: key");

	memset(&s, 0, sizeof s);
	is_int(list("<ListBucketResult><Contents><Key>run/a</Key></Contents><Contents><Key>other/b"
	    "</Key></Contents><Contents><Key>run/</Key></Contents></ListBucketResult>", "run/", &s,
	    &trunc, &next, err), 0, "a page with keys outside the prefix");
	is_int(s.n, 1, "... only the key under it is given (a server that ignores prefix=)");
	is_str(s.keys[0], "a", "... stripped");

	memset(&s, 0, sizeof s);
	s.stop_at = 2;
	is_int(list(page1, "run/", &s, &trunc, &next, err), 7, "callback's stop value returned");
	is_int(s.n, 2, "stopped after two");
	ok(next == NULL, "no token on a stop");

	memset(&s, 0, sizeof s);
	is_int(list("<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>", "", &s,
	    &trunc, &next, err), 0, "empty last page");
	ok(s.n == 0 && trunc == 0 && next == NULL, "empty last page: nothing, not truncated");

	is_int(list("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>", "", &s,
	    &trunc, &next, err), -1, "truncated without a token refused");
	is_str(err, "read listing: truncated without a NextContinuationToken", "... message");
	is_int(list("<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>", "",
	    &s, &trunc, &next, err), -1, "entry without a key refused");
	is_str(err, "read listing: an entry without <Key>", "... message");
	is_int(list("<Error><Code>AccessDenied</Code></Error>", "", &s, &trunc, &next, err), -1,
	    "an error document is not a listing");
	is_str(err, "read listing: the reply is not a ListBucketResult", "... message");
	is_int(list("<ListBucketResult><Contents>", "", &s, &trunc, &next, err), -1,
	    "cut-off XML refused");
	ok(strncmp(err, "read reply: not XML: ", 21) == 0, "... message: %s", err);
	{
		size_t n = 10000, i;
		char *big = sr_malloc(n + 200);

		strcpy(big, "<ListBucketResult><Contents><Key>");
		for (i = strlen(big); i < n; i++)
			big[i] = 'k';
		strcpy(big + n, "</Key></Contents></ListBucketResult>");
		is_int(list(big, "", &s, &trunc, &next, err), -1, "a 10000-byte key refused");
		is_str(err, "read listing: <Contents/Key> is too long", "... message");
		free(big);
	}
	{
		/* deep nesting must not overflow the path */
		char deep[4000];
		size_t o = 0;
		int i;

		o += (size_t)snprintf(deep + o, sizeof deep - o, "<ListBucketResult>");
		for (i = 0; i < 150; i++)
			o += (size_t)snprintf(deep + o, sizeof deep - o, "<a>");
		for (i = 0; i < 150; i++)
			o += (size_t)snprintf(deep + o, sizeof deep - o, "</a>");
		snprintf(deep + o, sizeof deep - o, "</ListBucketResult>");
		memset(&s, 0, sizeof s);
		is_int(list(deep, "", &s, &trunc, &next, err), 0, "deep nesting read");
		is_int(s.n, 0, "deep nesting: no entries");
	}

	/* multipart and batch delete */
	is_int(sr_s3_xml_upload_id(S("<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key>"
	    "<UploadId>2~abc+/=</UploadId></InitiateMultipartUploadResult>"), &id, err), 0,
	    "upload id read");
	is_str(id, "2~abc+/=", "upload id");
	free(id);
	is_int(sr_s3_xml_upload_id(S("<InitiateMultipartUploadResult/>"), &id, err), -1,
	    "no upload id refused");
	is_str(err, "start multipart upload: the reply has no UploadId", "... message");
	is_int(sr_s3_xml_delete_result(S("<DeleteResult><Deleted><Key>a</Key></Deleted></DeleteResult>"),
	    err), 0, "delete result without errors");
	is_int(sr_s3_xml_delete_result(S("<DeleteResult><Deleted><Key>a</Key></Deleted><Error><Key>b/c"
	    "</Key><Code>AccessDenied</Code><Message>no</Message></Error></DeleteResult>"), err),
	    -1, "delete result with an error");
	is_str(err, "delete b/c: AccessDenied", "... message names key and code");

	/* unfinished multipart uploads */
	is_int(uploads(ups1, &us, &trunc, &nk, &ni, err), 0, "uploads page: read");
	is_int(us.n, 2, "uploads page: two under the store's prefix, the other skipped");
	is_str(us.keys[0], "j/packs/a&b.tar", "uploads page: entity decoded, prefix stripped");
	is_str(us.ids[0], "2~Xy+/=", "uploads page: upload id");
	ok(us.initiated[0] == 1796015400.5, "uploads page: Initiated with milliseconds");
	is_str(us.keys[1], "j/packs/\xc3\xbc", "uploads page: UTF-8 key");
	ok(us.initiated[1] == -1, "uploads page: no Initiated -> -1");
	is_int(trunc, 1, "uploads page: truncated");
	is_str(nk, "run/j/packs/\xc3\xbc", "uploads page: NextKeyMarker");
	is_str(ni, "2~id3", "uploads page: NextUploadIdMarker");
	free(nk);
	free(ni);
	is_int(uploads(ups2, &us, &trunc, &nk, &ni, err), 0, "last uploads page: read");
	ok(us.n == 1 && us.initiated[0] == -1, "last uploads page: a bad time reads as -1");
	ok(trunc == 0 && nk == NULL && ni == NULL, "last uploads page: empty markers are none");
	memset(&us, 0, sizeof us);
	us.stop_at = 1;
	is_int(sr_s3_xml_uploads(S("<ListMultipartUploadsResult><IsTruncated>true</IsTruncated>"
	    "<NextKeyMarker>m</NextKeyMarker><Upload><Key>run/a</Key><UploadId>1</UploadId>"
	    "</Upload><Upload><Key>run/b</Key><UploadId>2</UploadId></Upload>"
	    "</ListMultipartUploadsResult>"), "run/", collect_upload, &us, &trunc, &nk, &ni, err),
	    9, "uploads: the callback's stop value returned");
	ok(us.n == 1 && nk == NULL && ni == NULL, "uploads: stopped after one, no markers");
	is_int(uploads("<ListMultipartUploadsResult><IsTruncated>true</IsTruncated>"
	    "<NextUploadIdMarker>x</NextUploadIdMarker></ListMultipartUploadsResult>", &us, &trunc,
	    &nk, &ni, err), -1, "uploads: truncated without a NextKeyMarker refused");
	is_str(err, "read upload listing: truncated without a NextKeyMarker", "... message");
	is_int(uploads("<ListMultipartUploadsResult><Upload><Key>run/a</Key><UploadId></UploadId>"
	    "</Upload></ListMultipartUploadsResult>", &us, &trunc, &nk, &ni, err), -1,
	    "uploads: an empty UploadId refused");
	is_str(err, "read upload listing: an upload without <UploadId>", "... message");
	is_int(uploads("<ListMultipartUploadsResult><Upload><UploadId>1</UploadId></Upload>"
	    "</ListMultipartUploadsResult>", &us, &trunc, &nk, &ni, err), -1,
	    "uploads: an upload without a key refused");
	is_str(err, "read upload listing: an upload without <Key>", "... message");
	is_int(us.n, 0, "uploads: nothing handed on from a refused page");
	is_int(uploads(page1, &us, &trunc, &nk, &ni, err), -1, "an object listing is not "
	    "an upload listing");
	is_str(err, "read upload listing: the reply is not a ListMultipartUploadsResult",
	    "... message");
	is_int(uploads("<ListMultipartUploadsResult><Upload>", &us, &trunc, &nk, &ni, err), -1,
	    "uploads: cut-off XML refused");
	ok(strncmp(err, "read reply: not XML: ", 21) == 0, "... message: %s", err);

	/* every reader under OOM */
	xml_trials("sr_s3_xml_list of a ListObjectsV2 page", R_LIST, page1);
	xml_trials("sr_s3_xml_uploads of a ListMultipartUploads page", R_UPLOADS, ups1);
	xml_trials("sr_s3_xml_upload_id of an InitiateMultipartUploadResult", R_UPLOAD_ID,
	    "<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key>"
	    "<UploadId>2~abc+/=</UploadId></InitiateMultipartUploadResult>");
	xml_trials("sr_s3_xml_delete_result of a DeleteResult with an error", R_DELETE,
	    "<DeleteResult><Deleted><Key>a</Key></Deleted><Error><Key>b/c</Key>"
	    "<Code>AccessDenied</Code><Message>no</Message></Error></DeleteResult>");
	xml_trials("sr_xml_error of a RequestTimeTooSkewed error", R_ERROR, skew);

	/* mutations of real replies: never a crash, a listing only from a listing */
	{
		/* five seeds: prime to the 2, 4 and 8 the mutations cycle by */
		const char *seeds[] = { page1, skew, region, ups1, ups2 };
		unsigned rng = 12345;
		int k, accepted = 0, too_many = 0, codeless = 0, up_accepted = 0, up_too_many = 0;

		for (k = 0; k < 50000; k++) {
			const char *seed = seeds[k % 5];
			size_t n = strlen(seed), j, flips = 1 + k % 8;
			char *m = sr_malloc(n + 1);

			memcpy(m, seed, n + 1);
			for (j = 0; j < flips; j++) {
				rng = rng * 1103515245u + 12345u;
				/* half the time a letter: text stays text, so some parse */
				m[(rng >> 8) % n] = k % 4 < 2 ? (char)('a' + (rng >> 20) % 26) :
				    (char)(rng >> 20);
			}
			rng = rng * 1103515245u + 12345u;
			if (k % 2 == 0)
				n = (rng >> 8) % (n + 1);	/* and cut it short */
			memset(&s, 0, sizeof s);
			if (sr_s3_xml_list(m, n, "run/", k % 2, collect, &s, &trunc, &next, err) == 0) {
				accepted++;
				too_many += s.n > 3;
				free(next);
			}
			if (sr_xml_error(m, n, &e, err) == 0 && e.code[0] == '\0')
				codeless++;
			if (sr_s3_xml_upload_id(m, n, &id, err) == 0)
				free(id);
			sr_s3_xml_delete_result(m, n, err);
			memset(&us, 0, sizeof us);
			if (sr_s3_xml_uploads(m, n, "run/", collect_upload, &us, &trunc, &nk, &ni,
			    err) == 0) {
				up_accepted++;
				up_too_many += us.n > 3;
				free(nk);
				free(ni);
			}
			free(m);
		}
		ok(accepted > 100, "fuzz: some mutated listings still read (%d of 10000)", accepted);
		is_int(too_many, 0, "fuzz: no listing grows entries");
		is_int(codeless, 0, "fuzz: no error document without a code is taken");
		ok(up_accepted > 100, "fuzz: some mutated upload pages still read (%d of 20000)",
		    up_accepted);
		is_int(up_too_many, 0, "fuzz: no upload page grows entries");
	}

	ok(sr_xml_parse_iso8601("2026-11-30T05:10:00Z") == 1796015400.0, "iso8601 without fraction");
	ok(sr_xml_parse_iso8601("2026-11-30 05:10:00") == -1, "not iso8601");
	ok(sr_xml_parse_iso8601("2026-11-30T05:10:00+02:00") == -1, "non-UTC offset refused");
	return tap_done();
}
