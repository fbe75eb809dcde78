/*
 * settings.h: the user's settings file, config.ini in $XDG_CONFIG_HOME/spotrun
 * (~/.config/spotrun without XDG_CONFIG_HOME), read by the fleet's
 * commands. It is optional; what it may hold:
 *
 *   [fleet]
 *   queue = s3://my-bucket/queue    ; the queue when neither --queue nor
 *                                   ; $SPOTRUN_QUEUE names one
 *   prices = /etc/spotrun/prices.ini  ; the agent's price table
 *   provider = local                ; the agent's machine: a provider's
 *                                   ; name (auto: found by probing)
 *
 * Anything else is an error naming the file, the line and the fix.
 */
#ifndef SR_SETTINGS_H
#define SR_SETTINGS_H

#include <stddef.h>

#define SR_SETTINGS_FILE_MAX (64 * 1024)

struct sr_settings {
	char *path;		/* the file read, or looked for; NULL: no home at all */
	int exists;		/* 1: it was there and was read */
	char *queue;		/* [fleet] queue: a store URL (a path made file://); NULL: unset */
	int queue_line;
	char *prices;		/* [fleet] prices: an absolute path; NULL: unset */
	int prices_line;
	char *provider;		/* [fleet] provider: a provider's name; NULL: unset */
	int provider_line;
};

/* The settings file's path into buf: $XDG_CONFIG_HOME/spotrun/config.ini
 * when XDG_CONFIG_HOME is an absolute path, else
 * $HOME/.config/spotrun/config.ini (HOME, or the password database's home
 * when HOME is not absolute). 0, or -1 when there is no home or the path
 * does not fit. */
int sr_settings_path(char *buf, size_t len);

/* Read the settings file into c (sr_settings_free): 0, also when there is no
 * such file (c->exists 0, nothing set); -1 with err "PATH:LINE: what is
 * wrong; the fix" for a file that is there but wrong or unreadable. */
int sr_settings_load(struct sr_settings *c, char *err);
/* The same from the len bytes at text, named path in messages. */
int sr_settings_parse(struct sr_settings *c, const char *path, const char *text, size_t len,
    char *err);
void sr_settings_free(struct sr_settings *c);

#endif
