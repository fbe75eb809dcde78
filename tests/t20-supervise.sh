#!/bin/sh
# t20-supervise.sh: the supervisor's init semantics end to end, through
# tests/sup-driver (a tiny init over runner/supervise.c): exit codes and
# 128+N, exec failures, signals forwarded to the job's whole group, zombies
# reaped, and nothing of the job left running after it exits.

D=$(cd "${top_builddir:-.}" && pwd)/tests/sup-driver
if [ ! -x "$D" ]; then
	echo "Bail out! $D not built (make tests/sup-driver)"
	exit 1
fi
T=$(mktemp -d /tmp/t20-supervise.XXXXXX) || exit 1
cd "$T" || exit 1
# Leftovers of a failed test must not outlive it (nor hold its output).
killleft() {
	for f in p1 p2; do [ -s $f ] && kill -9 "$(cat $f)" 2>/dev/null; done
	rm -f p1 p2
}
trap 'killleft; cd /; rm -rf "$T"' EXIT
ulimit -c 0	# kill -SEGV, -QUIT, -ABRT: no core files

n=0
ok() {	# ok COND-STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}
is() {	# is GOT WANT DESCRIPTION
	n=$((n + 1))
	if [ "$1" = "$2" ]; then
		echo "ok $n - $3"
	else
		echo "not ok $n - $3"
		echo "# got '$1', want '$2'"
	fi
}
ms() { echo $(($(date +%s%N) / 1000000)); }
gone() { ! kill -0 "$1" 2>/dev/null; }
# A failing test must not hang: kill the driver (and the job's group, whose
# leader wrote its pid to jobpid) after 20 s.
watchdog() {
	( sleep 20 & sp=$!
	  trap 'kill $sp; exit' TERM
	  wait $sp; kill -9 -"$(cat jobpid)" "$1" ) >/dev/null 2>&1 &
	wd=$!
}
# Wait (at most 20 s) for a file to exist.
waitfor() {
	i=0
	while [ ! -s "$1" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
}

# Exit codes 0..255 pass through.
bad=
for c in $(seq 0 255); do
	"$D" sh -c "exit $c"
	rc=$?
	[ $rc -eq "$c" ] || bad="$bad $c->$rc"
done
is "$bad" "" "every exit code 0..255 passes through"

# Killed by signal N: 128+N.
for s in HUP:1 INT:2 QUIT:3 KILL:9 SEGV:11 TERM:15 USR1:10 PIPE:13 ABRT:6; do
	name=${s%:*} num=${s#*:}
	"$D" sh -c "kill -s $name \$\$; exit 3" 2>/dev/null
	is $? $((128 + num)) "killed by SIG$name: $((128 + num))"
done

# Exec failures.
mkdir bin dir
printf '#!/bin/sh\nexit 7\n' > bin/tool
chmod 755 bin/tool
printf '#!/bin/sh\nexit 6\n' > noexec
"$D" t20-no-such-command 2> err
is $? 127 "command not found: 127"
is "$(cat err)" "sup-driver: t20-no-such-command: No such file or directory" \
	"command not found: message"
"$D" ./noexec 2> err
is $? 126 "non-executable file: 126"
is "$(cat err)" "sup-driver: ./noexec: Permission denied" "non-executable file: message"
"$D" ./dir 2>/dev/null
is $? 126 "a directory: 126"
env PATH="$T/bin" "$D" tool
is $? 7 "the command is looked up in the job's PATH"
env PATH=/nonexistent "$D" sh -c true 2>/dev/null
is $? 127 "... and only there"

# Signals sent to the supervisor reach every process of the job's group:
# the leader and its child both trap the signal and record it.
for s in TERM INT HUP QUIT; do
	rm -f log ready jobpid
	"$D" sh -c "echo \$\$ > jobpid; trap 'echo leader >> log; exit 42' $s
		sh -c \"trap 'echo child >> log; exit 3' $s; echo > ready
			while :; do sleep 0.05; done\"
		echo after >> log" >/dev/null 2>&1 &
	pid=$!
	watchdog $pid
	waitfor ready
	kill -s $s $pid
	wait $pid
	is $? 42 "SIG$s forwarded: the job's trap exit code"
	kill $wd
	is "$(cat log 2>/dev/null | tr '\n' ' ')" "child leader " \
		"SIG$s reached the leader and its child"
done

# Zombies: 30 children exit while their parent (a sleep) never waits, then
# the parent exits: they are reparented to the supervisor, which reaps them.
rm -f ready jobpid
"$D" sh -c 'echo $$ > jobpid; sh -c "for i in \$(seq 30); do true & done; exec sleep 0.3"
	echo > ready; exec sleep 1000' >/dev/null 2>&1 &
pid=$!
watchdog $pid
waitfor ready
sleep 0.2
z=0
for f in /proc/[0-9]*/stat; do
	{ read -r line < "$f"; } 2>/dev/null || continue
	set -- ${line##*) }
	[ "$2" = "$pid" ] && [ "$1" = Z ] && z=$((z + 1))
done
is $z 0 "no zombie child of the supervisor while the job runs"
kill -TERM $pid
wait $pid
is $? 143 "the job killed by the forwarded SIGTERM: 143"
kill $wd

# What the job leaves behind is gone when the supervisor exits: a process
# that escaped the group with setsid, and one in the background of the
# group, each a shell that notes the SIGTERM it gets (a marker file) and
# exits. The grace before SIGKILL is 60 s, so that on a loaded machine
# too the markers say SIGTERM came first (not how fast).
rm -f term1 term2
"$D" -g 60 sh -c 'setsid sh -c "trap \"echo TERM > term1; exit 0\" TERM; echo \$\$ > p1; while :; do sleep 1 & wait; done" &
	sh -c "trap \"echo TERM > term2; exit 0\" TERM; echo \$\$ > p2; while :; do sleep 1 & wait; done" &
	while [ ! -s p1 ] || [ ! -s p2 ]; do sleep 0.02; done; exit 7' \
	</dev/null >/dev/null 2>&1
rc=$?
is $rc 7 "the exit code is the job's, with processes left behind"
ok "$(gone "$(cat p1)"; echo $?)" "the setsid'd process is gone"
ok "$(gone "$(cat p2)"; echo $?)" "the background process is gone"
is "$(cat term1 term2 2>/dev/null | tr '\n' ' ')" "TERM TERM " "both stopped by SIGTERM, not by the SIGKILL after the grace"
killleft

# A leftover that ignores SIGTERM is SIGKILLed after the grace period.
t0=$(ms)
"$D" -g 0.5 sh -c 'setsid sh -c "trap \"\" TERM; echo \$\$ > p1; exec sleep 1000" &
	while [ ! -s p1 ]; do sleep 0.02; done; exit 9' </dev/null >/dev/null 2>&1
rc=$?
t=$(($(ms) - t0))
is $rc 9 "the exit code is the job's, with a TERM-ignoring leftover"
ok "$(gone "$(cat p1)"; echo $?)" "the TERM-ignoring leftover is gone"
# not before the grace; the upper bound only says it did not wait for
# the leftover's sleep of 1000 s (a loaded machine may take seconds)
ok "$([ $t -ge 500 ] && [ $t -lt 60000 ]; echo $?)" \
	"SIGKILL after the 0.5 s grace, not before, nor at the leftover's end ($t ms)"

echo "1..$n"
