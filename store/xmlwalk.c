/*
 * xmlwalk.c: the XML walker of xmlwalk.h. One small state over expat keeps
 * the path of open elements and the text of the innermost one, and hands
 * each closed element to the reader's function. Namespaces are not
 * expanded (S3 and Azure put every element in one default namespace), so
 * paths are plain local names.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <expat.h>

#include "util.h"
#include "xmlwalk.h"

#define PATH_MAX_LEN	256	/* deeper or longer paths are not ours */

struct walk {
	XML_Parser p;
	char path[PATH_MAX_LEN];
	size_t plen;
	size_t overflow;	/* elements open beyond what path holds */
	char text[SR_XML_TEXT_MAX + 1];
	size_t tlen;
	int text_cut;		/* the text was longer than SR_XML_TEXT_MAX */
	int (*end)(const char *path, const char *text, void *arg);
	void *arg;
	int stop;		/* what end returned, when it stopped */
};

static void XMLCALL
on_start(void *data, const XML_Char *name, const XML_Char **attrs)
{
	struct walk *w = data;
	size_t n = strlen(name);

	(void)attrs;
	w->tlen = 0;
	w->text_cut = 0;
	if (w->overflow > 0 || w->plen + n + 2 > sizeof w->path) {
		w->overflow++;
		return;
	}
	if (w->plen > 0)
		w->path[w->plen++] = '/';
	memcpy(w->path + w->plen, name, n + 1);
	w->plen += n;
}

static void XMLCALL
on_end(void *data, const XML_Char *name)
{
	struct walk *w = data;
	char *slash;
	int rc;

	(void)name;
	if (w->overflow > 0) {
		w->overflow--;
		return;
	}
	w->text[w->tlen] = '\0';
	rc = w->end(w->path, w->text_cut ? NULL : w->text, w->arg);
	if (rc != 0) {
		w->stop = rc;
		XML_StopParser(w->p, XML_FALSE);
		return;
	}
	w->tlen = 0;
	slash = strrchr(w->path, '/');
	w->plen = slash != NULL ? (size_t)(slash - w->path) : 0;
	w->path[w->plen] = '\0';
}

static void XMLCALL
on_text(void *data, const XML_Char *s, int len)
{
	struct walk *w = data;
	size_t n = (size_t)len;

	if (w->tlen + n > SR_XML_TEXT_MAX) {
		w->text_cut = 1;
		n = SR_XML_TEXT_MAX - w->tlen;
	}
	memcpy(w->text + w->tlen, s, n);
	w->tlen += n;
}

int
sr_xml_walk(const char *body, size_t len,
    int (*end)(const char *path, const char *text, void *arg), void *arg, char *err)
{
	struct walk *w = sr_try_calloc(1, sizeof *w, err);
	int rc = 0;

	if (w == NULL)
		return sr_err_prefix(err, "read reply");
	if ((w->p = XML_ParserCreate("UTF-8")) == NULL) {
		free(w);
		return sr_err_oom(err, "read reply: XML_ParserCreate");
	}
	w->end = end;
	w->arg = arg;
	XML_SetUserData(w->p, w);
	XML_SetElementHandler(w->p, on_start, on_end);
	XML_SetCharacterDataHandler(w->p, on_text);
	if (XML_Parse(w->p, body, (int)len, XML_TRUE) == XML_STATUS_ERROR) {
		if (w->stop != 0)
			rc = w->stop;
		else if (XML_GetErrorCode(w->p) == XML_ERROR_NO_MEMORY)
			rc = sr_err_oom(err, "read reply: expat");
		else
			rc = sr_err(err, "read reply: not XML: %s at line %lu",
			    XML_ErrorString(XML_GetErrorCode(w->p)),
			    (unsigned long)XML_GetCurrentLineNumber(w->p));
	}
	XML_ParserFree(w->p);
	free(w);
	return rc;
}

void
sr_xml_copy(char *dst, size_t cap, const char *text)
{
	snprintf(dst, cap, "%s", text != NULL ? text : "");
}

static int
error_end(const char *path, const char *text, void *arg)
{
	static const struct {
		const char *path;
		size_t off, cap;
	} fields[] = {
#define F(p, m) { "Error/" p, offsetof(struct sr_xml_error, m), \
	sizeof ((struct sr_xml_error *)0)->m }
		F("Code", code), F("Message", message), F("Region", region),
		F("ServerTime", server_time), F("RequestTime", request_time),
		F("AuthenticationErrorDetail", detail),
#undef F
	};
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(fields); i++)
		if (strcmp(path, fields[i].path) == 0)
			sr_xml_copy((char *)arg + fields[i].off, fields[i].cap, text);
	return 0;
}

int
sr_xml_error(const char *body, size_t len, struct sr_xml_error *e, char *err)
{
	char why[SR_ERRMAX];

	memset(e, 0, sizeof *e);
	if (len == 0)
		return 1;
	if (sr_xml_walk(body, len, error_end, e, why) != 0) {
		memset(e, 0, sizeof *e);
		if (sr_err_is_oom(why))
			return sr_err(err, "%s", why);
		return 1;
	}
	if (e->code[0] == '\0') {
		memset(e, 0, sizeof *e);
		return 1;
	}
	return 0;
}

struct list_state {
	const struct sr_xml_listing *sh;
	const char *base;
	int (*fn)(const struct sr_object_info *, void *);
	void *fn_arg;
	char key[SR_XML_TEXT_MAX + 1];
	int have_key;
	struct sr_object_info info;
	int truncated;
	char *next;
	int is_list;
	char err[SR_ERRMAX];
	int bad;
};

/* The path below root ("A/B" below "A" is "B"), or NULL. */
static const char *
below(const char *path, const char *root)
{
	size_t n = strlen(root);

	return strncmp(path, root, n) == 0 && path[n] == '/' ? path + n + 1 : NULL;
}

static int
list_end(const char *path, const char *text, void *arg)
{
	struct list_state *ls = arg;
	const struct sr_xml_listing *sh = ls->sh;
	const char *f;

	if (strcmp(path, sh->root) == 0) {
		ls->is_list = 1;
		return 0;
	}
	if ((path = below(path, sh->root)) == NULL)
		return 0;
	if (text == NULL) {
		snprintf(ls->err, sizeof ls->err, "read listing: <%s> is too long", path);
		ls->bad = 1;
		return -1;
	}
	if (sh->truncated != NULL && strcmp(path, sh->truncated) == 0)
		ls->truncated = strcmp(text, "true") == 0;
	else if (strcmp(path, sh->next) == 0) {
		free(ls->next);
		ls->next = NULL;
		if (text[0] != '\0' && (ls->next = sr_try_strdup(text, ls->err)) == NULL) {
			sr_err_prefix(ls->err, "read listing");
			ls->bad = 1;
			return -1;
		}
	} else if (strcmp(path, sh->entry) == 0) {
		size_t blen = strlen(ls->base);
		int rc = 0;

		if (!ls->have_key) {
			snprintf(ls->err, sizeof ls->err, "read listing: %s without <%s>",
			    sh->entry_noun, sh->key);
			ls->bad = 1;
			return -1;
		}
		if (strlen(ls->key) > blen && strncmp(ls->key, ls->base, blen) == 0) {
			ls->info.key = ls->key + blen;
			rc = ls->fn(&ls->info, ls->fn_arg);
		}
		memset(&ls->info, 0, sizeof ls->info);
		ls->have_key = 0;
		return rc;
	} else if ((f = below(path, sh->entry)) == NULL)
		return 0;
	else if (strcmp(f, sh->key) == 0) {
		sr_xml_copy(ls->key, sizeof ls->key, text);
		ls->have_key = 1;
	} else if (strcmp(f, sh->size) == 0)
		ls->info.size = strtoull(text, NULL, 10);
	else if (strcmp(f, sh->mtime) == 0) {
		double t = sr_xml_parse_iso8601(text);

		if (t < 0)
			t = (double)curl_getdate(text, NULL);
		ls->info.mtime = t < 0 ? 0 : t;
	} else if (strcmp(f, sh->etag) == 0) {
		size_t n = strlen(text);

		if (n >= 2 && text[0] == '"' && text[n - 1] == '"')
			snprintf(ls->info.etag, sizeof ls->info.etag, "%.*s", (int)n - 2, text + 1);
		else
			sr_xml_copy(ls->info.etag, sizeof ls->info.etag, text);
	}
	return 0;
}

int
sr_xml_list(const char *body, size_t len, const struct sr_xml_listing *shape,
    const char *base, int (*fn)(const struct sr_object_info *info, void *arg), void *arg,
    int *truncated, char **next, char *err)
{
	struct list_state *ls = sr_try_calloc(1, sizeof *ls, err);
	int rc;

	*truncated = 0;
	*next = NULL;
	if (ls == NULL)
		return sr_err_prefix(err, "read listing");
	ls->sh = shape;
	ls->base = base;
	ls->fn = fn;
	ls->fn_arg = arg;
	rc = sr_xml_walk(body, len, list_end, ls, err);
	if (shape->truncated == NULL)
		ls->truncated = ls->next != NULL;
	if (ls->bad)
		rc = sr_err(err, "%s", ls->err);
	else if (rc == 0 && !ls->is_list)
		rc = sr_err(err, "read listing: the reply is not a%s %s",
		    strchr("AEIOU", shape->root[0]) != NULL ? "n" : "", shape->root);
	else if (rc == 0 && ls->truncated && ls->next == NULL)
		rc = sr_err(err, "read listing: truncated without a %s", shape->next);
	if (rc == 0) {
		*truncated = ls->truncated;
		*next = ls->next;
		ls->next = NULL;
	}
	free(ls->next);
	free(ls);
	return rc;
}

double
sr_xml_parse_iso8601(const char *s)
{
	struct tm tm;
	const char *p;
	double frac = 0;

	memset(&tm, 0, sizeof tm);
	if (s == NULL || (p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) == NULL)
		return -1;
	if (*p == '.') {
		char *q;

		frac = strtod(p, &q);
		p = q;
	}
	if (strcmp(p, "Z") != 0 && strcmp(p, "+00:00") != 0)
		return -1;
	return (double)timegm(&tm) + frac;
}
