"""python-helper.py: the spotrun Python module (python/spotrun) against the
protocol as runner/request.c speaks it, in TAP (run by t63-python-helper.sh,
which puts python/ on PYTHONPATH):

  - outside spotrun everything is a no-op: no handler, False / None, no file;
  - importing it catches the request signal named in SPOTRUN_CKPT_SIGNAL
    (a job signalled by another process survives and answers), chains to a
    handler already there, leaves SIGUSR1 alone with `none`, has the signal
    ignored at exit, and lets TERM or INT as the request signal stop the job
    when no request file is there;
  - requested() sees a request by its file alone (no signal, or one sent
    before the import), reads seq, reason and deadline, and is False again
    once done() answered it, though the file is still there;
  - done() writes the step atomically (rename, no fsync; a hard link to
    the old done file keeps its bytes; a reader never sees a partial file),
    cleans its temporary file on failure, and writes nothing without a
    pending request;
  - ranks: world_size(), rank(), prev_world_size() and rank_dir() from
    spotrun's variables; each rank answers into its own done marker;
  - spotrun.torch saves and loads model, optimizer, scheduler and the RNG
    states, and training on from the loaded state is bit-identical; with
    ranks each writes its own rank-R file, a resume from another world size
    takes rank 0's state and the rank's own generators, and requested()
    agrees across a real gloo group when one rank alone sees the request.

Usage: python-helper.py (PYTHONPATH must reach python/spotrun)
"""

import contextlib
import io
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

n_tests = 0
n_failed = 0


def ok(cond, desc, diag=None):
    global n_tests, n_failed
    n_tests += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n_tests, desc), flush=True)
    if not cond:
        n_failed += 1
        if diag is not None:
            for line in str(diag).splitlines():
                print("#   " + line)
    return cond


def is_(got, want, desc):
    return ok(got == want, desc, "got:  %r\nwant: %r" % (got, want))


def skip(desc, why):
    global n_tests
    n_tests += 1
    print("ok %d - %s # SKIP %s" % (n_tests, desc, why), flush=True)


def raises(exc, fn, desc, msg=None):
    try:
        fn()
    except exc as e:
        if msg is not None:
            return is_(str(e), msg, desc)
        return ok(True, desc)
    except BaseException as e:
        return ok(False, desc, "raised %r, not %s" % (e, exc.__name__))
    return ok(False, desc, "raised nothing")


TMP = tempfile.mkdtemp(prefix="spotrun-pyhelper.")


def spot_env(tag, sig="USR1", resume=""):
    """An environment as runner/jobenv.c builds it, over fresh directories."""
    base = os.path.join(TMP, tag)
    os.makedirs(os.path.join(base, "ckpt"))
    os.makedirs(os.path.join(base, "ctl"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPOTRUN_")}
    env.update(SPOTRUN_JOB="t", SPOTRUN_ATTEMPT="1",
               SPOTRUN_CKPT_DIR=os.path.join(base, "ckpt"),
               SPOTRUN_CKPT_REQUEST=os.path.join(base, "ctl", "request"),
               SPOTRUN_CKPT_DONE=os.path.join(base, "ctl", "done"),
               SPOTRUN_CKPT_SIGNAL=sig, SPOTRUN_RESUME_STEP=resume,
               SPOTRUN_DEADLINE="0", SPOTRUN_PROVIDER="local")
    return env


def post(env, seq, reason="periodic", deadline=0.0):
    """Post a request the way sr_req_post does: one line, renamed into place."""
    path = env["SPOTRUN_CKPT_REQUEST"]
    with open(path + ".new", "w") as f:
        f.write("seq=%d reason=%s deadline=%.3f\n" % (seq, reason, deadline))
    os.rename(path + ".new", path)


def default_signals():
    """In the child: SIGINT and SIGQUIT at their default actions, as a job
    under spotrun has them. A test run started in the background by a
    non-interactive shell inherits them ignored, and Python installs no
    KeyboardInterrupt handler for an ignored SIGINT."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def child(code, env, timeout=60):
    """Run `code` in a fresh interpreter (the module acts at import)."""
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=timeout, preexec_fn=default_signals)


def child_json(code, env, desc):
    p = child(code, env)
    if not ok(p.returncode == 0, desc + ": exit 0", "rc %d\n%s" % (p.returncode, p.stderr)):
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])


def torch_or_none():
    try:
        import torch
    except ImportError:
        return None
    return torch


# --- outside spotrun --------------------------------------------------------

outside = {k: v for k, v in os.environ.items() if not k.startswith("SPOTRUN_")}
r = child_json(r"""
import json, os, signal, sys, spotrun
r = dict(handler=signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL,
         supervised=spotrun.supervised(), requested=spotrun.requested(),
         request=spotrun.request(), reason=spotrun.reason(), deadline=spotrun.deadline(),
         left=spotrun.seconds_left(), done=spotrun.done(5), resume=spotrun.resume_step(),
         dir=spotrun.ckpt_dir(), torch_loaded="torch" in sys.modules)
try:
    spotrun.done(-1)
except ValueError as e:
    r["bad_step"] = str(e)
print(json.dumps(r))
""", outside, "outside spotrun")
if r is not None:
    is_(r["handler"], True, "outside: SIGUSR1 keeps its default action")
    is_([r[k] for k in ("supervised", "requested", "done")], [False] * 3,
        "outside: supervised(), requested(), done(5) are False")
    is_([r[k] for k in ("request", "reason", "deadline", "left", "resume", "dir")], [None] * 6,
        "outside: request(), reason(), deadline(), seconds_left(), resume_step(), ckpt_dir() are None")
    is_(r["torch_loaded"], False, "import spotrun does not import torch")
    is_(r.get("bad_step"), "spotrun.done: step -1 is not a whole number >= 0",
        "outside too, done() refuses a bad step")

p = subprocess.run([sys.executable, "-c", "import spotrun; spotrun.done(5)"], env=outside,
                   cwd=TMP, capture_output=True, text=True)
is_((p.returncode, sorted(os.listdir(TMP))), (0, []), "outside: done() writes no file")

# --- the request signal -----------------------------------------------------

env = spot_env("signal")
code = r"""
import sys, time, spotrun
print("ready", flush=True)
t0 = time.monotonic()
while time.monotonic() - t0 < 30:
    if spotrun.requested():
        r = spotrun.request()
        print("answered seq=%d reason=%s done=%s" % (r.seq, r.reason, spotrun.done(41)))
        sys.exit(0)
    time.sleep(0.005)
sys.exit("no request seen")
"""
proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True)
is_(proc.stdout.readline(), "ready\n", "signalled job: started")
post(env, 1, "notice", time.time() + 20)
os.kill(proc.pid, signal.SIGUSR1)
out, err = proc.communicate(timeout=60)
is_(proc.returncode, 0, "a job signalled by another process survives SIGUSR1 (exit 0)")
is_(out, "answered seq=1 reason=notice done=True\n", "and answers the request")
with open(env["SPOTRUN_CKPT_DONE"]) as f:
    is_(f.read(), "41 seq=1\n", "the done file holds the step and the request's seq")

env = spot_env("self")
r = child_json(r"""
import json, os, signal, spotrun
r = {"caught": callable(signal.getsignal(signal.SIGUSR1))}
os.kill(os.getpid(), signal.SIGUSR1)
r["signal_alone"] = spotrun.requested()
print(json.dumps(r))
""", env, "signal without a request file")
if r is not None:
    is_(r["caught"], True, "under spotrun, SIGUSR1 is caught from the import on")
    is_(r["signal_alone"], False, "a signal without a request file is no request (the file says)")

env = spot_env("chain")
r = child_json(r"""
import json, os, signal
calls = []
signal.signal(signal.SIGUSR1, lambda s, f: calls.append(s))
import spotrun
os.kill(os.getpid(), signal.SIGUSR1)
print(json.dumps({"calls": len(calls)}))
""", env, "a handler installed before the import")
if r is not None:
    is_(r["calls"], 1, "the job's own earlier handler is still called")

env = spot_env("atexit")
r = child(r"""
import atexit, os, signal
def last():
    # Registered first, so it runs after the module's exit hook.
    print("at exit: ignored=%s" % (signal.getsignal(signal.SIGUSR1) == signal.SIG_IGN))
    os.kill(os.getpid(), signal.SIGUSR1)
atexit.register(last)
import spotrun
""", env)
is_((r.returncode, r.stdout), (0, "at exit: ignored=True\n"),
    "at exit the request signal is ignored (a late request cannot kill a finished job)")

env = spot_env("none", sig="none")
post(env, 7, "periodic", 0)
r = child_json(r"""
import json, signal, spotrun
print(json.dumps({"dfl": signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL,
                  "req": spotrun.request(), "done": spotrun.done(3)}))
""", env, "signal = none")
if r is not None:
    is_(r["dfl"], True, "signal = none: SIGUSR1 left alone")
    is_((r["req"], r["done"]), ([7, "periodic", None], True),
        "signal = none: the request file alone is seen (posted before the import) and answered")

env = spot_env("usr2", sig="USR2")
r = child_json(r"""
import json, signal, spotrun
print(json.dumps({"usr1": signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL,
                  "usr2": callable(signal.getsignal(signal.SIGUSR2))}))
""", env, "signal = USR2")
if r is not None:
    is_((r["usr1"], r["usr2"]), (True, True), "signal = USR2: SIGUSR2 caught, SIGUSR1 left alone")

# A stop signal chosen as the request signal is a request only while the
# request file exists; otherwise it does what it did before the import.
env = spot_env("term", sig="TERM")
code_term = r"""
import os, signal, spotrun
os.kill(os.getpid(), signal.SIGTERM)
print("alive requested=%s" % spotrun.requested())
"""
post(env, 1, "periodic", 0)
r = child(code_term, env)
is_((r.returncode, r.stdout), (0, "alive requested=True\n"),
    "signal = TERM with a request file: a request, the job lives on")
os.unlink(env["SPOTRUN_CKPT_REQUEST"])
r = child(code_term, env)
is_((r.returncode, r.stdout), (-signal.SIGTERM, ""),
    "signal = TERM without a request file: the job ends by SIGTERM, as without the module")
env = spot_env("int", sig="INT")
code_int = r"""
import os, signal, spotrun
try:
    os.kill(os.getpid(), signal.SIGINT)
    print("alive requested=%s" % spotrun.requested())
except KeyboardInterrupt:
    print("KeyboardInterrupt")
"""
post(env, 1, "periodic", 0)
r = child(code_int, env)
is_(r.stdout, "alive requested=True\n", "signal = INT with a request file: no KeyboardInterrupt")
os.unlink(env["SPOTRUN_CKPT_REQUEST"])
r = child(code_int, env)
is_(r.stdout, "KeyboardInterrupt\n", "signal = INT without a request file: KeyboardInterrupt, as ^C")

env = spot_env("bogus", sig="BOGUS")
r = child("import spotrun", env)
is_((r.returncode, r.stderr),
    (0, "spotrun: SPOTRUN_CKPT_SIGNAL=BOGUS names no signal; watching the request file only\n"),
    "an unknown signal name: one line on stderr, the file still works")

# --- in this process: requests, deadlines, done() ----------------------------

env = spot_env("main", sig="none")
os.environ.update({k: v for k, v in env.items() if k.startswith("SPOTRUN_")})
import spotrun  # noqa: E402

REQ, DONE, CTL = env["SPOTRUN_CKPT_REQUEST"], env["SPOTRUN_CKPT_DONE"], os.path.dirname(env["SPOTRUN_CKPT_DONE"])

is_((spotrun.supervised(), spotrun.ckpt_dir()), (True, env["SPOTRUN_CKPT_DIR"]),
    "supervised(), ckpt_dir()")
is_((spotrun.requested(), spotrun.request(), spotrun.done(1)), (False, None, False),
    "no request file: requested() False, done() False")
is_(os.path.exists(DONE), False, "done() without a request writes nothing")

dl = time.time() + 30
post(env, 3, "notice", dl)
req = spotrun.request()
is_(req, spotrun.Request(3, "notice", round(dl, 3)), "request(): seq, reason, deadline (epoch)")
left = spotrun.seconds_left()
ok(left is not None and 25 < left <= 30.001, "seconds_left() counts down to the deadline", left)
is_((spotrun.reason(), spotrun.deadline()), ("notice", round(dl, 3)), "reason(), deadline()")
post(env, 4, "periodic", 0)
is_((spotrun.request(), spotrun.deadline(), spotrun.seconds_left()),
    (spotrun.Request(4, "periodic", None), None, None), "deadline=0: no deadline (None)")

fsyncs, calls = [], []
real_fsync, real_rename = os.fsync, os.rename
os.fsync = lambda fd: (calls.append("fsync"), real_fsync(fd))[1]
os.rename = lambda a, b: (calls.append("rename %s" % os.path.basename(b)), real_rename(a, b))[1]
try:
    answered = spotrun.done(12)
finally:
    os.fsync, os.rename = real_fsync, real_rename
is_(answered, True, "done(12) answers the pending request")
is_(calls, ["rename done"], "done(): the temporary file renamed onto the done file, no fsync (a notice's answer waits for no disk)")
with open(DONE) as f:
    is_(f.read(), "12 seq=4\n", "the done file holds '12 seq=4\\n'")
is_(sorted(os.listdir(CTL)), ["done", "request"], "no temporary file left")
is_(spotrun.requested(), False, "answered: requested() is False though spotrun has not removed the file yet")
is_(spotrun.done(13), False, "a second done() for the same request writes nothing")
with open(DONE) as f:
    is_(f.read(), "12 seq=4\n", "the done file still holds 12")

os.unlink(DONE)  # what spotrun does with both files
os.unlink(REQ)
with open(DONE, "w") as f:
    f.write("old\n")
os.link(DONE, os.path.join(TMP, "old-done"))
post(env, 5, "periodic", 0)
is_(spotrun.requested(), True, "a new request (seq 5) is seen")
spotrun.done(20)
with open(os.path.join(TMP, "old-done")) as f, open(DONE) as g:
    is_((f.read(), g.read()), ("old\n", "20 seq=5\n"),
        "done() replaces the file (a link to the old one keeps its bytes): never written in place")
os.unlink(os.path.join(TMP, "old-done"))

os.unlink(DONE)
os.unlink(REQ)
post(env, 9, "notice", time.time() + 30)
is_(spotrun.done(40, last=True), True, "done(40, last=True) answers request 9")
with open(DONE) as f:
    is_(f.read(), "40 seq=9 last\n", "the done file holds '40 seq=9 last\\n': the job's last checkpoint")

os.unlink(DONE)
os.unlink(REQ)
post(env, 6, "periodic", 0)
os.unlink(REQ)  # withdrawn: its deadline passed
is_((spotrun.requested(), spotrun.done(7), os.path.exists(DONE)), (False, False, False),
    "a withdrawn request: requested() False, done() False, no done file")

# A notice's request replaces the periodic one while the job writes its
# files: done() answers the request it was told of, and the newer one is
# asked next.
post(env, 30, "periodic", 0)
is_(spotrun.requested(), True, "request 30 seen")
post(env, 31, "notice", time.time() + 30)
is_(spotrun.done(70), False, "request 31 replaced it meanwhile: done(70) returns False")
with open(DONE) as f:
    is_(f.read(), "70 seq=30\n", "and its answer names request 30, the one it answers")
is_((spotrun.requested(), spotrun.request().seq), (True, 31), "requested() is True again: request 31")
is_(spotrun.done(71), True, "done(71) answers request 31")
with open(DONE) as f:
    is_(f.read(), "71 seq=31\n", "naming it")
os.unlink(DONE)
os.unlink(REQ)

post(env, 8, "periodic", 0)
for bad in (-1, "3", True, 1.5, None):
    raises(ValueError, lambda: spotrun.done(bad), "done(%r) is refused" % (bad,),
           "spotrun.done: step %r is not a whole number >= 0" % (bad,))
is_(os.path.exists(DONE), False, "refused steps write nothing")
try:
    import numpy
    is_(spotrun.done(numpy.int64(9)), True, "done() takes a numpy integer")
    os.unlink(DONE)
except ImportError:
    skip("done() takes a numpy integer", "no numpy")

# A reader in another process never sees a partial done file.
os.unlink(REQ)
reader = subprocess.Popen([sys.executable, "-c", r"""
import re, sys
path, seen, bad = sys.argv[1], 0, []
for line in sys.stdin: break          # go
while True:
    try:
        with open(path) as f:
            s = f.read()
    except FileNotFoundError:
        continue
    if s == "stop\n":
        break
    seen += 1
    if not re.fullmatch(r"[0-9]+ seq=[0-9]+\n", s):
        bad.append(s)
print(seen, len(bad), repr(bad[:3]))
""", DONE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
reader.stdin.write("go\n")
reader.stdin.flush()
for i in range(400):
    post(env, 100 + i, "periodic", 0)
    spotrun.done(10 ** (i % 15) + i)
    time.sleep(0.0005)
    os.unlink(DONE)
with open(DONE + ".x", "w") as f:
    f.write("stop\n")
os.rename(DONE + ".x", DONE)
out, _ = reader.communicate(timeout=60)
seen, nbad, sample = out.split(" ", 2)
ok(int(seen) > 0 and nbad == "0", "400 done files, a reader polling meanwhile: never a partial one",
   out)
print("# the reader saw %s done files" % seen)
os.unlink(DONE)
is_(sorted(os.listdir(CTL)), ["request"], "no temporary file left after 400 answers")

os.mkdir(DONE)
with open(os.path.join(DONE, "x"), "w"):
    pass
post(env, 600, "periodic", 0)
raises(OSError, lambda: spotrun.done(1), "done() onto a non-empty directory raises OSError")
is_(sorted(os.listdir(CTL)), ["done", "request"], "and removes its temporary file")
os.unlink(os.path.join(DONE, "x"))
os.rmdir(DONE)

with open(REQ, "w") as f:
    f.write("garbage\n")
err = io.StringIO()
with contextlib.redirect_stderr(err):
    got = (spotrun.requested(), spotrun.reason(), spotrun.deadline(), spotrun.done(2))
is_(got, (True, "", None, True), "an unreadable request file is still a request, and answered")
is_(err.getvalue(), "spotrun: %s: 'garbage\\n' is not 'seq=N reason=R deadline=EPOCH'; "
    "answering it anyway\n" % REQ, "with one line on stderr naming the file")
with open(DONE) as f:
    is_(f.read(), "2\n", "the answer holds the step alone: the request has no seq to name")
os.unlink(DONE)

for val, want in (("", None), ("120", 120), ("0", 0)):
    os.environ["SPOTRUN_RESUME_STEP"] = val
    is_(spotrun.resume_step(), want, "SPOTRUN_RESUME_STEP=%r: resume_step() is %r" % (val, want))
os.environ["SPOTRUN_RESUME_STEP"] = "x12"
raises(ValueError, spotrun.resume_step, "SPOTRUN_RESUME_STEP=x12 is refused",
       "spotrun: SPOTRUN_RESUME_STEP='x12' is not a step number")
os.environ["SPOTRUN_RESUME_STEP"] = ""

# --- ranks ---------------------------------------------------------------------

renv = spot_env("ranks")
ctl = os.path.dirname(renv["SPOTRUN_CKPT_DONE"])
post(renv, 3, "notice", time.time() + 30)
answers = {}
for rk in (0, 1, 2):
    e = dict(renv, RANK=str(rk), WORLD_SIZE="3", SPOTRUN_WORLD_SIZE="3",
             SPOTRUN_PREV_WORLD_SIZE="4", SPOTRUN_CKPT_DONE=os.path.join(ctl, "done.%d" % rk))
    answers[rk] = child_json(r"""
import json, os, spotrun
d = spotrun.rank_dir()
with open(os.path.join(d, "part"), "w") as f:
    f.write("rank %d" % spotrun.rank())
print(json.dumps([spotrun.world_size(), spotrun.rank(), spotrun.prev_world_size(), d,
                  os.path.isdir(d), spotrun.rank_dir(3), spotrun.done(40 + 0)]))
""", e, "rank %d of 3" % rk)
ck = renv["SPOTRUN_CKPT_DIR"]
is_(answers[1], [3, 1, 4, os.path.join(ck, "rank-1"), True, os.path.join(ck, "rank-3"), True],
    "rank 1 of 3: world_size 3, rank 1, prev_world_size 4, rank_dir() its folder (made), "
    "rank_dir(3) another's (not made), done() answered")
is_(sorted(os.listdir(ctl)), ["done.0", "done.1", "done.2", "request"],
    "each rank answered into its own done marker")
is_([open(os.path.join(ctl, "done.%d" % k)).read() for k in range(3)], ["40 seq=3\n"] * 3,
    "every marker holds the step and the request's seq")
is_(sorted(os.listdir(ck)), ["rank-0", "rank-1", "rank-2"], "one folder per rank, none for rank 3")
r = child_json(r"""
import json, spotrun
print(json.dumps([spotrun.world_size(), spotrun.rank(), spotrun.prev_world_size()]))
""", dict(renv, RANK="5", SPOTRUN_WORLD_SIZE="1", SPOTRUN_PREV_WORLD_SIZE=""),
    "one process under an own launcher")
is_(r, [1, 0, None], "launch = once: world_size 1, rank 0 (RANK is the launcher's), "
    "prev_world_size None")

# --- spotrun.torch ----------------------------------------------------------

torch = torch_or_none()
TORCH_TESTS = 13
if torch is None:
    for _ in range(TORCH_TESTS):
        skip("spotrun.torch", "no torch for %s" % sys.executable)
else:
    import numpy as np
    CK = env["SPOTRUN_CKPT_DIR"]
    for f in os.listdir(CTL):
        os.unlink(os.path.join(CTL, f))

    def setup(seed):
        torch.manual_seed(seed)
        m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Dropout(0.3), torch.nn.Linear(16, 4))
        o = torch.optim.AdamW(m.parameters(), lr=1e-2)
        s = torch.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5)
        return m, o, s

    def train(m, o, s, n):
        for _ in range(n):
            # Every generator plays a part: torch's (data, dropout), numpy's, Python's.
            x = torch.randn(5, 8) + float(np.random.rand()) + random.random()
            loss = m(x).pow(2).mean()
            o.zero_grad()
            loss.backward()
            o.step()
            s.step()

    def draws():
        return (random.random(), float(np.random.rand()), torch.rand(3).tolist())

    random.seed(1)
    np.random.seed(1)
    m, o, s = setup(1)
    train(m, o, s, 5)
    is_(spotrun.torch.save(5, model=m, optimizer=o, scheduler=s), False,
        "save() without a pending request returns False")
    is_(os.listdir(CK), [], "and writes nothing")
    post(env, 1, "notice", time.time() + 30)
    is_(spotrun.torch.save(5, model=m, optimizer=o, scheduler=s), True, "save(5) answers the request")
    with open(DONE) as f:
        is_(f.read(), "5 seq=1\n", "save() wrote the done file with step 5")
    is_(os.listdir(CK), [spotrun.torch.FILENAME], "the checkpoint directory holds %s alone (no temporary file)"
        % spotrun.torch.FILENAME)
    train(m, o, s, 7)
    ref = ([p.detach().clone() for p in m.parameters()], s.get_last_lr(), draws())

    m2, o2, s2 = setup(2)
    before = [p.detach().clone() for p in m2.parameters()]
    is_(spotrun.torch.load(model=m2, optimizer=o2, scheduler=s2), None,
        "load() on a fresh start returns None")
    ok(all(torch.equal(a, b) for a, b in zip(before, m2.parameters())), "and leaves the model alone")
    os.environ["SPOTRUN_RESUME_STEP"] = "5"
    random.seed(99)
    np.random.seed(99)
    is_(spotrun.torch.load(model=m2, optimizer=o2, scheduler=s2), 5, "load() on a resume returns step 5")
    train(m2, o2, s2, 7)
    got = ([p.detach().clone() for p in m2.parameters()], s2.get_last_lr(), draws())
    ok(all(torch.equal(a, b) for a, b in zip(ref[0], got[0])),
       "7 steps on from the loaded state: weights bit-identical to the uninterrupted run's")
    is_((got[1], got[2]), (ref[1], ref[2]),
        "the scheduler's rate and the next draws of random, numpy and torch are the same too")

    os.environ["SPOTRUN_RESUME_STEP"] = "6"
    raises(ValueError, lambda: spotrun.torch.load(model=m2), "a step that does not match is refused",
           "spotrun.torch.load: %s/%s holds step 5 but SPOTRUN_RESUME_STEP is 6" % (CK, spotrun.torch.FILENAME))
    os.environ["SPOTRUN_RESUME_STEP"] = "5"
    os.unlink(DONE)
    post(env, 2, "periodic", 0)
    spotrun.torch.save(5, model=m2)
    raises(ValueError, lambda: spotrun.torch.load(model=m2, optimizer=o2),
           "loading an optimizer that was not saved is refused",
           "spotrun.torch.load: %s/%s holds no optimizer state; pass the optimizer to "
           "spotrun.torch.save too" % (CK, spotrun.torch.FILENAME))
    os.unlink(os.path.join(CK, spotrun.torch.FILENAME))
    raises(FileNotFoundError, lambda: spotrun.torch.load(model=m2),
           "a resume without the file says so",
           "spotrun.torch.load: SPOTRUN_RESUME_STEP is 5 but %s/%s does not exist; was the "
           "checkpoint written by spotrun.torch.save?" % (CK, spotrun.torch.FILENAME))

# --- spotrun.torch with ranks -----------------------------------------------

RANK_TORCH_TESTS = 10
if torch is None:
    for _ in range(RANK_TORCH_TESTS):
        skip("spotrun.torch with ranks", "no torch for %s" % sys.executable)
else:
    import socket
    import multiprocessing as mp

    def free_port():
        with socket.socket() as so:
            so.bind(("127.0.0.1", 0))
            return so.getsockname()[1]

    def agree(rk, env, port, q):
        # One rank of a gloo group of 2 in a forked child: only rank 0's
        # request file exists, yet both agree that a request is pending.
        os.environ.clear()
        os.environ.update(env)
        os.environ.update(RANK=str(rk), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                          MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
        if rk == 1:
            os.environ["SPOTRUN_CKPT_REQUEST"] += ".elsewhere"
        import torch.distributed as dist
        dist.init_process_group("gloo", rank=rk, world_size=2)
        q.put((rk, spotrun.requested(), spotrun.torch.requested()))
        dist.destroy_process_group()

    env = spot_env("agree")
    post(env, 1, "periodic", 0)
    port = free_port()
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    ps = [ctx.Process(target=agree, args=(k, dict(env), port, q)) for k in (0, 1)]
    for p in ps:
        p.start()
    got = sorted(q.get(timeout=60) for _ in ps)
    for p in ps:
        p.join(60)
    is_(got, [(0, True, True), (1, False, True)],
        "requested() agrees over gloo: rank 1 does not see the request itself, yet both save")

    def newer(rk, env, port, q):
        # Rank 1 still holds request 1 when rank 0 reads request 2 (spotrun
        # replaced a periodic request by a notice's between the ranks'
        # reads); request 2 reaches rank 1's file 0.3 s later. Both must
        # answer request 2 at this step (ranks answering different requests
        # at different steps make no checkpoint).
        import threading
        spotrun._st.answered = spotrun._st.asked = spotrun._st.seen = spotrun._st.seen_key = None
        os.environ.clear()
        os.environ.update(env)
        os.environ.update(RANK=str(rk), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                          MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
        if rk == 1:
            os.environ["SPOTRUN_CKPT_REQUEST"] += ".one"
            mine = dict(env, SPOTRUN_CKPT_REQUEST=os.environ["SPOTRUN_CKPT_REQUEST"])
            post(mine, 1, "periodic", 0)
            spotrun.request()
            threading.Timer(0.3, post, args=(mine, 2, "notice", 0)).start()
        import torch.distributed as dist
        dist.init_process_group("gloo", rank=rk, world_size=2)
        agreed = spotrun.torch.requested()
        r = spotrun.request()
        q.put((rk, agreed, None if r is None else r.seq))
        dist.destroy_process_group()

    env = spot_env("newer")
    post(env, 2, "notice", 0)
    port = free_port()
    q = ctx.Queue()
    ps = [ctx.Process(target=newer, args=(k, dict(env), port, q)) for k in (0, 1)]
    for p in ps:
        p.start()
    got = sorted(q.get(timeout=60) for _ in ps)
    for p in ps:
        p.join(60)
    is_(got, [(0, True, 2), (1, True, 2)],
        "requested() agrees on the request: a rank still holding an older one reads the newer "
        "one, so both answer request 2")

    env = spot_env("torchranks")
    ctl = os.path.dirname(env["SPOTRUN_CKPT_DONE"])
    CK = env["SPOTRUN_CKPT_DIR"]
    saved = {}
    post(env, 1, "periodic", 0)
    saved_env = dict(os.environ)
    for rk in (0, 1):
        os.environ.update(env, RANK=str(rk), SPOTRUN_WORLD_SIZE="2",
                          SPOTRUN_CKPT_DONE=os.path.join(ctl, "done.%d" % rk))
        spotrun._st.answered = spotrun._st.asked = None
        torch.manual_seed(10 + rk)          # each rank's own generator state
        m, o, s = setup(3)
        saved[rk] = torch.get_rng_state()
        is_(spotrun.torch.save(7, model=m, optimizer=o), True, "rank %d of 2: save(7) answers" % rk)
    is_(sorted(os.listdir(CK)), ["rank-0", "rank-1"], "with ranks each writes its own folder")
    ok(os.path.exists(os.path.join(CK, "rank-1", spotrun.torch.FILENAME)) and
       sorted(os.listdir(ctl)) == ["done.0", "done.1", "request"],
       "rank-1/%s and a done marker per rank" % spotrun.torch.FILENAME)
    # The same world: each rank's own generators come back.
    os.environ.update(RANK="1", SPOTRUN_RESUME_STEP="7", SPOTRUN_PREV_WORLD_SIZE="2")
    m2, o2, s2 = setup(4)
    is_(spotrun.torch.load(model=m2, optimizer=o2), 7, "rank 1 of 2 loads step 7")
    ok(torch.equal(torch.get_rng_state(), saved[1]), "rank 1 gets its own generator back")
    # Three ranks now: rank 2 had no file, it takes rank 0's.
    os.environ.update(RANK="2", SPOTRUN_WORLD_SIZE="3")
    is_(spotrun.torch.load(model=m2, optimizer=o2), 7, "rank 2 of 3 from a world of 2 loads step 7")
    ok(torch.equal(torch.get_rng_state(), saved[0]), "with rank 0's generators, as it had none")
    # One process now: rank 0's state from its folder.
    os.environ.update(RANK="0", SPOTRUN_WORLD_SIZE="1")
    m3, o3, s3 = setup(5)
    is_(spotrun.torch.load(model=m3, optimizer=o3), 7, "one process from a world of 2 loads step 7")
    m.load_state_dict(torch.load(os.path.join(CK, "rank-1", spotrun.torch.FILENAME))["model"])
    ok(all(torch.equal(a, b) for a, b in zip(m.parameters(), m3.parameters())),
       "the model is the one the ranks saved")
    os.environ.clear()
    os.environ.update(saved_env)

# --- spotrun.torch after a resume on another world size -------------------
# (a stand-in torch module: which files are left behind needs no torch)

for prev, n, want in ((4, 2, ["rank-2", "rank-3"]), (2, 1, ["rank-0", "rank-1"]),
                      (1, 2, ["spotrun-torch.pt"]), (2, 3, []), (2, 2, [])):
    env = spot_env("stale-%d-%d" % (prev, n))
    env.update(SPOTRUN_WORLD_SIZE=str(n), SPOTRUN_PREV_WORLD_SIZE=str(prev), RANK="0")
    r = child_json(r"""
import json, os, sys, types
sys.modules["torch"] = types.ModuleType("torch")
import spotrun, spotrun.torch
d = spotrun.ckpt_dir()
made = [os.path.join(d, "spotrun-torch.pt")] + [os.path.join(d, "rank-%d" % k, "spotrun-torch.pt")
                                                 for k in range(4)]
for p in made:
    os.makedirs(os.path.dirname(p), exist_ok=True)
    open(p, "w").close()
open(os.path.join(d, "rank-3", "keep.txt"), "w").close()
spotrun.torch._remove_stale()
gone = sorted(os.path.relpath(p, d).split(os.sep)[0] for p in made if not os.path.exists(p))
print(json.dumps(dict(gone=gone, rank3=sorted(os.listdir(os.path.join(d, "rank-3"))),
                      dirs=sorted(x for x in os.listdir(d) if x.startswith("rank-")))))
""", env, "stale files, %d ranks resumed on %d" % (prev, n))
    if r is not None:
        is_(r["gone"], want, "spotrun.torch: resumed from %d on %d: its first save removes %s"
            % (prev, n, want or "nothing"))
        if prev == 4:
            is_([r["rank3"], r["dirs"]], [["keep.txt"], ["rank-0", "rank-1", "rank-3"]],
                "... a rank's folder removed when empty, kept with the job's other files")

print("1..%d" % n_tests)
subprocess.run(["rm", "-rf", TMP])
sys.exit(0)
