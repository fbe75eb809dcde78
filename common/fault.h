/*
 * fault.h: named fault points for the fault tests. When the environment
 * variable SPOTRUN_FAULT names a point (for example "ckpt-manifest"), the
 * process acts on reaching it, so tests can prove that a crash, a pause
 * or a slow step at any point of a checkpoint leaves the store consistent:
 *
 *   POINT          kill the process with SIGKILL (a crash);
 *   POINT:stop     stop it with SIGSTOP (a paused VM: the test resumes it
 *                  with SIGCONT, or kills it);
 *   POINT:delay=S  sleep S seconds (a decimal number), then go on (a slow
 *                  request, a scheduler's hiccup).
 *
 * Each says so on stderr first ("spotrun: fault injected at POINT", with
 * ": stopping" or ": delaying S s" for the other two).
 */
#ifndef SR_FAULT_H
#define SR_FAULT_H

/* Act as SPOTRUN_FAULT says if it names this point; else return at once. */
void sr_fault(const char *point);

#endif
