/*
 * nofsync.h: a process whose fsync and fdatasync fail, for a forked child
 * of a test. A seccomp filter answers both with an error instead of
 * running them, so which step of a store or a save asks the disk to flush
 * shows in its error, and a test tells a flush left for later from one
 * done at once. Header-only.
 */
#ifndef SR_NOFSYNC_H
#define SR_NOFSYNC_H

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#define NF_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NF_ARCH AUDIT_ARCH_AARCH64
#endif

/* From now on this process's fsync and fdatasync fail with errnum: 0, or
 * -1 where no filter can be had (another architecture, or seccomp
 * refused). Irreversible: call it in a child. */
static __attribute__((unused)) int
nf_fsync_fails(int errnum)
{
#ifdef NF_ARCH
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NF_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_fsync, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_fdatasync, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)errnum & SECCOMP_RET_DATA)),
	};
	struct sock_fprog prog = { (unsigned short)(sizeof f / sizeof f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == -1)
		return -1;
	return 0;
#else
	(void)errnum;
	return -1;
#endif
}

#endif
