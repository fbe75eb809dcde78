#!/bin/sh
# t10-check.sh: `spotrun check [-q] JOB.ini ...`: exit codes (0 all valid,
# 65 any invalid, 64 usage), "FILE: ok" on stdout, every error as
# FILE:LINE: message on stderr, nothing run; the shipped examples and the
# test job files pass or fail as they should.
#
# The harness exports SPOTRUN and top_srcdir; by hand:
#   SPOTRUN=$PWD/spotrun top_srcdir=/path/to/src sh /path/to/src/tests/t10-check.sh
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${SPOTRUN:=$PWD/spotrun}"
data=$top_srcdir/tests/jobspec

if [ ! -x "$SPOTRUN" ]; then
	echo "Bail out! no spotrun binary at $SPOTRUN (run 'make spotrun' first)"
	exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t10-check.XXXXXX") || { echo "Bail out! mktemp"; exit 1; }
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

n=0
failed=0
result() {	# result OK DESC: one TAP line; OK is an exit status (0 = pass)
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

# check WANT_CODE WANT_STDOUT WANT_STDERR DESC ARGS...: run `spotrun check
# ARGS` in $tmp and compare its exit code and both outputs exactly.
check() {
	want_code=$1 want_out=$2 want_err=$3 desc=$4
	shift 4
	(cd "$tmp" && "$SPOTRUN" check "$@" > out 2> err)
	code=$?
	result "$([ "$code" -eq "$want_code" ]; echo $?)" "$desc: exit $want_code"
	[ "$code" -eq "$want_code" ] || echo "# got exit $code"
	result "$([ "$(cat "$tmp/out")" = "$want_out" ]; echo $?)" "$desc: stdout"
	[ "$(cat "$tmp/out")" = "$want_out" ] || sed 's/^/# got: /' "$tmp/out"
	result "$([ "$(cat "$tmp/err")" = "$want_err" ]; echo $?)" "$desc: stderr"
	[ "$(cat "$tmp/err")" = "$want_err" ] || sed 's/^/# got: /' "$tmp/err"
}

printf '[job]\nname = good\ncommand = python3 train.py\n' > "$tmp/good.ini"
printf '[job]\nname = other\ncommand = true\n[checkpoint]\ninterval = 20m\n' > "$tmp/other.ini"
cat > "$tmp/bad.ini" <<'EOF'
[job]
name = bad
command = python3 "train.py
[checkpoint]
interval = 20 minutes
intervall = 5m
EOF
bad_err="bad.ini:3: command: unterminated double quote at character 9; close it, or write \\\" for a literal quote
bad.ini:5: interval = 20 minutes: not a duration; use a number with a unit s, m, h (e.g. 20m)
bad.ini:6: unknown key 'intervall' in [checkpoint]; did you mean 'interval'? Valid keys: mode, interval, keep, store, local_dir, signal, write_timeout, chunk_size, level, margin"
usage="usage: spotrun check [-q] JOB.ini ..."

check 0 "good.ini: ok" "" "one valid file" good.ini
check 0 "" "" "-q: a valid file prints nothing" -q good.ini
check 0 "good.ini: ok
other.ini: ok" "" "two valid files" good.ini other.ini
check 65 "" "$bad_err" "an invalid file: every error, with its line" bad.ini
check 65 "" "$bad_err" "-q still prints the errors" -q bad.ini
check 65 "good.ini: ok
other.ini: ok" "$bad_err" "valid and invalid files: each one checked" good.ini bad.ini other.ini
check 65 "" "missing.ini: cannot open: No such file or directory" "a missing file" missing.ini
# Special files: refused by their kind, never opened in a way that blocks
# (a FIFO without a writer hung `check` forever); the timeout turns a hang
# into a failure.
mkfifo "$tmp/fifo.ini"
mkdir "$tmp/dir.ini"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$tmp/sock.ini"
for sp in "fifo.ini:a FIFO" "dir.ini:a directory" "sock.ini:a socket" "/dev/null:a character device"; do
	f=${sp%%:*} kind=${sp#*:}
	(cd "$tmp" && timeout 10 "$SPOTRUN" check "$f" > out 2> err)
	code=$?
	result "$([ "$code" -eq 65 ] && [ ! -s "$tmp/out" ] && [ "$(cat "$tmp/err")" = \
	    "$f: is $kind, not a regular file; a job file is a short text file" ]; echo $?)" \
	    "$kind as the job file: exit 65 at once, the kind named"
	[ "$code" -eq 65 ] || echo "# got exit $code: $(cat "$tmp/err")"
done
rm -rf "$tmp/fifo.ini" "$tmp/dir.ini" "$tmp/sock.ini"
(cd "$tmp" && "$SPOTRUN" check > out 2> err)
result "$([ $? -eq 64 ] && [ "$(cat "$tmp/err")" = "$usage" ] && [ ! -s "$tmp/out" ]; echo $?)" \
	"no argument at all: exit 64 and the usage line"
(cd "$tmp" && "$SPOTRUN" check -Z good.ini > out 2> err)
result "$([ $? -eq 64 ] && grep -qxF "$usage" "$tmp/err"; echo $?)" "an unknown option: exit 64 and the usage line"

# Checking runs nothing, even a valid job whose command would leave a trace.
printf '[job]\nname = trace\nshell = yes\ncommand = touch %s/ran\n' "$tmp" > "$tmp/trace.ini"
check 0 "trace.ini: ok" "" "a job that would touch a file" trace.ini
result "$([ ! -e "$tmp/ran" ]; echo $?)" "check did not run the job"

# Sweeps: check counts the trials; run refuses a sweep (exit 64) and runs
# nothing, pointing to submit; a ${name} that names no parameter is an
# error of check (and of run) at its line.
cat > "$tmp/sweep.ini" <<EOF
[job]
name = lora
shell = yes
command = touch $tmp/ran-\${lr}
[sweep]
lr = 0.1, 0.01
seed = 1..3
EOF
printf '[job]\nname = one\ncommand = echo ${x}\n[sweep]\nx = a\n' > "$tmp/one.ini"
printf '[job]\nname = typo\ncommand = train --lr ${lrr}\n[sweep]\nlr = 1, 2\n' > "$tmp/typo.ini"
typo_err="typo.ini:3: command: \${lrr} is not a parameter of [sweep] (lr); write \$\${lrr} for a literal \${lrr}"
check 0 "sweep.ini: ok: sweep lora, 6 trials" "" "a sweep: its name and number of trials" sweep.ini
check 0 "one.ini: ok: sweep one, 1 trial" "" "a sweep of one trial" one.ini
check 0 "" "" "-q: a valid sweep prints nothing" -q sweep.ini
check 65 "" "$typo_err" "a sweep whose command names no parameter" typo.ini
(cd "$tmp" && "$SPOTRUN" run sweep.ini > out 2> err)
code=$?
result "$([ $code -eq 64 ]; echo $?)" "run on a sweep: exit 64 (got $code)"
want="spotrun: sweep.ini: a sweep of 6 trials, not started; spotrun run runs one job; submit a sweep with spotrun submit sweep.ini (spotrun agent runs its trials)"
result "$([ "$(cat "$tmp/err")" = "$want" ] && [ ! -s "$tmp/out" ]; echo $?)" \
	"run on a sweep: says so and points to submit, on stderr only"
[ "$(cat "$tmp/err")" = "$want" ] || sed 's/^/# got: /' "$tmp/err"
result "$(ls "$tmp" | grep -q '^ran-' && echo 1 || echo 0)" "run on a sweep: no trial ran"
(cd "$tmp" && "$SPOTRUN" run typo.ini > out 2> err)
code=$?
result "$([ $code -eq 65 ] && [ "$(head -n 1 "$tmp/err")" = "$typo_err" ]; echo $?)" \
	"run on a sweep with an error: exit 65 and the error (got $code)"

# Every shipped example, and the parser's test files, go the expected way.
# A sweep says so, with its name and its number of trials. A pool file
# (examples/pool-*.ini, spotrun-pool(5)) is no job: t99-up-dry.sh has it.
for f in "$top_srcdir"/examples/*.ini "$top_srcdir"/examples/*/*.ini "$data"/good-*.ini; do
	[ -e "$f" ] || continue
	case $f in */examples/pool-*.ini) continue ;; esac
	out=$("$SPOTRUN" check "$f" 2>&1)
	code=$?
	want="$f: ok"
	if grep -q '^\[sweep\]' "$f"; then
		want="$f: ok: sweep $(sed -n 's/^name = //p' "$f" | head -n 1), $(sed -n 's/^; trials: //p' "$f") trials"
	fi
	result "$([ $code -eq 0 ] && [ "$out" = "$want" ]; echo $?)" "valid: ${f#"$top_srcdir"/}"
	[ "$out" = "$want" ] || printf '%s\n' "$out" | sed 's/^/# /'
done
# The job files shown in doc/spotrun-job.5 (SYNOPSIS and EXAMPLES) are valid.
if command -v groff > /dev/null 2>&1; then
	groff -mdoc -Tutf8 -P-c -P-b -P-u "$top_srcdir/doc/spotrun-job.5" 2> /dev/null > "$tmp/man.txt"
	sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' "$tmp/man.txt" | sed -n '/^     \[job\]/,/^$/p' |
		sed 's/^     //' > "$tmp/man-0.ini"
	sed -n '/^EXAMPLES/,/^[A-Z][A-Z ]*$/p' "$tmp/man.txt" | awk -v dir="$tmp" '
		/^           / { if (!inblk) { n++; inblk = 1 }
			sub(/^           /, ""); print > (dir "/man-" n ".ini"); next }
		/^$/ { next }
		{ inblk = 0 }'
	for f in "$tmp"/man-*.ini; do
		out=$("$SPOTRUN" check "$f" 2>&1)
		result "$([ $? -eq 0 ] && [ -s "$f" ]; echo $?)" "man page example ${f##*/} is valid"
		[ "$out" = "$f: ok" ] || printf '%s\n' "$out" | sed 's/^/# /'
	done
	result "$([ -e "$tmp/man-5.ini" ]; echo $?)" "the man page shows a synopsis and 5 examples"
else
	result 0 "# SKIP man page examples: no groff"
fi
for f in "$data"/bad-*.ini; do
	"$SPOTRUN" check -q "$f" > "$tmp/out" 2> "$tmp/err"
	code=$?
	lines=$(grep -c "^$f:[0-9]*: " "$tmp/err")
	result "$([ "$code" -eq 65 ] && [ "$lines" -ge 5 ] && [ ! -s "$tmp/out" ]; echo $?)" \
		"invalid: ${f#"$top_srcdir"/} (exit $code, $lines errors with line numbers)"
done
echo "1..$n"
[ "$failed" -eq 0 ]
