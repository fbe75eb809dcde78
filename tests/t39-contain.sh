#!/bin/sh
# t39-contain.sh: no process of a job outlives its spotrun (runner/contain.h).
# A job whose command is a wrapper that forks, double-forks, calls setsid()
# and clears its environment: its processes are gone once spotrun is killed
# with SIGKILL (the keeper kills the run's cgroup), and once spotrun is
# stopped with SIGSTOP past its lease (the keeper acts before another
# machine could take the job over). A run that ends as it should leaves no
# keeper and no cgroup. A job that ends on its own while spotrun is stopped
# past its lease: resumed, spotrun sets the lease succeeded when no other
# run took the job, and writes nothing when one did. An agent stopped (not its job) past its lease: its
# job is stopped, another agent takes it over and finishes it, every step
# once, and the first, resumed, writes nothing. Each case waits for the
# event it checks, bounded.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup

# gone PID SECONDS: wait until PID is no more (a zombie counts as gone).
gone() {
	_i=0
	while [ "$_i" -lt "$(($2 * 10))" ]; do
		if ! kill -0 "$1" 2>/dev/null || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; then
			return 0
		fi
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# keeper_nice ENTRY: the nice value of the keeper of the run whose job
# carries ENTRY (field 19 of /proc/PID/stat).
keeper_nice() {
	for _p in /proc/[0-9]*; do
		_c=$( (tr '\0' ' ' < "$_p/cmdline") 2>/dev/null) || continue
		case $_c in *"__keeper "*"$1"*) sed 's/.*) //' "$_p/stat" | awk '{print $17}'; return ;; esac
	done
	echo none
}

# keeper_pid ENTRY: the pid of the keeper of the run whose job carries
# ENTRY, or none.
keeper_pid() {
	for _p in /proc/[0-9]*; do
		_c=$( (tr '\0' ' ' < "$_p/cmdline") 2>/dev/null) || continue
		case $_c in *"__keeper "*"$1"*) echo "${_p#/proc/}"; return ;; esac
	done
	echo none
}

# keepers ENTRY: how many keepers of the run whose job carries ENTRY run.
keepers() {
	_n=0
	for _p in /proc/[0-9]*; do
		_c=$( (tr '\0' ' ' < "$_p/cmdline") 2>/dev/null) || continue
		case $_c in *"__keeper "*"$1"*) _n=$((_n + 1)) ;; esac
	done
	echo "$_n"
}

# A job whose processes hide: the shell forks a subshell that starts a
# session of its own, clears its environment (no SPOTRUN_CKPT_DIR to be
# found by) and writes its pid, then waits; a plain background sleep
# beside it. Neither is the job's process group any more.
wrapper='setsid sh -c "echo \$\$ > hidden.pid; exec env -i sleep 1000" & (sleep 1000 & echo $! > orphan.pid); sleep 1000'

mkjob() {	# NAME
	mkdir -p "$t_tmp/$1"
	printf '[job]\nname = %s\ncommand = %s\nshell = yes\nworkdir = %s\n[checkpoint]\nstore = file://%s/store\nlocal_dir = %s/local-%s\n[provider]\nname = local\n' \
	    "$1" "$wrapper" "$t_tmp/$1" "$t_tmp" "$t_tmp" "$1" > "$t_tmp/$1.ini"
}

# started NAME PID: wait for both hidden processes' pids.
started() {
	wait_for "$t_tmp/$1/hidden.pid" '^[0-9]+$' 30 "$2" && wait_for "$t_tmp/$1/orphan.pid" '^[0-9]+$' 30 "$2"
}

# 1. spotrun killed outright
mkjob kill9
t_bg kill9 "$SPOTRUN" run "$t_tmp/kill9.ini"
a=$t_last
started kill9 "$a" || t_diag "kill9: the job did not start its processes"
h=$(cat "$t_tmp/kill9/hidden.pid"); o=$(cat "$t_tmp/kill9/orphan.pid")
t_result "$(kill -0 "$h" && kill -0 "$o"; echo $?)" "kill9: the job's hidden processes run ($h, $o)"
# the keeper, started through a child that shares spotrun's memory
# (runner/vclone.h): reparented away, in a session of its own, and with
# no signal blocked (spotrun blocks them all across the start)
k=$(keeper_pid "SPOTRUN_CKPT_DIR=$t_tmp/local-kill9/ckpt")
kst=$(sed 's/.*) //' "/proc/$k/stat" 2>/dev/null)
t_result "$([ "$(echo "$kst" | awk '{print $2}')" != "$a" ] && [ -n "$kst" ]; echo $?)" \
    "kill9: the keeper ($k) is not spotrun's child"
t_is "$(echo "$kst" | awk '{print $4}')" "$k" "kill9: ... leads a session of its own"
t_is "$(sed -n 's/^SigBlk:[[:space:]]*//p' "/proc/$k/status" 2>/dev/null)" 0000000000000000 \
    "kill9: ... and blocks no signal"
# its own program (runner/keeper-main.c), started from memory, unless
# this machine forbids executable memory files (vm.memfd_noexec=2): then
# spotrun itself, as case 5 checks
if [ "$(cat /proc/sys/vm/memfd_noexec 2>/dev/null || echo 0)" = 2 ]; then
	t_is "$(readlink "/proc/$k/exe")" "$(readlink -f "$SPOTRUN")" \
	    "kill9: ... runs spotrun itself where memory files may not be executed"
	t_skip "kill9: the keeper's own program needs executable memory files (vm.memfd_noexec=2 here)"
else
	t_is "$(readlink "/proc/$k/exe")" "/memfd:spotrun-keeper (deleted)" \
	    "kill9: ... runs its own program, from memory"
	t_is "$(grep -cE 'libcurl|libcrypto' "/proc/$k/maps")" 0 \
	    "kill9: ... which maps neither libcurl nor libcrypto"
fi
how=$(sed -nE 's/^[0-9:]+  contain  (.*)$/\1/p' "$t_tmp/kill9.err")
t_like "$t_tmp/kill9.err" "^[0-9:]+  contain  (cgroup /.*/spotrun-$a-[0-9a-f]+|processes found by environment \\(no cgroup: .*\\))\$" \
    "kill9: the timeline says how the run is contained: $how"
case $how in
cgroup*) cg=${how#cgroup } ;;
*) cg= ;;
esac
kill -KILL "$a"
t_wait "$a"
if [ -n "$cg" ]; then
	t_result "$(gone "$h" 30; echo $?)" "kill9: after SIGKILL of spotrun the session leader with no environment is gone"
else
	t_skip "kill9: a process that clears its environment is found only through a cgroup (none here)"
	kill -KILL "$h" 2>/dev/null
fi
t_result "$(gone "$o" 30; echo $?)" "kill9: ... the orphaned background process too"
t_is "$(keepers "SPOTRUN_CKPT_DIR=$t_tmp/local-kill9/ckpt")" 0 "kill9: ... and the keeper ended"
if [ -n "$cg" ]; then
	i=0
	while [ -d "$cg" ] && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	t_result "$([ ! -d "$cg" ]; echo $?)" "kill9: ... and removed the run's cgroup"
	t_like "$t_tmp/kill9.err" "^spotrun: keeper: its spotrun ended without a word \\(killed\\): killed [0-9]+ processes of the job \\(SPOTRUN_CKPT_DIR=$t_tmp/local-kill9/ckpt\\)\$" \
	    "kill9: ... saying so"
else
	t_skip "kill9: no cgroup to remove"
	t_skip "kill9: the keeper's line"
fi

# 2. spotrun stopped past its lease: the keeper stops the job before the
#    lease could pass to another machine, while spotrun stays stopped
mkjob stop
SPOTRUN_LEASE_TTL=3s t_bg stop "$SPOTRUN" run "$t_tmp/stop.ini"
a=$t_last
started stop "$a" || t_diag "stop: the job did not start its processes"
h=$(cat "$t_tmp/stop/hidden.pid"); o=$(cat "$t_tmp/stop/orphan.pid")
if [ "$(id -u)" = 0 ]; then
	t_is "$(keeper_nice "SPOTRUN_CKPT_DIR=$t_tmp/local-stop/ckpt")" -10 \
	    "stop: as root the keeper runs at nice -10, ahead of a loaded machine's processes"
else
	t_skip "stop: the keeper's nice -10 needs root (CAP_SYS_NICE)"
fi
kill -STOP "$a"
t_result "$(gone "$o" 30; echo $?)" "stop: spotrun stopped past its lease (TTL 3 s): the job's processes are gone"
if [ -n "$cg" ]; then
	t_result "$(gone "$h" 30; echo $?)" "stop: ... the hidden session leader too"
else
	t_skip "stop: the hidden process is found only through a cgroup"
	kill -KILL "$h" 2>/dev/null
fi
t_like "/proc/$a/status" '^State:[[:space:]]+T' "stop: ... while spotrun is still stopped"
kill -CONT "$a"
t_wait "$a"
t_is "$t_rc" 69 "stop: spotrun, resumed, finds its lease lost: exit 69" || t_show "$t_tmp/stop.err"
t_like "$t_tmp/stop.err" "^spotrun: keeper: the lease was not renewed in time \\(its spotrun is stopped or cut off\\): killed [0-9]+ process(es)? of the job" \
    "stop: ... the keeper said why it stopped the job"
t_is "$(keepers "SPOTRUN_CKPT_DIR=$t_tmp/local-stop/ckpt")" 0 "stop: ... and no keeper is left"

# 3. a run that ends as it should leaves nothing
printf '[job]\nname = plain\ncommand = true\nworkdir = %s\n[checkpoint]\nstore = file://%s/store\nlocal_dir = %s/local-plain\n[provider]\nname = local\n' \
    "$t_tmp" "$t_tmp" "$t_tmp" > "$t_tmp/plain.ini"
"$SPOTRUN" run "$t_tmp/plain.ini" > "$t_tmp/plain.out" 2> "$t_tmp/plain.err"
t_is "$?" 0 "plain: a job that ends exits 0" || t_show "$t_tmp/plain.err"
how=$(sed -nE 's/^[0-9:]+  contain  cgroup (.*)$/\1/p' "$t_tmp/plain.err")
i=0
while [ "$(keepers "SPOTRUN_CKPT_DIR=$t_tmp/local-plain/ckpt")" != 0 ] && [ "$i" -lt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
t_is "$(keepers "SPOTRUN_CKPT_DIR=$t_tmp/local-plain/ckpt")" 0 "plain: ... its keeper ended"
if [ -n "$how" ]; then
	t_result "$([ ! -d "$how" ]; echo $?)" "plain: ... and its cgroup is removed"
else
	t_skip "plain: no cgroup here"
fi
t_unlike "$t_tmp/plain.err" "keeper:" "plain: ... and the keeper killed nothing"
# 4. the job ends on its own while spotrun is stopped past its lease: its
#    end is done, so spotrun, resumed, sets the lease succeeded when no
#    other run took the job (the store's compare-and-swap decides), and
#    never when one did: the job is neither run again nor recorded twice.
#    The job waits for a file, writes "end", and exits 0.
endjob() {	# NAME [SUFFIX]: $t_tmp/NAME[SUFFIX].ini, a local_dir of its own
	mkdir -p "$t_tmp/$1"
	printf '[job]\nname = %s\ncommand = echo $$ > pid; while [ ! -e go ]; do sleep 0.05; done; echo end >> ends\nshell = yes\nworkdir = %s\n[checkpoint]\nstore = file://%s/store\nlocal_dir = %s/local-%s%s\n[provider]\nname = local\n' \
	    "$1" "$t_tmp/$1" "$t_tmp" "$t_tmp" "$1" "$2" > "$t_tmp/$1$2.ini"
}
# lapse NAME: wait until the lease of NAME is past its expiry (the
# holder's "expires", by this machine's one clock), the holder stopped
lapse() {
	_e=$($PY -c 'import json, sys; print(json.load(open(sys.argv[1]))["expires"])' \
	    "$t_tmp/store/_leases/$1") || return 1
	$PY -c 'import sys, time
e = float(sys.argv[1]) + 0.2
if e - time.time() > 60:
    sys.exit("the lease expires %.0f s from now, past the test'"'"'s bound" % (e - time.time()))
while time.time() <= e:
    time.sleep(0.05)' "$_e"
}
for c in alone taken; do
	endjob "end-$c"
	SPOTRUN_LEASE_TTL=3s t_bg "end-$c" "$SPOTRUN" run "$t_tmp/end-$c.ini"
	a=$t_last
	wait_for "$t_tmp/end-$c/pid" '^[0-9]+$' 60 "$a" || t_diag "end-$c: the job did not start"
	jp=$(cat "$t_tmp/end-$c/pid")
	kill -STOP "$a"
	touch "$t_tmp/end-$c/go"
	t_result "$(gone "$jp" 30; echo $?)" "end-$c: the job ends on its own while spotrun is stopped"
	lapse "end-$c" || t_diag "end-$c: no lease to read"
	if [ "$c" = taken ]; then
		# another run takes the expired lease over and runs the job's end
		endjob "end-$c" -2	# as from another machine
		SPOTRUN_LEASE_TTL=3s "$SPOTRUN" run "$t_tmp/end-$c-2.ini" > "$t_tmp/end-$c-2.out" 2> "$t_tmp/end-$c-2.err"
		t_is "$?" 0 "end-$c: another run takes the expired lease over and ends the job" ||
		    t_show "$t_tmp/end-$c-2.err"
	fi
	kill -CONT "$a"
	t_wait "$a"
	if [ "$c" = alone ]; then
		t_is "$t_rc" 0 "end-alone: spotrun, resumed past its lease with no other run, exits 0" ||
		    t_show "$t_tmp/end-$c.err"
		t_is "$("$top_builddir/tests/qtool" lease "file://$t_tmp/store" "end-$c" | awk '{print $1, $2}')" "succeeded 1" \
		    "end-alone: ... its lease succeeded, epoch 1"
		grep -q "ended on its own as its lease was given up" "$t_tmp/end-$c.err" ||
		    t_diag "end-alone: the renewal came before the give-up this time"
	else
		t_is "$t_rc" 69 "end-taken: spotrun, resumed after another run took the job, finds its lease lost: exit 69" ||
		    t_show "$t_tmp/end-$c.err"
		t_is "$("$top_builddir/tests/qtool" lease "file://$t_tmp/store" "end-$c" | awk '{print $1, $2}')" "succeeded 2" \
		    "end-taken: ... and wrote nothing over the other's: its lease succeeded, epoch 2"
	fi
	t_is "$(grep -c '^end$' "$t_tmp/end-$c/ends")" "$([ "$c" = alone ] && echo 1 || echo 2)" \
	    "end-$c: the job's end ran $([ "$c" = alone ] && echo once || echo 'again in the run that took it over')"
done

# 5. an agent stopped (SIGSTOP, the agent alone: its job would run on)
#    past its lease (TTL 3 s, agent.sh)
. "$top_srcdir/tests/jobs/agent.sh"
Q=file://$t_tmp/q
ag_spec "$t_tmp/ast.ini" 400 0.05
"$QTOOL" add "$Q" ast "$t_tmp/ast.ini" 0 0 || t_bail "qtool add failed"
ag_start ast-a 0 --queue "$Q" --once
a=$t_last
wait_for "$t_tmp/wl/ast.log" '^step 5 ' 30 "$a" || t_diag "agent: the job did not start"
jp=$(awk '$1 == "start" { p = $4 } END { print p }' "$t_tmp/wl/ast.log")
kill -STOP "$a"
t_result "$(gone "$jp" 15; echo $?)" "agent: an agent stopped past its lease: its job is stopped ($jp)"
t_result "$([ ! -e "$t_tmp/wl/ast.final" ]; echo $?)" "agent: ... before it could end on its own"
t_like "/proc/$a/status" '^State:[[:space:]]+T' "agent: ... while the agent is still stopped"
# The second agent holds its lease for 60 s: with agent.sh's 3 s, a loaded
# machine (a sanitizer build beside other suites) let renewals slip past
# the TTL, and the agent lost and took its own job back six times (epoch
# 8). What is tested is the first agent's lease passing on, once.
SPOTRUN_LEASE_TTL=60s
i=0
while [ "$i" -lt 20 ]; do	# --once ends when nothing is claimable yet
	ag_run ast-b$i 0 --queue "$Q" --once
	grep -q "ast: claimed" "$t_tmp/ast-b$i.err" && break
	i=$((i + 1))
done
SPOTRUN_LEASE_TTL=3s
t_has "$t_tmp/ast-b$i.err" "spotrun agent: ast: succeeded (epoch 2)" \
    "agent: ... another agent takes the job over once the lease expired and finishes it"
kill -CONT "$a"
t_wait "$a"
t_has "$t_tmp/ast-a.err" "spotrun agent: ast: lost its lease: nothing more is written for it here" \
    "agent: the first, resumed, finds its lease lost"
t_is "$(ag_status "$Q" ast | awk '{print $1, $2}')" "succeeded 2" \
    "agent: ... and wrote no marker over the second's: the status is succeeded, epoch 2"
t_is "$(ag_steps ast)" "ok 400" "agent: every step of the job once"
# 5. where memory files may not be executed (vm.memfd_noexec=2, set in a
#    pid namespace of the run's own, whose first process is a shell: the
#    keeper is reparented to it), the keeper is spotrun re-executed, and
#    the run goes as anywhere else. The job waits for a file.
if [ "$(id -u)" = 0 ] && [ -e /proc/sys/vm/memfd_noexec ] &&
    unshare --pid --fork --mount-proc true 2>/dev/null; then
	endjob noexec
	t_bg noexec unshare --pid --fork --mount-proc sh -c \
	    'echo 2 > /proc/sys/vm/memfd_noexec && "$0" run "$1"' "$SPOTRUN" "$t_tmp/noexec.ini"
	a=$t_last
	wait_for "$t_tmp/noexec/pid" '^[0-9]+$' 30 "$a" || t_diag "noexec: the job did not start"
	k=$(keeper_pid "SPOTRUN_CKPT_DIR=$t_tmp/local-noexec/ckpt")
	t_is "$(readlink "/proc/$k/exe")" "$(readlink -f "$SPOTRUN")" \
	    "noexec: the keeper (${k:-none}) is spotrun itself" || t_show "$t_tmp/noexec.err"
	: > "$t_tmp/noexec/go"
	t_wait "$a"
	t_is "$t_rc" 0 "noexec: ... and the run ends as it should" || t_show "$t_tmp/noexec.err"
	t_is "$(keepers "SPOTRUN_CKPT_DIR=$t_tmp/local-noexec/ckpt")" 0 "noexec: ... its keeper too"
else
	t_skip "noexec: needs root, unshare(1) and vm.memfd_noexec (Linux 6.3)"
	t_skip "noexec: ..."
	t_skip "noexec: ..."
fi
t_done
