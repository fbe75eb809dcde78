/*
 * words.c: POSIX-shell-like word splitting for `command` (see words.h).
 * The job runs without a shell unless it asks for one, so this is where a
 * command line's quoting is interpreted; it follows sh(1)'s quoting rules
 * so that a line that works in a terminal means the same here.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "words.h"

struct wordbuf {
	char **v;		/* words so far, NULL-terminated */
	size_t n;
	char *cur;		/* the word being built */
	size_t len, cap;
	int in_word;		/* cur holds a word, even an empty one ('') */
};

static void
put_char(struct wordbuf *w, char c)
{
	if (w->len + 1 >= w->cap) {
		w->cap = w->cap ? w->cap * 2 : 32;
		w->cur = sr_realloc(w->cur, w->cap);
	}
	w->cur[w->len++] = c;
	w->cur[w->len] = '\0';
	w->in_word = 1;
}

static void
end_word(struct wordbuf *w)
{
	if (!w->in_word)
		return;
	w->v = sr_reallocarray(w->v, w->n + 2, sizeof *w->v);
	w->v[w->n++] = w->cur != NULL ? w->cur : sr_strdup("");
	w->v[w->n] = NULL;
	w->cur = NULL;
	w->len = w->cap = 0;
	w->in_word = 0;
}

/*
 * In strict mode: is the unquoted text at s (position i of the command)
 * something a shell would interpret? Fills err and returns -1 if so.
 */
static int
is_name_char(char c)
{
	return c == '_' || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
	    (c >= 'a' && c <= 'z');
}

/*
 * In strict mode: is the unquoted text at s[i] something a shell would
 * interpret? Fills err and returns -1 if so. word_start: s[i] begins a word.
 */
static int
check_special(const char *s, size_t i, int word_start, char *err)
{
	size_t n;
	char c = s[i], next = s[i + 1];

	if (c == '$' && (next == '{' || next == '(' || is_name_char(next) ||
	    (next != '\0' && strchr("?$!@*#-", next) != NULL))) {
		if (next == '{' || next == '(')
			n = strcspn(s + i, next == '{' ? "}" : ")") + 1;
		else if (is_name_char(next) && !(next >= '0' && next <= '9'))
			for (n = 1; is_name_char(s[i + n]); n++)
				;
		else
			n = 2;
		if (n > strlen(s + i))
			n = strlen(s + i);	/* a "${" or "$(" without its end */
		if (n > 40)
			n = 40;
		while (n > 1 && ((unsigned char)s[i + n] & 0xc0) == 0x80)
			n--;	/* never cut a UTF-8 character in two */
		return sr_err(err, "%.*s is not expanded without a shell; set shell = yes, "
		    "or write '%.*s' to pass it literally", (int)n, s + i, (int)n, s + i);
	}
	if (c == '`')
		return sr_err(err, "` at character %zu (command substitution) needs a shell; "
		    "set shell = yes, or write \\` for a literal backquote", i + 1);
	if (strchr("|&;<>()", c) != NULL)
		return sr_err(err, "'%c' at character %zu means something only to a shell, "
		    "and none runs this command; set shell = yes, or quote it", c, i + 1);
	if (c == '~' && word_start)
		return sr_err(err, "~ at character %zu is not expanded without a shell; "
		    "write the full path, or set shell = yes", i + 1);
	if (c == '#' && word_start)
		return sr_err(err, "# at character %zu starts a comment only in a shell; "
		    "remove it, quote it, or set shell = yes", i + 1);
	return 0;
}

int
sr_words_split(const char *s, int flags, char ***argv, size_t *argc, char *err)
{
	struct wordbuf w = { 0 };
	size_t i, open;
	int strict = (flags & SR_WORDS_STRICT) != 0;

	for (i = 0; s[i] != '\0'; i++) {
		char c = s[i];

		if (c == ' ' || c == '\t') {
			end_word(&w);
			continue;
		}
		if (c == '\\') {
			if (s[i + 1] == '\0') {
				sr_err(err, "ends with a backslash; remove it, or write \\\\ "
				    "for a literal backslash");
				goto fail;
			}
			put_char(&w, s[++i]);
			continue;
		}
		if (c == '\'') {
			open = i;
			w.in_word = 1;
			for (i++; s[i] != '\'' && s[i] != '\0'; i++)
				put_char(&w, s[i]);
			if (s[i] == '\0') {
				sr_err(err, "unterminated single quote at character %zu; "
				    "close it, or write \\' for a literal quote", open + 1);
				goto fail;
			}
			continue;
		}
		if (c == '"') {
			open = i;
			w.in_word = 1;
			for (i++; s[i] != '"' && s[i] != '\0'; i++) {
				if (s[i] == '\\' && s[i + 1] != '\0' &&
				    strchr("\"\\$`", s[i + 1]) != NULL)
					i++;
				else if (strict && (s[i] == '$' || s[i] == '`') &&
				    check_special(s, i, 0, err) == -1)
					goto fail;
				put_char(&w, s[i]);
			}
			if (s[i] == '\0') {
				sr_err(err, "unterminated double quote at character %zu; "
				    "close it, or write \\\" for a literal quote", open + 1);
				goto fail;
			}
			continue;
		}
		if (strict && check_special(s, i, !w.in_word, err) == -1)
			goto fail;
		put_char(&w, c);
	}
	end_word(&w);
	if (w.v == NULL)
		w.v = sr_calloc(1, sizeof *w.v);
	*argv = w.v;
	if (argc != NULL)
		*argc = w.n;
	return 0;

fail:
	free(w.cur);
	sr_words_free(w.v);
	return -1;
}

void
sr_words_free(char **argv)
{
	size_t i;

	if (argv == NULL)
		return;
	for (i = 0; argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
}
