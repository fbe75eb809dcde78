/*
 * pace.h: a store handle's own writes of one key kept a store's interval
 * apart (GCS takes about one write a second per object name and answers
 * 429 to more; doc/fleet.md, "Writes per object"). store.c waits before a
 * put, delete or upload commit of a key this handle wrote less than the
 * interval ago, so a holder's lease renewals, its LATEST moves and a
 * status marker's put then delete never go out closer than that; writers
 * in other processes are not seen (their 429s are retried by the request
 * engine). Internal to store/.
 */
#ifndef SR_PACE_H
#define SR_PACE_H

struct sr_pace;

/* A pacer for writes interval seconds apart (> 0); NULL with err on OOM. */
struct sr_pace *sr_pace_new(double interval, char *err);
void sr_pace_free(struct sr_pace *p);
/* Sleep until interval seconds have passed since the end of this handle's
 * last write of any of the n keys (at once when there was none), and
 * until no other thread's write of them is under way; then they are this
 * caller's until sr_pace_done, which must follow. 0; or -1 with err when
 * the pacer's record of a key cannot be allocated (then nothing is taken:
 * no sr_pace_done). */
int sr_pace_wait(struct sr_pace *p, const char *const *keys, size_t n, char *err);
/* The write of the n keys just ended (whatever its result: a failed write
 * may have reached the server): start their intervals now. */
void sr_pace_done(struct sr_pace *p, const char *const *keys, size_t n);

#endif
