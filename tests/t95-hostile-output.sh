#!/bin/sh
# t95-hostile-output.sh: what a hostile queue or store holds reaches the
# terminal escaped (common/termsafe.c), never obeyed: a status marker's host
# that would set the terminal's title, clear the screen and forge a row of
# the table (ESC, BEL, a newline, a C1 CSI, a bidirectional override, a
# byte that is not UTF-8) in `spotrun status`, and valid ASCII JSON in
# --json; a log segment's key in the header of `spotrun logs`, and an error
# quoting the queue, while the job's output itself is printed as shipped;
# an attempt record's run, outcome and machine in `spotrun ls -a`, and a
# LATEST of such bytes in the warning of `spotrun ls`. Each output exactly,
# and no ESC, BEL or C1 byte in any of them.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/jobs/fleet.sh"
t_setup
S=$SPOTRUN
T=$t_tmp
export HOME=$T/home XDG_DATA_HOME=$T/data XDG_CONFIG_HOME=$T/config TZ=UTC
unset SPOTRUN_QUEUE
mkdir -p "$HOME"
Q=$T/q
QU=file://$Q

# inert NAME DESC: neither output of the last run holds ESC, BEL, CSI
# (C1, as UTF-8 or a raw byte) or a newline inside a line it did not end.
inert() {
	if LC_ALL=C grep -q "$(printf '[\033\007\233]')" "$T/$1.out" "$T/$1.err"; then
		t_result 1 "$2"
		t_diag "a control byte reached the terminal:"
		od -c "$T/$1.out" "$T/$1.err" | head -n 20 | sed 's/^/#   /'
	else
		t_result 0 "$2"
	fi
}

# --- status: a marker's host -----------------------------------------------
printf '[job]\nname = evil\ncommand = /bin/true\n' > "$T/evil.ini"
"$S" submit --create --queue "$Q" "$T/evil.ini" > /dev/null 2>&1 || t_bail "submit to $Q"
host=$(printf '\033]0;pwned\007\033[2J\nevil.2  succeeded \302\233H\342\200\256x\377')
$H status "$QU" evil running 1 1 0 3600 0 0.5 2.05 120 "$host" || t_bail "status marker"
t_is "$(cd "$Q/index" && ls)" \
	"evil~000000000001~$(cd "$Q/index" && ls | sed -n 's/^evil~000000000001~\([0-9]*\)~.*/\1/p')~running~1~0~3600~0~0.5000~2.0500~120~%1B%5D0%3Bpwned%07%1B%5B2J%0Aevil.2%20%20succeeded%20%C2%9BH%E2%80%AEx%FF" \
	"the marker holds the host percent-encoded, as the queue's own writer puts it"
run st "$S" status --queue "$Q"
expect st 0 "queue $QU (from --queue)

jobs: 1 (1 running)
JOB    STATE     ATTEMPTS PREEMPTED GPU-HOURS    LOST      COST ON-DEMAND     STEP  HOST
evil   running          1         0      1.00    0.00     \$0.50     \$2.05      120  \\x1b]0;pwned\\x07\\x1b[2J\\x0aevil.2  succeeded \\u{9b}H\\u{202e}x\\xff
total                   1         0      1.00    0.00     \$0.50     \$2.05

all: 1 job (1 running), 1 attempt, 0 preemptions, 1.00 GPU-hours used, 0.00 lost; cost \$0.50, on demand \$2.05, saved \$1.55 (76%)" "" \
	"status: the host's ESC, BEL, newline, C1, bidirectional override and bad byte escaped, on its one row"
inert st "... no control byte reaches the terminal"
$H status "$QU" evil2 queued 0 0 0 0 0 0 0 -1 "$(printf 'a\302\2332J\177\342\200\256b')" || t_bail "marker 2"
run sj "$S" status --json --queue "$Q"
t_is "$rc|$(LC_ALL=C grep -c '[^ -~]' "$T/sj.out")|$(grep -c '"a\\u009B2J\\u007F\\u202Eb"' "$T/sj.out")|$("$PY" -c 'import json,sys; print(" ".join(ascii(j["host"]) for j in json.load(open(sys.argv[1]))["jobs"]))' "$T/sj.out")" \
	"0|0|1|'\\x1b]0;pwned\\x07\\x1b[2J\\nevil.2  succeeded ??H???x?' 'a\\x9b2J\\x7f\\u202eb'" \
	"status --json: valid JSON in printable ASCII (C1, DEL, U+202E as \\uXXXX), the hosts read back (one not UTF-8: its bytes above 0x7f as '?')"

# --- logs: a segment's key in the header, an error quoting the queue ----------
printf 'step 1\n' | $H log "$QU" evil 1 1 || t_bail "log segment"
printf 'raw \033[1mbody\033[0m\n' > "$Q/logs/evil/zz$(printf '\302\233')2J$(printf '\342\200\256')"
run l "$S" logs --queue "$Q" evil
expect l 0 "==> evil: run 1, attempt 1 <==
step 1
==> evil: logs/evil/zz\\u{9b}2J\\u{202e} <==
raw $(printf '\033')[1mbody$(printf '\033')[0m" "" \
	"logs: a segment of a stranger's key named escaped in its header; the body as shipped"
# On a terminal (a pty of script(1)) the job's bytes are escaped as the
# header is, but for newline, tab and carriage return; --raw, as shipped.
printf 'bar\r50%%\tdone \302\233x \377 caf\303\251 \033]0;pwned\007\n' | $H log "$QU" evil 1 2 ||
	t_bail "log segment"
script -qec "$S logs --queue $Q evil" /dev/null > "$T/lt.out" 2>&1
t_is "$?|$(sed 's/\r$//' "$T/lt.out")" "0|==> evil: run 1, attempt 1 <==
step 1
==> evil: run 1, attempt 2 <==
bar$(printf '\r')50%$(printf '\t')done \\u{9b}x \\xff $(printf 'caf\303\251') \\x1b]0;pwned\\x07
==> evil: logs/evil/zz\\u{9b}2J\\u{202e} <==
raw \\x1b[1mbody\\x1b[0m" "logs on a terminal: the job's escape sequences, C1 controls and stray bytes escaped; CR and tab kept" ||
	od -c "$T/lt.out" | head -n 20 | sed 's/^/#   /'
script -qec "$S logs --raw --queue $Q evil" /dev/null > "$T/lr.out" 2>&1
t_is "$?|$(LC_ALL=C grep -c "$(printf '\033')\[1mbody" "$T/lr.out")" "0|1" "logs --raw on a terminal: as shipped"
rm -f "$Q"/logs/evil/*-0002-*
printf 'x\n' > "$Q/logs/evil/zz$(printf '\033')]0;pwned$(printf '\007')"
run l "$S" logs --queue "$Q" evil
t_is "$rc|$(cat "$T/l.err")" \
	"74|spotrun: queue $QU (from --queue): log of evil: get logs/evil/zz\\x1b]0;pwned\\x07: invalid key: control character 0x1b at byte 12" \
	"logs: an error quoting a key of control characters, escaped"
inert l "... no control byte reaches the terminal"

# --- ls: an attempt record and a LATEST of the store ----------------------------
ST=$T/st
mkdir -p "$ST/evil/attempts"
cat > "$ST/evil/attempts/1700000000-42-0001.json" <<'EOF'
{"run": "1700000000-42\u001b[2J", "attempt": 1, "vm": 1, "started": 1700000000,
 "ended": 1700000060, "outcome": "exit 0\u001b]0;pwned\u0007", "exit_code": 0,
 "restored_step": -1, "checkpoints": 0, "ranks": 1, "gpus": 0, "gpu_model": "",
 "machine": {"provider": "local\u009b", "instance_id": "i-\u202e1", "instance_type": "t\nforged",
 "zone": "z\u001b[31m", "lifecycle": "spot"}}
EOF
run a "$S" ls -a -s "file://$ST" evil
expect a 0 "RUN                  ATTEMPT STARTED                 TIME FROM      VM      CKPTS OUTCOME    MACHINE
1700000000-42\\x1b[2J 1       2023-11-14 22:13:20    1m00s fresh     1       0     exit 0\\x1b]0;pwned\\x07 local\\u{9b} i-\\u{202e}1, t\\x0aforged, z\\x1b[31m, spot" "" \
	"ls -a: a record's run, outcome and machine escaped, the RUN column as wide as the escaped run"
inert a "... no control byte reaches the terminal"
printf '\302\2332J\342\200\256' > "$ST/evil/LATEST"
run c "$S" ls -s "file://$ST" evil
expect c 0 "no checkpoints of job evil in file://$ST" \
	"spotrun: warning: evil/LATEST is not a checkpoint number (it holds \"\\u{9b}2J\\u{202e}\"): every manifest counts as committed and the newest is the latest; the next save rewrites LATEST" \
	"ls: a LATEST of C1 and bidirectional bytes quoted escaped in the warning"
inert c "... no control byte reaches the terminal"
t_done
