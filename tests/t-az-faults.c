/*
 * t-az-faults.c: the az:// store through tests/faultproxy in front of
 * Azurite: block uploads and reads that meet connection resets, stalls
 * (dropped after stall_timeout, long before the server would answer),
 * 503s and 500s in Azure's place, dropped
 * connections, and replies lost after the request took effect all commit
 * or read byte-exact, each fault counted in the proxy's log; a
 * create-only put and a compare-and-swap whose reply was lost find their
 * own blob (its Content-MD5) and succeed, while a stale one whose reply was
 * lost still loses; a server that resets every connection makes an upload
 * fail after its attempts with the part and the reset named, leaving no
 * blob and no uncommitted blocks once the proxy passes again; an
 * unreachable endpoint fails fast. Skips without Azurite unless
 * SPOTRUN_TEST_REQUIRE_AZ=1.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store.h"
#include "tap.h"
#include "az-util.h"
#include "util.h"

#define MiB (1024 * 1024)

static char container[64];
static struct su_proxy px;
static char *purl;		/* the store through the proxy */
static struct sr_store *direct;	/* the same keys straight from Azurite */

/* Upload len bytes of data to key through the proxy under fault (a fresh
 * store, so that no pooled connection skips it); read them back directly.
 * 0 when committed byte-exact, -1 with err. */
static int
upload_under(const char *fault, const char *key, const char *data, size_t len, char *err)
{
	struct sr_store *ps = su_store_open(purl, 1);
	struct sr_upload *up;
	char *back = sr_malloc(len);
	int rc = -1;
	size_t off;

	su_proxy_fault(&px, fault);
	if ((up = sr_store_upload_begin(ps, key, err)) == NULL)
		goto out;
	for (off = 0; off < len; off += MiB / 2)
		if (sr_upload_write(up, data + off, len - off < MiB / 2 ? len - off : MiB / 2,
		    err) == -1) {
			sr_upload_abort(up);
			goto out;
		}
	if (sr_upload_commit(up, err) == -1)
		goto out;
	if (sr_store_read_range(direct, key, 0, len, back, err) == -1)
		goto out;
	rc = memcmp(back, data, len) == 0 ? 0 : sr_err(err, "%s: not byte-exact", key);
out:
	su_proxy_fault(&px, "pass");
	free(back);
	sr_store_close(ps);
	return rc;
}

static void
test_uploads(const char *data, size_t len)
{
	static const struct {
		const char *fault, *logged;
		int count;
	} faults[] = {
		{ "reset after=300000 count=3", "reset after 300000 bytes", 3 },
		{ "stall seconds=60 then=close count=2", "stall 60.0 s begins", 2 },
		{ "slowdown count=4", "slowdown: 503", 4 },
		{ "internal count=3", "internal: 500", 3 },
		{ "drop count=3", "drop after the request headers", 3 },
		{ "lose count=2", "lose: forwarded", 2 },
	};
	char err[SR_ERRMAX], key[64];
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(faults); i++) {
		int before = su_proxy_count(&px, faults[i].logged), rc;
		double end;

		snprintf(key, sizeof key, "up/%zu", i);
		err[0] = '\0';
		rc = upload_under(faults[i].fault, key, data, len, err);
		if (!ok(rc == 0, "\"%s\": a 6 MiB upload in 1 MiB blocks commits byte-exact",
		    faults[i].fault)) {
			tap_diag("%s", err);
			su_proxy_show(&px);
		}
		/* The client must drop a stalled block after stall_timeout=2 s,
		 * not wait for the server: the upload ends while the proxy
		 * still holds both (its "then close" comes 60 s on). An
		 * ordering of events, not a time, so a loaded machine passes. */
		if (strncmp(faults[i].fault, "stall", 5) == 0)
			is_int(su_proxy_count(&px, "stall 60.0 s, then close"), 0,
			    "\"%s\": the stalled blocks were dropped by the client "
			    "(stall_timeout=2 s), not closed by the server", faults[i].fault);
		/* the proxy logs most connections when they end */
		for (end = sr_mono() + 30; sr_mono() < end && su_proxy_count(&px,
		    faults[i].logged) - before < faults[i].count;)
			usleep(50000);
		is_int(su_proxy_count(&px, faults[i].logged) - before, faults[i].count,
		    "\"%s\": the proxy faulted %d connections", faults[i].fault, faults[i].count);
	}
}

static void
test_reads(const char *data, size_t len)
{
	struct sr_store *ps;
	char err[SR_ERRMAX], *back = sr_malloc(len);
	int before = su_proxy_count(&px, "reset after 200 bytes");

	su_proxy_fault(&px, "reset after=200 count=2");
	ps = su_store_open(purl, 1);
	is_int(sr_store_read_range(ps, "up/0", MiB - 10, 2 * MiB, back, err), 0,
	    "a ranged read whose connections are reset twice");
	ok(memcmp(back, data + MiB - 10, 2 * MiB) == 0, "... reads byte-exact");
	is_int(su_proxy_count(&px, "reset after 200 bytes") - before, 2, "... after 2 resets");
	sr_store_close(ps);
	su_proxy_fault(&px, "pass");
	free(back);
}

static void
test_lost_replies(void)
{
	struct sr_store *ps;
	struct sr_object_info info;
	char err[SR_ERRMAX], etag[SR_ETAG_MAX], etag2[SR_ETAG_MAX], *want;
	void *buf;
	size_t len;
	int rc, lost = su_proxy_count(&px, "lose: forwarded");

	/* create-only: it landed, the reply was lost: ours, so success */
	su_proxy_fault(&px, "lose");
	ps = su_store_open(purl, 1);
	rc = sr_store_put(ps, "m1", "manifest one", 12, SR_PUT_CREATE, NULL, etag, err);
	su_rc_is(rc, 0, err, "create-only put whose reply was lost: the retry's 409 is our own "
	    "blob");
	is_int(su_proxy_count(&px, "lose: forwarded") - lost, 1, "... the proxy lost the first "
	    "reply");
	is_int(sr_store_head(direct, "m1", &info, err), 0, "head m1");
	is_str(etag, info.etag, "... and the etag returned is the blob's");
	sr_store_close(ps);

	/* compare-and-swap: likewise */
	is_int(sr_store_put(direct, "p", "1", 1, SR_PUT_OVERWRITE, NULL, etag, err), 0, "put p = 1");
	su_proxy_fault(&px, "lose");
	ps = su_store_open(purl, 1);
	rc = sr_store_put(ps, "p", "2", 1, SR_PUT_MATCH, etag, etag2, err);
	su_rc_is(rc, 0, err, "compare-and-swap whose reply was lost: our own write");
	is_int(sr_store_get(direct, "p", 10, &buf, &len, NULL, err), 0, "get p");
	ok(len == 1 && memcmp(buf, "2", 1) == 0, "p holds 2");
	free(buf);
	sr_store_close(ps);

	/* a write that really lost, whose reply was lost too: still lost */
	is_int(sr_store_head(direct, "p", &info, err), 0, "head p");
	is_int(sr_store_put(direct, "p", "3", 1, SR_PUT_MATCH, info.etag, NULL, err), 0,
	    "another writer moves p to 3");
	su_proxy_fault(&px, "lose");
	ps = su_store_open(purl, 1);
	rc = sr_store_put(ps, "p", "4", 1, SR_PUT_MATCH, info.etag, NULL, err);
	is_int(rc, SR_STORE_PRECONDITION, "a stale compare-and-swap whose 412 was lost: lost race");
	want = sr_asprintf("put p: changed since etag %s (compare-and-swap lost the race)",
	    info.etag);
	is_str(err, want, "... with the lost-race message");
	free(want);
	sr_store_close(ps);
	su_proxy_fault(&px, "lose");
	ps = su_store_open(purl, 1);
	rc = sr_store_put(ps, "m1", "manifest two", 12, SR_PUT_CREATE, NULL, NULL, err);
	is_int(rc, SR_STORE_EXISTS, "a create-only put on a taken key whose 409 was lost: exists");
	is_str(err, "put m1: exists (create-only put lost the race)", "... with the message");
	is_int(sr_store_get(direct, "m1", 100, &buf, &len, NULL, err), 0, "get m1");
	ok(len == 12 && memcmp(buf, "manifest one", 12) == 0, "m1 keeps the first writer's bytes");
	free(buf);
	sr_store_close(ps);
	su_proxy_fault(&px, "pass");
}

static void
test_give_up(const char *data)
{
	struct sr_object_info info;
	char err[SR_ERRMAX], got[4096], *u;
	struct sr_store *bad;
	double t;
	int rc;

	t = sr_mono();
	rc = upload_under("reset after=100000 count=all", "up/failed", data, 3 * MiB, err);
	is_int(rc, -1, "every connection reset: the upload fails");
	ok(strncmp(err, "upload up/failed: part ", 23) == 0 && strstr(err, "(after retries)"),
	    "... naming the part, after its retries: %s", err);
	ok(sr_mono() - t < 30, "... within 30 s (%.1f s)", sr_mono() - t);
	is_int(sr_store_head(direct, "up/failed", &info, err), SR_STORE_NOTFOUND,
	    "... no blob is visible");
	au_uncommitted(container, "faults/up/", got, sizeof got);
	is_str(got, "", "... and the abort left no uncommitted blocks");

	/* an endpoint with nothing listening */
	u = sr_asprintf("az://%s/%s/faults?endpoint=http://127.0.0.1:1/%s&attempts=2",
	    su_env("SPOTRUN_TEST_AZ_ACCOUNT"), container, su_env("SPOTRUN_TEST_AZ_ACCOUNT"));
	bad = su_store_open(u, 1);
	t = sr_mono();
	is_int(sr_store_head(bad, "x", &info, err), SR_STORE_ERROR, "an unreachable endpoint");
	ok(strncmp(err, "head x: ", 8) == 0 && strstr(err, "127.0.0.1 port 1") != NULL &&
	    strstr(err, "(after retries)") != NULL, "... message: %s", err);
	ok(sr_mono() - t < 5, "... fails fast (%.1f s)", sr_mono() - t);
	sr_store_close(bad);
	free(u);
}

int
main(void)
{
	char *durl, *data;

	au_require();
	au_container_new(container, sizeof container, "t-az-faults");
	su_proxy_start_to(&px, su_env("SPOTRUN_TEST_AZ_ENDPOINT"), "pass");
	purl = sr_asprintf("az://%s/%s/faults?endpoint=http://127.0.0.1:%d/%s&block_size=1MiB&"
	    "concurrency=4&stall_timeout=2&attempts=5", su_env("SPOTRUN_TEST_AZ_ACCOUNT"),
	    container, px.port, su_env("SPOTRUN_TEST_AZ_ACCOUNT"));
	durl = sr_asprintf("az://%s/%s/faults?endpoint=%s", su_env("SPOTRUN_TEST_AZ_ACCOUNT"),
	    container, su_env("SPOTRUN_TEST_AZ_ENDPOINT"));
	direct = su_store_open(durl, 1);
	data = sr_malloc(6 * MiB);
	su_fill(data, 6 * MiB, 11);
	test_uploads(data, 6 * MiB);
	test_reads(data, 6 * MiB);
	test_lost_replies();
	test_give_up(data);
	sr_store_close(direct);
	su_proxy_stop(&px);
	au_container_rm(container);
	free(data);
	free(durl);
	free(purl);
	return tap_done();
}
