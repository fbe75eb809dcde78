#!/bin/sh
# t39-contain.sh: no process of a job outlives its spotrun (runner/contain.h).
# A job whose command is a wrapper that forks, double-forks, calls setsid()
# and clears its environment: its processes are gone once spotrun is killed
# with SIGKILL (the keeper kills the run's cgroup), and once spotrun is
# stopped with SIGSTOP past its lease (the keeper acts before another
# machine could take the job over). A run that ends as it should leaves no
# keeper and no cgroup. An agent stopped (not its job) past its lease: its
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
# 4. an agent stopped (SIGSTOP, the agent alone: its job would run on)
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
t_done
