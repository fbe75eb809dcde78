#!/bin/sh
# ranks.sh: a job of 1, 2, 4 and 8 CPU ranks (examples/pytorch/ddp.py, gloo,
# its optimizer state sharded across the ranks) preempted once by the local
# provider (a notice file, touched once rank 0 has trained 20 steps), RANKS_N
# times each (default 3): median and range of
#  - notice -> commit: from the notice to the commit of the checkpoint every
#    rank wrote its part of (the attempt's log: both lines stamped there);
#  - start -> training: from the next machine's start (its attempt log opens,
#    then the restore, the spawn of the ranks, their `import torch`, the
#    gloo rendezvous, the resharded load) to rank 0's first step, the step
#    every rank takes together (DDP's all-reduce): all ranks training again.
#    The rank's log opens within a millisecond of the attempt's, so their
#    stamps are compared as one clock.
# Environment: RANKS (default "1 2 4 8"), RANKS_N, SPOTRUN, top_srcdir.
set -eu
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${SPOTRUN:=$PWD/spotrun}"
. "$top_srcdir/bench/lib.sh"
. "$top_srcdir/tests/jobs/no-cloud.sh"
N=${RANKS_N:-3}
tmp=$(mktemp -d)
[ -n "${RANKS_KEEP:-}" ] && echo "ranks.sh: keeping $tmp" >&2
trap '[ -n "${RANKS_KEEP:-}" ] || rm -rf "$tmp"' EXIT
res=$tmp/res
: >"$res"
PYTHONPATH=$top_srcdir/python${PYTHONPATH:+:$PYTHONPATH}
GLOO_SOCKET_IFNAME=lo
export PYTHONPATH GLOO_SOCKET_IFNAME

# stamp FILE REGEX: the +SSSS.sss of the first line of FILE matching REGEX.
stamp() { sed -nE "s/^\+([0-9]+\.[0-9]+) $2.*/\1/p" "$1" | head -n 1; }

one() {	# one PROCS I
	d=$tmp/run-$1-$2
	mkdir -p "$d"
	printf '[job]\nname = ranks\ncommand = /usr/bin/python3 %s/examples/pytorch/ddp.py --steps 100 --sleep 0.02 --every 1\nworkdir = %s\n[resources]\nprocs = %s\n[checkpoint]\nstore = file://%s/store\nlocal_dir = %s/local\n[provider]\nname = local\nwindow = 60s\nnotice_file = %s/notice\n' \
		"$top_srcdir" "$d" "$1" "$d" "$d" "$d" >"$d/job.ini"
	"$SPOTRUN" run "$d/job.ini" >"$d/out" 2>"$d/err" &
	pid=$!
	while ! grep -qE '^(\[0\] )?step 20 loss' "$d/out" 2>/dev/null; do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	touch "$d/notice"
	wait "$pid" || { echo "ranks.sh: procs = $1 failed:" >&2; tail -5 "$d/err" >&2; return 0; }
	logs=$d/local/logs/latest
	n0=$(stamp "$logs/attempt-1.log" 'spotrun [0-9:]+  notice ')
	c0=$(stamp "$logs/attempt-1.log" 'spotrun [0-9:]+  ckpt     [0-9]+ step [0-9]+: .* committed')
	r0=$logs/attempt-2.rank-0.log
	[ -f "$r0" ] || r0=$logs/attempt-2.log
	t0=$(stamp "$r0" 'out step [0-9]+ loss')
	[ -n "$n0" ] && [ -n "$c0" ] && rec "commit-$1" "$(secs "$n0" "$c0")"
	[ -n "$t0" ] && rec "train-$1" "$t0"
	return 0
}

for p in ${RANKS:-1 2 4 8}; do
	i=0
	while [ $i -lt "$N" ]; do
		one "$p" "$i"
		i=$((i + 1))
	done
done
awk "$bench_stats_awk"'
{ cnt[$1]++; val[$1, cnt[$1]] = $2 }
END {
	printf "%-6s %-28s %-28s\n", "ranks", "notice -> commit (s)", "start -> training (s)"
	split("1 2 4 8", ps, " ")
	for (i = 1; i <= 4; i++) {
		p = ps[i]
		if (!(("commit-" p) in cnt) && !(("train-" p) in cnt)) continue
		c = ("commit-" p) in cnt ? sprintf("%.3f (%s, n=%d)", median("commit-" p), range("commit-" p), cnt["commit-" p]) : "-"
		t = ("train-" p) in cnt ? sprintf("%.2f (%s, n=%d)", median("train-" p), range("train-" p), cnt["train-" p]) : "-"
		printf "%-6s %-28s %-28s\n", p, c, t
	}
}' "$res"
