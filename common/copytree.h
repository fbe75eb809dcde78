/*
 * copytree.h: a directory tree copied into a new one, bytes, modes and
 * modification times as they are, symlinks as links (their targets
 * unchanged): an agent's pristine copy of a snapshot handed to each job as
 * its own working directory (fleet/agent-workdir.c).
 */
#ifndef SR_COPYTREE_H
#define SR_COPYTREE_H

/* Copy the tree at src (a directory) into dst, which must not exist; its
 * parent must. Nothing is followed out of src: its symlinks are copied as
 * links, other kinds of files are refused. 0, or -1 with err (dst may then
 * hold part of the copy; the caller removes it). */
int sr_copytree(const char *src, const char *dst, char *err);

#endif
