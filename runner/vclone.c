/*
 * vclone.c: see vclone.h.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>

#include "vclone.h"

/* The child's stack: sup_child's frames and the libc calls under them use
 * a few KiB; the rest is headroom for sanitizer builds, whose frames are
 * several times larger. Only the pages touched are ever allocated. Below
 * it a guard page: a child that ran past its stack would otherwise write
 * into whatever of ours lies there. */
#define VCLONE_STACK (256 * 1024)
#define VCLONE_GUARD 4096

pid_t
sr_vclone(int (*fn)(void *), void *arg)
{
	void *stack;
	pid_t pid;
	int e;

	stack = mmap(NULL, VCLONE_GUARD + VCLONE_STACK, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	if (mprotect(stack, VCLONE_GUARD, PROT_NONE) == -1) {
		e = errno;
		munmap(stack, VCLONE_GUARD + VCLONE_STACK);
		errno = e;
		return -1;
	}
	/* The stack grows down on every architecture spotrun builds for. */
	pid = clone(fn, (char *)stack + VCLONE_GUARD + VCLONE_STACK,
	    CLONE_VM | CLONE_VFORK | SIGCHLD, arg);
	e = errno;
	munmap(stack, VCLONE_GUARD + VCLONE_STACK);
	errno = e;
	return pid;
}
