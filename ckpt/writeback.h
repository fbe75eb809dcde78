/*
 * writeback.h: the writeback of file ranges just written, started on a
 * thread of its own (sync_file_range SYNC_FILE_RANGE_WRITE) so that the
 * writer never waits for the disk's queue: a restore's tree reaches the
 * disk while the restore goes on and the job starts, not later beside
 * the job's own checkpoints. Advice only: nothing is waited for, a range
 * offered while the queue is full is left to the kernel's flusher, and
 * a failure changes nothing.
 */
#ifndef SR_CKPT_WRITEBACK_H
#define SR_CKPT_WRITEBACK_H

#include <stdint.h>

struct sr_writeback;

/* A started writeback thread; NULL where none can be had (nothing is
 * started then, and the calls below take NULL). */
struct sr_writeback *sr_writeback_start(void);
/* Queue the writeback of [off, off + len) of fd's file: fd is duplicated,
 * the caller's may be closed at once. Never blocks on the disk. */
void sr_writeback_offer(struct sr_writeback *wb, int fd, uint64_t off, uint64_t len);
/* After the range in progress, the thread ends, the ranges not begun are
 * dropped (their pages written back by the kernel later) and wb freed. */
void sr_writeback_stop(struct sr_writeback *wb);

#endif
