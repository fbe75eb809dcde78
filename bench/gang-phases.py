#!/usr/bin/python3
"""gang-phases.py: where a gang's time between its runs goes, from the
logs bench/goodput-gang.sh's agents left (their folders DIR/ag*.d).

Each node's run of each gang epoch leaves an attempt log whose first line
gives the run's timeline 00:00 and the log's +0000.000 as wall-clock times;
its lines give the job's start and the run's end (offsets), and the job
(bench/gangjob.py) says when it was ready. The runs are grouped into the
gang's epochs (a run that begins before every run of the epoch before has
ended belongs to that epoch's successor only once one of them ended), and
for each epoch after the first:

  between  from the previous epoch's last run ending to this epoch's first
           run beginning (its timeline's 00:00): the release, the claims,
           the forming of the gang;
  setup    from a run's 00:00 to its attempt log (the run's preparations:
           the job's folder, the processes of an earlier run stopped, its
           locks), the mean over the epoch's runs;
  launch   from the attempt log to the job started (the restore of this
           node's part), the mean;
  ready    the job's own start-up (its process's start to its first step),
           the mean over the ranks;
  spread   from the epoch's first run beginning to its last;
  stop     for an epoch a notice ended, from its first notice (on any
           node) to its last run's end: the answers, the parts, node 0's
           commit and the stop.

and, once for the whole run:

  first    from the agents' start (DIR/t0, the benchmark's clock reading
           before it started them) to the first epoch's first run: the
           agents' own start, the claims, the first forming;
  end      from the last rank's last step to the last run's end: the
           ranks' end barrier, their exit and the runs' end.

Prints one line: the epochs and the mean of each phase in seconds.

With --starts, prints instead the job's own start-ups past the first, in
seconds (bench/goodput-gang.sh's "starts"): per rank (a gang node's run
is the rank of its node number, from its agent's log), the start-ups of
its runs summed, the largest sum (the ranks step on their own clocks and
the job ends with the slowest), less ONE (the first's, which the job alone
paid too). A run's start-up is its rank's "ready" time (its process's
start to its first step); for a run a notice stopped before its rank was
ready, from the job's start to the notice, which the job spent starting as
it would have without one (what follows the notice is spotrun's: how soon
it stops the job).
Usage: gang-phases.py DIR | gang-phases.py --starts DIR ONE
"""
import datetime
import glob
import os
import re
import sys

FIRST = re.compile(r"this log's \+0000\.000 is (\S+ \S+) \+0000; the timeline's 00:00 is (\S+ \S+) \+0000")
NODE = re.compile(r"gang of \d+ nodes started: this is node (\d+),")
ZERO = re.compile(r"the timeline's 00:00 is (\S+ \S+) \+0000")
LINE = re.compile(r"^\+(\d+\.\d+) (spotrun|err|out) (.*)$")


def stamp(text):
    return datetime.datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f").timestamp()


def runs(top):
    out = []
    for path in glob.glob(os.path.join(top, "ag*.d", "jobs", "*", ".spotrun", "*", "logs", "*",
                                       "attempt-*.log")):
        if os.path.islink(os.path.dirname(path)):
            continue        # logs/latest
        base = zero = started = end = ready = notice = last = zerotext = None
        with open(path, errors="replace") as f:
            for n, line in enumerate(f):
                if n == 0:
                    m = FIRST.search(line)
                    if m is None:
                        break
                    base, zero = stamp(m.group(1)), stamp(m.group(2))
                    zerotext = m.group(2)
                    continue
                m = LINE.match(line.rstrip("\n"))
                if m is None:
                    continue
                off, who, text = float(m.group(1)), m.group(2), m.group(3)
                if who == "spotrun" and re.match(r"\d\d:\d\d  started  ", text):
                    started = off
                elif who == "spotrun" and notice is None and re.match(r"\d\d:\d\d  notice  ", text):
                    notice = base + off
                elif who == "err":
                    r = re.match(r"gangjob: rank \d+ ready ([0-9.]+) s ", text)
                    if r:
                        ready = float(r.group(1))
                    elif re.match(r"gangjob: rank \d+ did its last step", text):
                        last = off
                if who == "spotrun":
                    end = off
        if base is not None and end is not None:
            out.append({"zero": zero, "base": base, "started": started, "end": base + end,
                        "ready": ready, "notice": notice, "zerotext": zerotext,
                        "agent": path[len(top):].lstrip(os.sep).split(os.sep)[0],
                        "last": base + last if last is not None else None})
    return sorted(out, key=lambda r: r["zero"])


def nodes(top):
    """(agent folder, timeline 00:00) -> the node its run was, from each
    agent's log: its "this is node K" line, then its run's first line."""
    out = {}
    for path in glob.glob(os.path.join(top, "ag*.err")):
        agent = os.path.basename(path)[:-len(".err")] + ".d"
        node = None
        with open(path, errors="replace") as f:
            for line in f:
                m = NODE.search(line)
                if m:
                    node = int(m.group(1))
                    continue
                m = ZERO.search(line)
                if m and node is not None:
                    out[(agent, m.group(1))] = node
                    node = None
    return out


def starts(top, one):
    """The slowest rank's summed start-ups, less one (see the top)."""
    which = nodes(top)
    sums = {}
    for r in runs(top):
        if r["ready"] is not None:
            took = r["ready"]
        elif r["started"] is not None and r["notice"] is not None:
            took = max(0.0, min(r["notice"], r["end"]) - (r["base"] + r["started"]))
        else:
            continue
        rank = which.get((r["agent"], r["zerotext"]))
        if rank is None:
            sys.exit("gang-phases: %s: no agent's line says which node the run of %s was"
                     % (top, r["zerotext"]))
        sums[rank] = sums.get(rank, 0.0) + took
    return max(0.0, max(sums.values(), default=0.0) - one)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--starts":
        print("%.2f" % starts(sys.argv[2], float(sys.argv[3])))
        return 0
    if len(sys.argv) != 2:
        sys.exit("usage: gang-phases.py DIR | gang-phases.py --starts DIR ONE")
    rs = runs(sys.argv[1])
    epochs = []
    for r in rs:
        if epochs and r["zero"] < min(x["end"] for x in epochs[-1]):
            epochs[-1].append(r)
        else:
            epochs.append([r])
    sums = {"between": [], "setup": [], "launch": [], "ready": [], "spread": [], "stop": []}
    for i, e in enumerate(epochs):
        first = min(x["zero"] for x in e)
        sums["spread"].append(max(x["zero"] for x in e) - first)
        sums["setup"].extend(x["base"] - x["zero"] for x in e)
        sums["launch"].extend(x["started"] for x in e if x["started"] is not None)
        sums["ready"].extend(x["ready"] for x in e if x["ready"] is not None)
        notices = [x["notice"] for x in e if x["notice"] is not None]
        if notices:
            sums["stop"].append(max(x["end"] for x in e) - min(notices))
        if i > 0:
            sums["between"].append(max(0.0, first - max(x["end"] for x in epochs[i - 1])))
    mean = lambda v: sum(v) / len(v) if v else 0.0
    once = []
    try:
        with open(os.path.join(sys.argv[1], "t0")) as f:
            t0 = float(f.read())
        if epochs:
            once.append("first %.3f" % (min(x["zero"] for x in epochs[0]) - t0))
    except (OSError, ValueError):
        pass
    lasts = [x["last"] for x in epochs[-1] if x["last"] is not None] if epochs else []
    if lasts:
        once.append("end %.3f" % (max(x["end"] for x in epochs[-1]) - max(lasts)))
    once = "; " + ", ".join(once) if once else ""
    print("phases: %d epochs; mean s: between %.3f, setup %.3f, launch %.3f, ready %.3f, spread %.3f, "
          "stop %.3f%s"
          % (len(epochs), mean(sums["between"]), mean(sums["setup"]), mean(sums["launch"]),
             mean(sums["ready"]), mean(sums["spread"]), mean(sums["stop"]), once))
    return 0


if __name__ == "__main__":
    sys.exit(main())
