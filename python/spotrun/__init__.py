"""spotrun: the job side of spotrun's checkpoint protocol, for Python jobs.

spotrun asks a job for a checkpoint by writing the file $SPOTRUN_CKPT_REQUEST
("seq=N reason=R deadline=EPOCH") and sending it $SPOTRUN_CKPT_SIGNAL
(SIGUSR1 by default); the job writes its state into $SPOTRUN_CKPT_DIR and
then creates $SPOTRUN_CKPT_DONE, holding the step number and the seq of the
request it answers, "120 seq=3" (doc/spotrun.1, CHECKPOINT PROTOCOL). This module does that part for a job:

    import spotrun                     # first: catches the request signal
    step = spotrun.resume_step() or 0  # None on a fresh start
    while step < steps:
        train_one_step()
        step += 1
        if spotrun.requested():        # one stat(2) when nothing is asked
            write_state(spotrun.ckpt_dir())
            spotrun.done(step)

Importing it also says that this process marks its first look for a request
($SPOTRUN_CKPT_LOOK, created empty), which the first requested() (or its kin)
marks: a preemption notice before it finds the job still starting, with
nothing new to save, and spotrun stops it at once rather than wait to the
deadline. Look every step.

Importing it installs a handler for the request signal named in the
environment, whose default action would end the process, and makes that
signal ignored once the interpreter exits (Python restores default actions
while it shuts down, so a late request would turn a success into exit 138).
Import it before anything slow (import torch takes seconds): spotrun signals
only processes that catch the signal, so a request that comes earlier is
seen through the file alone. A handler the job installed before is
called too. When the request signal is one that also means "stop" (TERM,
INT, HUP, QUIT), it is a request only while the request file exists;
otherwise it does what it did before (SIGINT raises KeyboardInterrupt). The request file, not the signal, is what
requested() looks at, so a request is never missed, whenever it came and even
when spotrun sends no signal at all.

Ranks: a job of several processes started by spotrun (procs, or one per GPU)
shares one checkpoint directory and one request; each rank answers with
done(step) in its own done marker ($SPOTRUN_CKPT_DONE differs per rank), all at
the same step, and spotrun commits once every rank has answered. Each rank
writes its part into rank_dir() (ckpt_dir()/rank-R), or any files of its
choosing; on a resume prev_world_size() says how many ranks wrote them, which
may differ from world_size() (gpus = 1-8, procs = 2-8): the job reshards its
state from the parts. Ranks see a request at different moments, so they must
agree on the step first: spotrun.torch.requested() does that with one
all-reduce (doc/python.md).

Outside spotrun (no SPOTRUN_CKPT_DIR in the environment) nothing is installed,
requested() is False, done() does nothing and the rest return None: the same
script runs by hand unchanged.

spotrun.torch saves and loads a PyTorch training state into the checkpoint
directory; it is imported (with torch) only when used.

Standard library only, Python 3.9 or later.
"""

from __future__ import annotations

import atexit
import operator
import os
import re
import signal
import sys
import tempfile
import time
from typing import NamedTuple, Optional

__all__ = [
    "Request", "supervised", "ckpt_dir", "resume_step", "requested", "request",
    "reason", "deadline", "seconds_left", "done", "rank", "world_size",
    "prev_world_size", "rank_dir", "nodes", "report",
]


class Request(NamedTuple):
    """A checkpoint request of spotrun's, as its request file says."""
    seq: int                   # request number, counting up within a run
    reason: str                # "periodic", "notice" (preemption) or "early"
    deadline: Optional[float]  # epoch seconds to call done() by; None: no deadline

    def seconds_left(self) -> Optional[float]:
        """Seconds until the deadline (negative once it is past), or None."""
        return None if self.deadline is None else self.deadline - time.time()


class _State:
    """What this process knows of the protocol: the signal flag, the last
    request file read (and the stat it was read at), the request request()
    told the job of last, which done() answers, and the request answered
    last, which spotrun may not have removed yet."""

    def __init__(self) -> None:
        self.signalled = False
        self.seen_key = None           # (ino, size, mtime_ns, ctime_ns) of the file read
        self.seen: Optional[Request] = None
        self.asked: Optional[Request] = None  # the request request() returned last
        self.answered: Optional[int] = None   # seq of the request done() answered
        self.warned = False
        self.caught: Optional[signal.Signals] = None   # the request signal, when caught
        self.looked = False                # this process marked its first look


_st = _State()


def _env(name: str) -> Optional[str]:
    v = os.environ.get(name)
    return v if v else None


def supervised() -> bool:
    """True when the process runs under spotrun."""
    return _env("SPOTRUN_CKPT_DIR") is not None


def ckpt_dir() -> Optional[str]:
    """The directory to write checkpoint files to, which holds the restored
    checkpoint on a resume; None outside spotrun."""
    return _env("SPOTRUN_CKPT_DIR")


def resume_step() -> Optional[int]:
    """The step of the checkpoint restored into ckpt_dir(), or None on a
    fresh start (and outside spotrun)."""
    if not supervised():
        return None
    v = _env("SPOTRUN_RESUME_STEP")
    if v is None:
        return None
    try:
        return int(v)
    except ValueError:
        raise ValueError("spotrun: SPOTRUN_RESUME_STEP=%r is not a step number" % v) from None


def _int_env(name: str) -> Optional[int]:
    v = _env(name)
    if v is None:
        return None
    try:
        return int(v)
    except ValueError:
        raise ValueError("spotrun: %s=%r is not a whole number" % (name, v)) from None


def world_size() -> Optional[int]:
    """How many processes spotrun started that each answer a request with
    their own done marker: the ranks (SPOTRUN_WORLD_SIZE), 1 for a job of
    one process (launch = once included); None outside spotrun."""
    if not supervised():
        return None
    n = _int_env("SPOTRUN_WORLD_SIZE")
    return 1 if n is None else n


def nodes() -> int:
    """How many machines run the job together (SPOTRUN_NODES: a gang of
    agents, doc/fleet.md); 1 on one machine and outside spotrun."""
    n = _int_env("SPOTRUN_NODES") if supervised() else None
    return 1 if n is None or n < 1 else n


def rank() -> Optional[int]:
    """This process's rank among them (RANK, which spotrun sets for each
    rank it starts), 0 for a job of one process; None outside spotrun."""
    n = world_size()
    if n is None:
        return None
    if n == 1:
        return 0
    r = _int_env("RANK")
    return 0 if r is None else r


def prev_world_size() -> Optional[int]:
    """On a resume, how many ranks wrote the restored checkpoint
    (SPOTRUN_PREV_WORLD_SIZE); None on a fresh start, outside spotrun, and
    when spotrun did not start the ranks (launch = once)."""
    if not supervised():
        return None
    return _int_env("SPOTRUN_PREV_WORLD_SIZE")


def rank_dir(r: Optional[int] = None) -> Optional[str]:
    """ckpt_dir()/rank-R, the folder for rank R's part of a checkpoint (this
    process's rank by default, and then created); None outside spotrun. On
    a resume, rank_dir(k) for k in range(prev_world_size()) are the parts
    the previous ranks wrote."""
    d = ckpt_dir()
    if d is None:
        return None
    own = r is None
    path = os.path.join(d, "rank-%d" % (rank() if own else operator.index(r)))
    if own:
        os.makedirs(path, exist_ok=True)
    return path


def _parse(text: str, path: str) -> Request:
    fields = dict(w.partition("=")[::2] for w in text.split())
    try:
        seq = int(fields["seq"])
        dl = float(fields.get("deadline", "0"))
    except (KeyError, ValueError):
        # Still a request: answer it, keyed on its text (a new request is
        # a new seq, so a new text); a negative seq, which done() does not
        # write into its answer.
        if not _st.warned:
            _st.warned = True
            print("spotrun: %s: %r is not 'seq=N reason=R deadline=EPOCH'; answering it anyway"
                  % (path, text[:80]), file=sys.stderr)
        return Request(-1 - hash(text) % (1 << 62), fields.get("reason", ""), None)
    return Request(seq, fields.get("reason", ""), dl if dl > 0 else None)


def request() -> Optional[Request]:
    """The pending request not answered yet by this process, or None.

    One stat(2) of the request file; the file is read again only when it is
    a new one (or the request signal came since the last call). The request
    returned is the one done() answers, even once a newer one replaced it."""
    req = _pending()
    if req is not None:
        _st.asked = req
    return req


def _pending() -> Optional[Request]:
    """The request in the request file, when this process has not answered
    it; None when none. Unlike request(), it leaves done()'s request alone."""
    path = _env("SPOTRUN_CKPT_REQUEST")
    if path is None or not supervised():
        return None
    if not _st.looked:
        _mark_look()
    signalled, _st.signalled = _st.signalled, False
    try:
        s = os.stat(path)
    except FileNotFoundError:
        return None
    key = (s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns)
    if signalled or key != _st.seen_key:
        try:
            with open(path) as f:
                text = f.read(4096)
        except FileNotFoundError:  # withdrawn between stat and open
            return None
        _st.seen, _st.seen_key = _parse(text, path), key
    req = _st.seen
    if req is None or req.seq == _st.answered:
        return None
    return req


def requested() -> bool:
    """True when spotrun asks for a checkpoint this process has not answered:
    write the state into ckpt_dir(), then call done(step). Cheap enough to
    call every step."""
    return request() is not None


def reason() -> Optional[str]:
    """The pending request's reason ("periodic", "notice", "early"), or None."""
    r = request()
    return None if r is None else r.reason


def deadline() -> Optional[float]:
    """The pending request's deadline (epoch seconds), or None."""
    r = request()
    return None if r is None else r.deadline


def seconds_left() -> Optional[float]:
    """Seconds left until the pending request's deadline, or None."""
    r = request()
    return None if r is None else r.seconds_left()


def _to_answer() -> Optional[Request]:
    """The request done() answers: the one request() told of last, while
    this process has not answered it; else the pending one (None: none)."""
    a = _st.asked
    return a if a is not None and a.seq != _st.answered else _pending()


def done(step: int, last: bool = False) -> bool:
    """Tell spotrun that the files in ckpt_dir() are complete, at `step`
    (a whole number >= 0: what resume_step() returns on the next start).
    With several ranks each calls it for its own part, into its own done
    marker; spotrun commits once all have, at the same step.
    last=True says this checkpoint is the job's last (its final step; what
    follows is only its end: writing results, exiting): once it commits,
    spotrun asks for no other, and a notice no longer stops the job, which
    may end on its own until the machine goes away; if the machine goes
    first, the next run resumes from it and does the end again. Without it,
    a job whose last step answers a notice is stopped after the commit and
    its end runs again on the next machine. With several ranks every rank
    says last=True, or it is not the last; in a gang it changes nothing.
    The done file is written atomically: a temporary file in its directory,
    renamed into place; no reader ever sees it half written. It
    holds the step and the seq of the request answered: the one request()
    (or requested()) told of last, so that an answer is never taken for
    one to a request that came while the files were being written.

    Returns True when it answered the pending request. False when a newer
    request replaced the one answered (a notice's a periodic one's): spotrun
    ignores that answer, and requested() is True again for the newer one.
    False, writing nothing, when there is no request (outside spotrun, or
    spotrun withdrew it because its deadline passed), since spotrun may be
    reading the directory for an earlier checkpoint while the job changes
    it again."""
    try:
        n = -1 if isinstance(step, bool) else operator.index(step)  # int, numpy ints
    except TypeError:
        n = -1
    if n < 0:
        raise ValueError("spotrun.done: step %r is not a whole number >= 0" % (step,))
    path = _env("SPOTRUN_CKPT_DONE")
    if path is None:
        return False
    req = _to_answer()     # before request() reads a newer one
    cur = request()
    if cur is None:
        return False
    if req is None:
        req = cur
    line = b"%d seq=%d" % (n, req.seq) if req.seq >= 0 else b"%d" % n
    line += b" last\n" if last else b"\n"
    _write_atomic(path, lambda f: f.write(line))
    _st.answered = req.seq
    return req.seq == cur.seq


_METRIC_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]{0,63}\Z")


def report(step: int, **metrics: float) -> bool:
    """Report metrics of `step` (a whole number >= 0) to spotrun:
    report(120, loss=0.43, acc=0.87). spotrun keeps rank 0's with the job in
    its store (`spotrun status SWEEP` shows them; doc/spotrun.1, METRICS).
    One line "step=120 loss=0.43 acc=0.87" appended to $SPOTRUN_METRICS with
    one write(2). Names start with a letter or _ and hold letters, digits and
    _.-/ (64 at most; not step); values are finite numbers (a tensor of one
    element is taken by float()). Up to 32 metrics a call; several calls for
    one step merge.

    Returns True when the line was written; False, writing nothing, outside
    spotrun. Raises ValueError for a bad step, name or value, so that a
    mistake shows at once rather than as a line spotrun skips."""
    try:
        n = -1 if isinstance(step, bool) else operator.index(step)
    except TypeError:
        n = -1
    if n < 0 or n > 999999999999999:
        raise ValueError("spotrun.report: step %r is not a whole number >= 0" % (step,))
    if not metrics or len(metrics) > 32:
        raise ValueError("spotrun.report: 1 to 32 metrics, not %d" % len(metrics))
    fields = ["step=%d" % n]
    for name, value in metrics.items():
        if name == "step" or not _METRIC_NAME.match(name):
            raise ValueError("spotrun.report: %r is no metric name (a letter or _, then "
                             "letters, digits and _.-/)" % (name,))
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ValueError("spotrun.report: %s=%r is not a number" % (name, value)) from None
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError("spotrun.report: %s=%r is not a finite number" % (name, value))
        fields.append("%s=%s" % (name, repr(v)))
    path = _env("SPOTRUN_METRICS")
    if path is None:
        return False
    line = (" ".join(fields) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
    return True


def _write_atomic(path: str, write) -> None:
    """write(f) into a temporary file beside path and rename it to path, so
    no reader ever sees a partial file; on failure the temporary file is
    removed and the exception raised. No fsync: its readers (spotrun, which
    takes the state to the store itself) read the page cache, and a crash
    of the machine ends the run that would read it; a notice's answer must
    not wait for the disk (a training state's fsync is seconds)."""
    d, name = os.path.split(path)
    fd, tmp = tempfile.mkstemp(prefix="." + name + ".", suffix=".tmp", dir=d or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.rename(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


# Signals that also mean "stop" (spotrun's own stop, a user's ^C forwarded,
# Slurm's TERM): chosen as the request signal, they are a request only while
# the request file exists, which spotrun writes before it signals.
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)


def _handler(prev):
    """The request signal's handler: set the flag (and call the job's own
    earlier handler), or, for a stop signal that is no request, do what the
    signal did before the import."""
    def handler(signo, frame):
        is_request = True
        if signo in _STOP_SIGNALS:
            path = _env("SPOTRUN_CKPT_REQUEST")
            is_request = path is not None and os.path.exists(path)
        if is_request:
            _st.signalled = True
            # Python's own SIGINT handler raises KeyboardInterrupt: not for a request.
            if callable(prev) and prev is not signal.default_int_handler:
                prev(signo, frame)
        elif callable(prev):
            prev(signo, frame)
        elif prev == signal.SIG_DFL:
            signal.signal(signo, signal.SIG_DFL)
            os.kill(os.getpid(), signo)
    return handler


def _declare_look() -> None:
    """Say that this process marks its first look at a request: create
    $SPOTRUN_CKPT_LOOK empty (not emptied when a process of the same rank
    looked already). Until the mark, a notice finds the job still starting,
    with nothing new to save, and spotrun stops it at once rather than wait
    for an answer to the deadline (doc/spotrun.1, CHECKPOINT PROTOCOL)."""
    path = _env("SPOTRUN_CKPT_LOOK")
    if path is None or not supervised():
        return
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))
    except OSError:
        pass                        # spotrun cannot tell, and waits as ever


def _mark_look() -> None:
    """The first look at a request: the job has ended a step (or is past
    its start). Written before the request file is read, so that spotrun
    never takes a job answering for one still starting. A marker that
    cannot be written is removed: spotrun then cannot tell, and waits."""
    _st.looked = True
    path = _env("SPOTRUN_CKPT_LOOK")
    if path is None:
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, b"looked\n")
        finally:
            os.close(fd)
    except OSError:
        try:
            os.unlink(path)
        except OSError:
            pass


def _install() -> None:
    """Catch the request signal and have it ignored from the interpreter's
    exit on."""
    name = _env("SPOTRUN_CKPT_SIGNAL")
    if not supervised() or name is None or name == "none":
        return
    sig = getattr(signal, "SIG" + name, None)
    if not isinstance(sig, signal.Signals):
        print("spotrun: SPOTRUN_CKPT_SIGNAL=%s names no signal; watching the request file only"
              % name, file=sys.stderr)
        return
    try:
        signal.signal(sig, _handler(signal.getsignal(sig)))
    except ValueError:
        # Not the main thread: only it can set handlers. The file still works.
        print("spotrun: imported outside the main thread: SIG%s is not caught" % name,
              file=sys.stderr)
        return
    atexit.register(signal.signal, sig, signal.SIG_IGN)
    _st.caught = sig


def __getattr__(name: str):
    # spotrun.torch on first use, so that `import spotrun` stays fast and
    # works without torch.
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError("module 'spotrun' has no attribute %r" % name)


_declare_look()
_install()
