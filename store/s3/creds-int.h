/*
 * creds-int.h: the pieces under creds.c: the INI files the AWS CLI and
 * gsutil read (creds-ini.c) and the EC2 instance role from IMDSv2
 * (creds-imds.c). Internal to store/s3/.
 */
#ifndef SR_CREDS_INT_H
#define SR_CREDS_INT_H

#include "creds.h"

/* One parsed INI file (configparser's reading of it). */
struct sr_ini;

/*
 * Parse the file at path. A missing file (ENOENT, ENOTDIR) is no error:
 * *out then holds an empty file whose sr_ini_exists is 0. Otherwise -1 with
 * err "read PATH:LINE: reason" (or "read PATH: reason" for I/O errors and
 * files over 4 MiB); the reason never quotes the line, which may hold a
 * secret. Keys are lower-cased, as configparser does; an indented
 * "sub = value" under a key with an empty value (the CLI's nested
 * settings, `s3 =` / `  endpoint_url = URL`) becomes key "parent.sub".
 * Thread-safe (inih runs under common/'s lock: sr_ini_parse_stream).
 */
int sr_ini_load(const char *path, struct sr_ini **out, char *err);
int sr_ini_exists(const struct sr_ini *f);
const char *sr_ini_path(const struct sr_ini *f);
/* Whether [section] appears (section names are case-sensitive). */
int sr_ini_has_section(const struct sr_ini *f, const char *section);
/* key's value in [section] (key matched without regard to case), or NULL. */
const char *sr_ini_get(const struct sr_ini *f, const char *section, const char *key);
/* key's line in [section], or 0 when absent. */
int sr_ini_line(const struct sr_ini *f, const char *section, const char *key);
/* Free f, wiping the values (they may be secrets). NULL is fine. */
void sr_ini_free(struct sr_ini *f);

#define SR_IMDS_CONNECT_TIMEOUT	1.0	/* seconds, as the AWS CLI */
#define SR_IMDS_TIMEOUT		2.0	/* seconds per request */

/*
 * Fetch the instance role's credentials from IMDSv2 at base (no trailing
 * '/'): a token, the role name, then its JSON. 0 with out filled (source
 * "instance role NAME", expires from Expiration), or -1 with err saying
 * which request failed and how ("GET URL: HTTP status 404 (no IAM role is
 * attached to this instance)"); never quotes a secret.
 */
int sr_imds_role_creds(const char *base, struct sr_creds *out, char *err);

#endif
