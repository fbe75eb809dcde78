/*
 * credcache.h: the credentials a network store signs with, and the cache
 * in front of where they come from. A family (the S3 family's chain in
 * store/s3/creds.c, Azure's in store/azure/az-creds.c) gives the function
 * that resolves them from its sources; the cache hands out copies to every
 * request, resolves once on first use, refreshes credentials that expire
 * (instance roles, managed-identity tokens) 5 minutes before their end,
 * and resolves again after the server rejected them, once for all the
 * requests that were refused with the same ones.
 *
 * No function here prints or returns a secret in a message: the `source`
 * field and every error name where credentials came from, never them.
 */
#ifndef SR_CREDCACHE_H
#define SR_CREDCACHE_H

#include <string.h>

struct sr_creds {
	char access_key[128];		/* S3: the access key id; Azure: the account */
	char secret_key[128];		/* S3: the secret key; Azure: the base64 account key */
	char session_token[8192];	/* S3: the session token; Azure: a SAS or an
					 * OAuth bearer token; "" when none */
	int form;			/* the family's: which kind of secret this is */
	double expires;			/* epoch seconds; 0: never */
	char source[256];		/* where they came from, for messages; never the secret */
};

struct sr_creds_chain;

/* A cache over resolve, which fills out (zeroed; source too) from the
 * family's sources, or returns -1 with err naming every source tried and
 * the fix. arg goes to resolve and, when the chain is freed, to free_arg
 * (may be NULL). Nothing is resolved until the first sr_creds_get. NULL
 * with err on OOM, arg then freed at once (free_arg). */
struct sr_creds_chain *sr_creds_chain_make(int (*resolve)(void *arg, struct sr_creds *out,
    char *err), void *arg, void (*free_arg)(void *arg), char *err);

/*
 * Current credentials (copied into *out), resolving on first use and
 * refreshing expiring ones within 5 minutes of their end. While the old
 * ones still hold, a refresh that fails returns them, and is tried again
 * 10 s later (as are credentials that came with less than 5 minutes to
 * live). Thread-safe: one resolution at a time; the other callers wait for
 * it and share its result. 0, or -1 with resolve's err.
 */
int sr_creds_get(struct sr_creds_chain *c, struct sr_creds *out, char *err);

/* The server rejected the credentials: the next sr_creds_get resolves
 * again. Thread-safe. */
void sr_creds_invalidate(struct sr_creds_chain *c);

/* Like sr_creds_invalidate, but only while the chain still holds the
 * credentials that were rejected (same access key and token): when many
 * requests fail at once with the same old ones, one refetch follows, not
 * one per request. */
void sr_creds_reject(struct sr_creds_chain *c, const struct sr_creds *rejected);

/* How many times c resolved its sources (fetches, refreshes included). */
unsigned long sr_creds_resolutions(struct sr_creds_chain *c);

void sr_creds_chain_free(struct sr_creds_chain *c);

/* For resolvers: "WHAT: none found; tried TRIED; FIX" into err, TRIED
 * (the sources and why each gave nothing) shortened to fit; -1. */
int sr_creds_none_found(char *err, const char *what, const char *tried, const char *fix);

/* For resolvers: an environment variable, NULL when unset or empty (as
 * the clouds' CLIs read them). */
const char *sr_creds_env(const char *name);
/* Copy v into dst (len bytes): 0, or -1 when it does not fit. */
int sr_creds_copy(char *dst, size_t len, const char *v);
/* A setting or reply field fit to quote (never a secret): printable ASCII
 * (others as '?'), cut to max characters with "..." after, into buf. */
const char *sr_creds_shown(const char *s, size_t max, char *buf, size_t len);

/* Wipe a credentials copy (explicit_bzero), e.g. before freeing it.
 * Inline, so that the pieces under a chain can wipe what they fill
 * without depending on the chain. */
static inline void
sr_creds_wipe(struct sr_creds *cr)
{
	explicit_bzero(cr, sizeof *cr);
}

#endif
