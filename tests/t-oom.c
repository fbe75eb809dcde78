/*
 * t-oom.c: the out-of-memory injection of tests/oom.c (what the other OOM
 * trials stand on) and common/util's fallible allocation (sr_try_*), whose
 * failures the job-side library returns instead of dying; then common/'s
 * own functions under OOM (tests/oom-trial.h): the file helpers of util.c,
 * and an IMDS token and a GET through http.c against tests/mdemu.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <sys/stat.h>

#include "http.h"
#include "imds.h"
#include "oom.h"
#include "tap.h"
#include "oom-trial.h"
#include "mdemu-util.h"
#include "util.h"

/* Where a pointer escapes to, so that the compiler keeps its allocation. */
void *volatile sink;

/* ---- common/'s functions under OOM ---- */

struct files {
	char dir[64], path[128], deep[160];
	const char *want, *was;
	struct oom_buf got;
};

/* Whether f->path holds exactly content, with no temp file beside it. */
static int
file_holds(struct files *f, const char *content, char *why)
{
	char err[SR_ERRMAX], *buf = NULL;
	struct dirent *de;
	size_t len = 0;
	int n = 0, good;
	DIR *d;

	good = sr_read_file(f->path, 1 << 20, &buf, &len, err) == 0 &&
	    len == strlen(content) && memcmp(buf, content, len) == 0;
	free(buf);
	if (!good)
		return snprintf(why, SR_ERRMAX, "%s does not hold \"%s\"", f->path, content), 0;
	if ((d = opendir(f->dir)) != NULL) {
		while ((de = readdir(d)) != NULL)
			n += de->d_name[0] != '.';
		closedir(d);
	}
	if (n != 1)
		return snprintf(why, SR_ERRMAX, "%d files in %s, not 1", n, f->dir), 0;
	return 1;
}

static int
run_write_atomic(void *arg, char *err)
{
	struct files *f = arg;

	return sr_write_file_atomic(f->path, f->want, strlen(f->want), 0, err);
}

static int
check_write_atomic(void *arg, int rc, char *why)
{
	struct files *f = arg;

	return file_holds(f, rc == 0 ? f->want : f->was, why);
}

static void
reset_write_atomic(void *arg)
{
	struct files *f = arg;
	char err[SR_ERRMAX];

	if (sr_write_file_atomic(f->path, f->was, strlen(f->was), 0, err) != 0)
		sr_fatal("%s", err);
}

static int
run_read(void *arg, char *err)
{
	struct files *f = arg;

	return sr_read_file(f->path, 1 << 20, &f->got.buf, &f->got.len, err);
}

static int
check_read(void *arg, int rc, char *why)
{
	struct files *f = arg;

	return oom_buf_check(&f->got, rc, f->was, why);
}

static void
reset_read(void *arg)
{
	struct files *f = arg;

	oom_buf_free(&f->got);
}

static int
run_mkdirs(void *arg, char *err)
{
	struct files *f = arg;

	return sr_mkdirs(f->deep, 0777, err);
}

static int
check_mkdirs(void *arg, int rc, char *why)
{
	struct files *f = arg;
	struct stat sb;
	int there = stat(f->deep, &sb) == 0 && S_ISDIR(sb.st_mode);

	if (rc == 0 && !there)
		return snprintf(why, SR_ERRMAX, "%s is not a directory", f->deep), 0;
	return 1;
}

/* The tree of f->deep: made by run_mkdirs, gone after run_rmtree. */
static void
reset_tree(void *arg)
{
	struct files *f = arg;
	char err[SR_ERRMAX], top[160];

	snprintf(top, sizeof top, "%s/t", f->dir);
	if (sr_rmtree(top, err) != 0)
		sr_fatal("%s", err);
}

static int
run_rmtree(void *arg, char *err)
{
	struct files *f = arg;
	char top[160];

	snprintf(top, sizeof top, "%s/t", f->dir);
	return sr_rmtree(top, err);
}

static int
check_rmtree(void *arg, int rc, char *why)
{
	struct files *f = arg;
	char top[160];
	struct stat sb;

	snprintf(top, sizeof top, "%s/t", f->dir);
	if (rc == 0 && lstat(top, &sb) == 0)
		return snprintf(why, SR_ERRMAX, "%s is still there", top), 0;
	return 1;
}

static void
remake_tree(void *arg)
{
	struct files *f = arg;
	char err[SR_ERRMAX];

	reset_tree(arg);
	if (sr_mkdirs(f->deep, 0777, err) != 0)
		sr_fatal("%s", err);
}

/* An IMDS session: the token, then a GET carrying it with a reply header
 * captured (http.c's every allocation: URL, headers, body, captures). */
struct imds_run {
	struct sr_imds m;
	struct sr_http_resp resp;
};

static int
run_imds(void *arg, char *err)
{
	struct imds_run *r = arg;
	static const char *const capture[] = { "Content-Type", NULL };
	char tok[256], hdr[300], url[128];
	const char *headers[] = { hdr, NULL };
	struct sr_http_req req = { .method = "GET", .url = url, .headers = headers,
		.connect_timeout = 2, .timeout = 5, .capture = capture };

	if (sr_imds_token(&r->m, 60, 0, tok, sizeof tok, err) != 0)
		return -1;
	snprintf(hdr, sizeof hdr, "X-aws-ec2-metadata-token: %s", tok);
	snprintf(url, sizeof url, "%s/latest/meta-data/instance-id", r->m.base);
	return sr_http_do(&req, &r->resp, err);
}

static int
check_imds(void *arg, int rc, char *why)
{
	struct imds_run *r = arg;

	if (rc == 0 && (r->resp.status != 200 || r->resp.body == NULL ||
	    strcmp(r->resp.body, "i-0123456789abcdef0") != 0 || r->resp.captured[0] == NULL ||
	    strcmp(r->resp.captured[0], "text/plain") != 0))
		return snprintf(why, SR_ERRMAX, "status %ld, body %s", r->resp.status,
		    r->resp.body != NULL ? r->resp.body : "(none)"), 0;
	if (rc != 0 && (r->resp.body != NULL || r->resp.status != 0))
		return snprintf(why, SR_ERRMAX, "a reply handed out on failure"), 0;
	return 1;
}

static void
reset_imds(void *arg)
{
	struct imds_run *r = arg;

	sr_http_resp_free(&r->resp);
}

static void
test_common(void)
{
	struct files f = { .want = "the new content", .was = "the old content" };
	struct imds_run r;
	struct emu e;
	char err[SR_ERRMAX], *big;
	size_t i;

	snprintf(f.dir, sizeof f.dir, "%s/t-oom.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(f.dir) == NULL)
		sr_fatal("mkdtemp: %s", strerror(errno));
	snprintf(f.path, sizeof f.path, "%s/file", f.dir);
	reset_write_atomic(&f);
	oom_trial("sr_write_file_atomic", OOM_ALL, run_write_atomic, check_write_atomic,
	    reset_write_atomic, &f);

	/* 10000 bytes: the buffer grows twice */
	big = sr_malloc(10001);
	for (i = 0; i < 10000; i++)
		big[i] = (char)('a' + i % 26);
	big[10000] = '\0';
	f.was = big;
	reset_write_atomic(&f);
	oom_trial("sr_read_file", OOM_ALL, run_read, check_read, reset_read, &f);

	snprintf(f.deep, sizeof f.deep, "%s/t/a/b/c", f.dir);
	oom_trial("sr_mkdirs", OOM_ALL, run_mkdirs, check_mkdirs, reset_tree, &f);
	remake_tree(&f);
	oom_trial("sr_rmtree", OOM_ALL, run_rmtree, check_rmtree, remake_tree, &f);
	reset_tree(&f);

	if (sr_http_init(err) != 0)
		sr_fatal("%s", err);
	emu_start(&e, f.dir, NULL);
	memset(&r, 0, sizeof r);
	r.m.base = e.url;
	r.m.connect_timeout = 2;
	r.m.timeout = 5;
	oom_trial("an IMDS token and a GET (sr_imds_token, sr_http_do)", OOM_OURS, run_imds,
	    check_imds, reset_imds, &r);
	emu_stop(&e);
	sr_http_cleanup();
	free(big);
	sr_rmtree(f.dir, err);
}

/* ---- the leak check of tests/oom-trial.h itself ---- */

struct leaky {
	int leak;		/* leak 32 bytes when the allocation fails */
	int grow_runs;		/* a cache that grows in so many runs, then holds */
	int runs;
	char *cache[8];
};

static int
run_leaky(void *arg, char *err)
{
	struct leaky *l = arg;
	char *keep = NULL, *p;

	/* the C library's allocations, neither counted nor failed under
	 * OOM_OURS: only sr_try_malloc's is */
	if (l->runs < l->grow_runs && l->runs < 8)
		l->cache[l->runs] = strdup("a cache entry of forty bytes or so.....");
	l->runs++;
	if (l->leak)
		keep = strdup("twenty-odd bytes, leaked");	/* 40 usable */
	if ((p = sr_try_malloc(16, err)) == NULL) {
		sink = keep;	/* the failure path forgets keep: the leak */
		return -1;
	}
	free(p);
	free(keep);
	return 0;
}

static int
check_leaky(void *arg, int rc, char *why)
{
	(void)arg;
	(void)rc;
	(void)why;
	return 1;
}

static void
test_leak_check(void)
{
	struct leaky l;
	char why[SR_ERRMAX];
	struct oom_trial t = { "a leaky call", OOM_OURS, run_leaky, check_leaky, NULL, &l };
	int i;

	memset(&l, 0, sizeof l);
	l.leak = 1;
	is_int(oom_trial_leak(&t, 1, 0, why), -1, "the leak check: a block lost on a failure "
	    "path is a leak");
	ok(strstr(why, "5 runs in a row grew by 40, 40, 40, 40, 40 bytes") != NULL,
	    "the leak check: it says each run's growth (%s)", why);
	is_int(l.runs, OOM_TRIAL_RUNS, "the leak check: the trial run 5 times");
	memset(&l, 0, sizeof l);
	l.grow_runs = OOM_TRIAL_RUNS - 1;
	is_int(oom_trial_leak(&t, 1, 0, why), 0, "the leak check: a cache that grows in 4 runs "
	    "in a row, then holds, is no leak");
	for (i = 0; i < 8; i++)
		free(l.cache[i]);
	memset(&l, 0, sizeof l);
	l.grow_runs = OOM_TRIAL_RUNS;
	is_int(oom_trial_leak(&t, 1, 0, why), -1, "the leak check: one that grows in all 5 is "
	    "told");
	for (i = 0; i < 8; i++)
		free(l.cache[i]);
}

/* Whether the mapping holding p may have transparent huge pages
 * (/proc/self/smaps' THPeligible): 1, 0, or -1 when smaps says nothing. */
static int
thp_eligible(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	uintptr_t lo, hi, at = (uintptr_t)p;
	int in = 0, v = -1, e;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2 && strchr(line, '-') <
		    strchr(line, ' '))
			in = at >= lo && at < hi;
		else if (in && sscanf(line, "THPeligible: %d", &e) == 1) {
			v = e;
			break;
		}
	}
	fclose(f);
	return v;
}

/* sr_try_bigbuf: page-aligned; from SR_BIG_MIN up (and as much expected to
 * be touched) on a 2 MiB boundary and advised for huge pages (where THP is
 * not "never"); NULL with the error. */
static void
big_buffers(void)
{
	char err[SR_ERRMAX], mode[128] = "";
	uint8_t *small, *big, *light;
	FILE *f;

	oom_arm(1, 0, OOM_ALL);
	big = sr_try_bigbuf(3 << 20, 3 << 20, err);
	oom_disarm();
	ok(big == NULL, "sr_try_bigbuf: NULL out of memory");
	is_str(err, "allocate 3145728 bytes: out of memory", "sr_try_bigbuf: the message");
	small = sr_try_bigbuf(5000, 5000, err);
	big = sr_try_bigbuf((3 << 20) + 1, (3 << 20) + 1, err);
	light = sr_try_bigbuf((3 << 20) + 1, 5000, err);
	ok(small != NULL && ((uintptr_t)small & 4095) == 0, "sr_try_bigbuf: small, page-aligned");
	ok(big != NULL && ((uintptr_t)big & ((2 << 20) - 1)) == 0,
	    "sr_try_bigbuf: large, on a 2 MiB boundary");
	ok(light != NULL && ((uintptr_t)light & 4095) == 0,
	    "sr_try_bigbuf: large but little of it to be touched, page-aligned");
	if (small != NULL && big != NULL && light != NULL) {
		memset(small, 1, 5000);
		memset(big, 2, (3 << 20) + 1);
		memset(light, 3, (3 << 20) + 1);	/* all of it usable all the same */
	}
	if ((f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r")) != NULL) {
		if (fgets(mode, sizeof mode, f) == NULL)
			mode[0] = '\0';
		fclose(f);
	}
	if (mode[0] == '\0' || strstr(mode, "[never]") != NULL)
		tap_skip("sr_try_bigbuf: huge pages (transparent huge pages are off here)");
	else
		is_int(big != NULL ? thp_eligible(big) : -2, 1,
		    "sr_try_bigbuf: its mapping may have huge pages (THP %.*s)",
		    (int)strcspn(mode, "\n"), mode);
	/* not advised: eligible only where THP is "always" */
	if (strstr(mode, "[madvise]") == NULL)
		tap_skip("sr_try_bigbuf: little to be touched, no huge pages (THP is not "
		    "\"madvise\" here)");
	else
		is_int(light != NULL ? thp_eligible(light) : -2, 0,
		    "sr_try_bigbuf: little to be touched, no huge pages (THP %.*s)",
		    (int)strcspn(mode, "\n"), mode);
	free(small);
	free(big);
	free(light);
}

int
main(void)
{
	char err[SR_ERRMAX], *s, *p, *q;
	void *v;
	size_t before, after;
	long n;
	int e;

	no_cloud();
	if (!oom_usable())
		tap_skip_all("AddressSanitizer owns malloc: no injection in this build");

	/* The replacement itself. */
	oom_arm(2, 0, OOM_ALL);
	p = malloc(10);
	errno = 0;
	q = malloc(10);
	e = errno;
	v = malloc(10);
	n = oom_disarm();
	ok(p != NULL && q == NULL && e == ENOMEM, "the 2nd allocation fails with ENOMEM");
	ok(v != NULL, "the 3rd is made again (not persistent)");
	is_int(n, 3, "three allocations counted");
	is_int(oom_failures(), 1, "one failed");
	free(p);
	free(v);
	oom_arm(2, 1, OOM_ALL);
	p = malloc(1);
	q = calloc(2, 8);
	v = realloc(NULL, 4);
	oom_disarm();
	ok(p != NULL && q == NULL && v == NULL, "persistent: every one from the 2nd fails");
	is_int(oom_failures(), 2, "two failed");
	free(p);
	oom_arm(1, 0, OOM_ALL);
	s = strdup("abc");
	oom_disarm();
	ok(s == NULL, "the C library's own allocations go through it (strdup)");
	oom_arm(1, 0, OOM_OURS);
	s = strdup("abc");
	n = oom_disarm();
	ok(s != NULL && n == 0, "OOM_OURS: the C library's allocation is not counted");
	free(s);
	oom_arm(1, 0, OOM_OURS);
	s = sr_try_strdup("abc", err);
	n = oom_disarm();
	ok(s == NULL && n == 1, "OOM_OURS: spotrun's code's allocation fails");
	before = oom_in_use();
	p = malloc(100000);
	memset(p, 1, 100000);
	sink = p;	/* seen: the compiler may not drop the pair */
	after = oom_in_use();
	ok(after >= before + 100000, "oom_in_use counts a live allocation");
	if (after < before + 100000)
		tap_diag("in use %zu, then %zu", before, after);
	free(p);
	is_int((long)(oom_in_use() - before), 0, "and not once it is freed");

	/* sr_try_*: NULL with the error, never a death. */
	oom_arm(1, 0, OOM_ALL);
	v = sr_try_malloc(10, err);
	oom_disarm();
	ok(v == NULL, "sr_try_malloc: NULL");
	is_str(err, "allocate 10 bytes: out of memory", "sr_try_malloc: the message");
	ok(sr_err_is_oom(err), "sr_err_is_oom: yes");
	sr_err_prefix(err, "save job/1");
	ok(sr_err_is_oom(err), "sr_err_is_oom: through a prefix");
	sr_err(err, "read LATEST: no such file");
	ok(!sr_err_is_oom(err), "sr_err_is_oom: not another failure");
	ok(!sr_err_is_oom(NULL), "sr_err_is_oom: not NULL");
	oom_arm(1, 0, OOM_ALL);
	v = sr_try_calloc(3, 8, err);
	oom_disarm();
	ok(v == NULL, "sr_try_calloc: NULL");
	is_str(err, "allocate 3 x 8 bytes: out of memory", "sr_try_calloc: the message");
	v = sr_try_calloc(SIZE_MAX / 2, 4, err);
	ok(v == NULL && sr_err_is_oom(err), "sr_try_calloc: an overflowing size fails");
	is_str(err, "allocate 9223372036854775807 x 4 bytes: out of memory (the size overflows)",
	    "sr_try_calloc: and says so");
	big_buffers();
	p = sr_try_malloc(4, err);
	memcpy(p, "abc", 4);
	oom_arm(1, 0, OOM_ALL);
	q = sr_try_reallocarray(p, 100, 10, err);
	oom_disarm();
	ok(q == NULL && strcmp(p, "abc") == 0, "sr_try_reallocarray: NULL, the old block kept");
	is_str(err, "allocate 1000 bytes: out of memory", "sr_try_reallocarray: the message");
	q = sr_try_reallocarray(p, SIZE_MAX / 8, 16, err);
	ok(q == NULL && strcmp(p, "abc") == 0 && sr_err_is_oom(err),
	    "sr_try_reallocarray: overflow fails, the old block kept");
	q = sr_try_reallocarray(p, 0, 16, err);
	ok(q != NULL, "sr_try_reallocarray: a zero size is one byte, not a free");
	free(q);
	oom_arm(1, 0, OOM_ALL);
	s = sr_try_strndup("abcdef", 3, err);
	oom_disarm();
	ok(s == NULL && sr_err_is_oom(err), "sr_try_strndup: NULL with the error");
	s = sr_try_strndup("abcdef", 3, err);
	is_str(s, "abc", "sr_try_strndup: the first n bytes");
	free(s);
	s = sr_try_strndup("ab", 30, err);
	is_str(s, "ab", "sr_try_strndup: a shorter string whole");
	free(s);
	oom_arm(1, 0, OOM_ALL);
	s = sr_try_asprintf(err, "%s-%d", "step", 42);
	oom_disarm();
	ok(s == NULL, "sr_try_asprintf: NULL");
	is_str(err, "allocate 8 bytes: out of memory", "sr_try_asprintf: the message");
	s = sr_try_asprintf(err, "%s-%d", "step", 42);
	is_str(s, "step-42", "sr_try_asprintf: the string");
	free(s);
	sr_err_oom(err, "json_dumps of the manifest");
	is_str(err, "json_dumps of the manifest: out of memory", "sr_err_oom: the message");
	ok(sr_err_is_oom(err), "sr_err_oom: is out-of-memory");
	test_leak_check();
	test_common();
	return tap_done();
}
