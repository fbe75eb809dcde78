/*
 * credcache.c: the credentials cache of credcache.h: one lock over the
 * current credentials, when they are due for a refresh, and whether the
 * server rejected them; the family's resolver runs under it, so that
 * concurrent requests wait for one resolution and share its result.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "credcache.h"
#include "util.h"

#define REFRESH_BEFORE	300.0	/* seconds before the end a refresh is due */
#define RETRY_EVERY	10.0	/* seconds between tries while the old ones hold */

struct sr_creds_chain {
	int (*resolve)(void *arg, struct sr_creds *out, char *err);
	void *arg;
	void (*free_arg)(void *arg);
	pthread_mutex_t lock;		/* over everything below */
	int have;			/* cur holds credentials */
	int stale;			/* rejected: resolve again */
	struct sr_creds cur;
	/* Wall clock from which a refresh is tried: REFRESH_BEFORE ahead of
	 * the end, or RETRY_EVERY after a failed try or after credentials
	 * that came already that close to their end. */
	double next_try;
	unsigned long resolutions;
};

struct sr_creds_chain *
sr_creds_chain_make(int (*resolve)(void *arg, struct sr_creds *out, char *err), void *arg,
    void (*free_arg)(void *arg), char *err)
{
	struct sr_creds_chain *c = sr_try_calloc(1, sizeof *c, err);

	if (c != NULL && pthread_mutex_init(&c->lock, NULL) != 0) {
		sr_err(err, "pthread_mutex_init failed");
		free(c);
		c = NULL;
	}
	if (c == NULL) {
		if (free_arg != NULL)
			free_arg(arg);
		sr_err_prefix(err, "create a credentials chain");
		return NULL;
	}
	c->resolve = resolve;
	c->arg = arg;
	c->free_arg = free_arg;
	return c;
}

int
sr_creds_get(struct sr_creds_chain *c, struct sr_creds *out, char *err)
{
	struct sr_creds *fresh;
	double now;
	int r = 0;

	pthread_mutex_lock(&c->lock);
	now = sr_now();
	if (c->have && !c->stale && (c->cur.expires == 0 ||
	    (now < c->cur.expires && now < c->next_try))) {
		*out = c->cur;
		goto unlock;
	}
	/* Resolve (again): the first use, rejected keys, or role keys near
	 * their end. The others wait on the lock and share the result. */
	if ((fresh = sr_try_malloc(sizeof *fresh, err)) == NULL) {
		/* no resolution, and no fallback to what is held: this is no
		 * verdict on the credentials */
		sr_err_prefix(err, "get credentials");
		r = -1;
		goto unlock;
	}
	c->resolutions++;
	memset(fresh, 0, sizeof *fresh);
	if (c->resolve(c->arg, fresh, err) == 0) {
		c->cur = *fresh;
		c->have = 1;
		c->stale = 0;
		c->next_try = fresh->expires - REFRESH_BEFORE > now ?
		    fresh->expires - REFRESH_BEFORE : now + RETRY_EVERY;
		*out = c->cur;
	} else if (c->have && !c->stale && now < c->cur.expires) {
		/* The refresh failed, but the old keys still hold. */
		c->next_try = now + RETRY_EVERY;
		*out = c->cur;
	} else {
		c->have = 0;
		sr_creds_wipe(&c->cur);
		r = -1;
	}
	sr_creds_wipe(fresh);
	free(fresh);
unlock:
	pthread_mutex_unlock(&c->lock);
	return r;
}

void
sr_creds_invalidate(struct sr_creds_chain *c)
{
	pthread_mutex_lock(&c->lock);
	c->stale = 1;
	pthread_mutex_unlock(&c->lock);
}

void
sr_creds_reject(struct sr_creds_chain *c, const struct sr_creds *rejected)
{
	pthread_mutex_lock(&c->lock);
	if (c->have && strcmp(c->cur.access_key, rejected->access_key) == 0 &&
	    strcmp(c->cur.session_token, rejected->session_token) == 0)
		c->stale = 1;
	pthread_mutex_unlock(&c->lock);
}

unsigned long
sr_creds_resolutions(struct sr_creds_chain *c)
{
	unsigned long n;

	pthread_mutex_lock(&c->lock);
	n = c->resolutions;
	pthread_mutex_unlock(&c->lock);
	return n;
}

void
sr_creds_chain_free(struct sr_creds_chain *c)
{
	if (c == NULL)
		return;
	sr_creds_wipe(&c->cur);
	pthread_mutex_destroy(&c->lock);
	if (c->free_arg != NULL)
		c->free_arg(c->arg);
	free(c);
}

int
sr_creds_none_found(char *err, const char *what, const char *tried, const char *fix)
{
	size_t fixed = strlen(what) + strlen(": none found; tried ; ") + strlen(fix);
	size_t room = SR_ERRMAX - 1 > fixed + 3 ? SR_ERRMAX - 1 - fixed : 3;
	size_t n = strlen(tried);

	if (n <= room)
		return sr_err(err, "%s: none found; tried %s; %s", what, tried, fix);
	return sr_err(err, "%s: none found; tried %.*s...; %s", what, (int)(room - 3),
	    tried, fix);
}

const char *
sr_creds_env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? v : NULL;
}

int
sr_creds_copy(char *dst, size_t len, const char *v)
{
	size_t n = strlen(v);

	if (n >= len)
		return -1;
	memcpy(dst, v, n + 1);
	return 0;
}

const char *
sr_creds_shown(const char *s, size_t max, char *buf, size_t len)
{
	size_t i, n = 0;

	for (i = 0; s[i] != '\0' && i < max && n + 4 < len; i++)
		buf[n++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (s[i] != '\0' && n + 4 < len) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
	return buf;
}
