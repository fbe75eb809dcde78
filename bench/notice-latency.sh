#!/bin/sh
# notice-latency.sh: notice-to-signal latency per cloud provider: from the
# moment tests/mdemu (the metadata emulator, on loopback) starts serving the
# notice to the moment the job's SIGUSR1 handler runs, over N notices each
# (NOTICE_N, default 50): median, p99 and max. Each notice is one whole
# `spotrun run` (start, watch, notice, checkpoint, exit 75).
# Peers: aws-node-termination-handler polls IMDS every 2 s; SkyPilot's
# in-VM poller every 5 s, its managed-jobs controller every 15 s.
set -eu
N=${NOTICE_N:-50}
tmp=$(mktemp -d)
emu=
trap '[ -z "$emu" ] || kill $emu 2>/dev/null || :; rm -rf "$tmp"' EXIT
cat >"$tmp/job.py" <<'PY'
import os, signal, sys, time
out = sys.argv[1]
def on_request(sig, frame):
    with open(out, "w") as f:
        f.write("%.6f\n" % time.time())
    done = os.environ["SPOTRUN_CKPT_DONE"]
    with open(done + ".t", "w") as f:
        f.write("1\n")
    os.rename(done + ".t", done)
signal.signal(signal.SIGUSR1, on_request)
signal.signal(signal.SIGTERM, lambda s, f: sys.exit(0))
while True:
    time.sleep(0.01)
PY
one() { # provider emulator-option env-var index
	# The notice at a random phase of the polling: 0.5 s to 1 s after start.
	T=$(awk -v i="$4" 'BEGIN { srand(i); printf "%.3f", 0.5 + rand() * 0.5 }')
	"$top_builddir/tests/mdemu" -p "$tmp/port" -l "$tmp/emu.log" "$2" "$T" &
	emu=$!
	while [ ! -s "$tmp/port" ]; do sleep 0.02; done
	printf '[job]\nname = lat\ncommand = /usr/bin/python3 %s/job.py %s/got\n[checkpoint]\nstore = %s/store\nlocal_dir = %s/local\nmargin = 1s\n[provider]\nname = %s\n' \
		"$tmp" "$tmp" "$tmp" "$tmp" "$1" >"$tmp/job.ini"
	rm -f "$tmp/got"
	env "$3=http://127.0.0.1:$(cat "$tmp/port")" "$SPOTRUN" run -q "$tmp/job.ini" >/dev/null 2>&1 || true
	kill $emu; wait $emu 2>/dev/null || true
	emu=
	start=$(sed -n 's/^start //p' "$tmp/emu.log" | head -n 1)
	[ -s "$tmp/got" ] && awk -v s="$start" -v t="$T" '{ printf "%.6f\n", $1 - (s + t) }' "$tmp/got"
	rm -f "$tmp/port" "$tmp/emu.log"
}
for spec in "aws -T SPOTRUN_AWS_ENDPOINT" "gcp -G SPOTRUN_GCP_ENDPOINT" "azure -Z SPOTRUN_AZURE_ENDPOINT"; do
	set -- $spec
	: >"$tmp/lat"
	i=0
	while [ $i -lt "$N" ]; do
		one "$1" "$2" "$3" "$i" >>"$tmp/lat" || true
		i=$((i + 1))
	done
	sort -n "$tmp/lat" | awk -v p="$1" -v n="$N" '{ v[NR] = $1 } END {
		if (NR == 0) { printf "%-6s no notice reached the job\n", p; exit }
		m = v[int((NR + 1) / 2)]; q = v[int(NR * 0.99 + 0.999)]; if (q == "") q = v[NR]
		printf "%-6s %d of %d notices: median %.0f ms, p99 %.0f ms, max %.0f ms\n", p, NR, n, m * 1000, q * 1000, v[NR] * 1000 }'
done
