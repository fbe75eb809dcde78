"""said.py: said(WHAT), whether the timeline of the job's attempt (its
log, logs/latest/attempt-N.log beside the checkpoint directory) has WHAT
yet: for test jobs that wait for something spotrun does. A test copies it
beside its job, which imports it (from said import said)."""
import os

_LOG = os.path.join(os.environ["SPOTRUN_CKPT_DIR"], "..", "logs", "latest",
                    "attempt-%s.log" % os.environ["SPOTRUN_ATTEMPT"])


def said(what):
    try:
        with open(_LOG) as f:
            return what in f.read()
    except FileNotFoundError:
        return False
