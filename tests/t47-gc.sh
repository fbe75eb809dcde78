#!/bin/sh
# t47-gc.sh: `spotrun gc` on file:// (doc/fleet.md, "gc"): a job preempted
# after a committed checkpoint, with the debris a dead save leaves written
# beside it under realistic names (a pack and a manifest that never
# committed, a dead gang's part), young debris and objects that are not
# debris; the dry run's exact lines and total, nothing deleted by it;
# --apply deletes exactly the old debris, and the job then resumes from its
# checkpoint byte-exact. A job whose lease is held is left alone. A queue:
# a job's debris in Q/ckpt and a stale status marker, listed by `gc
# --queue` and deleted by an idle agent's sweep.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/jobs/fleet.sh"
t_setup
S=$SPOTRUN
T=$t_tmp
export HOME=$T/home XDG_DATA_HOME=$T/data XDG_CONFIG_HOME=$T/config XDG_STATE_HOME=$T/state
unset SPOTRUN_QUEUE
mkdir -p "$HOME"

# objects DIR: its files, with their sizes, sorted
objects() {
	(cd "$1" && find . -type f ! -path './.tmp/*' -printf '%P %s\n' | LC_ALL=C sort)
}
# debris FILE SIZE [AGE]: a file of SIZE bytes last written AGE ago (2 hours)
debris() {
	mkdir -p "$(dirname "$1")"
	head -c "$2" /dev/zero > "$1"
	touch -d "${3:-2 hours ago}" "$1"
}

# --- a job with a committed checkpoint, preempted --------------------------
head -c 300000 /dev/urandom > "$T/blob.want"
cat > "$T/job.sh" <<SH
if [ -n "\$SPOTRUN_RESUME_STEP" ]; then
	cmp "\$SPOTRUN_CKPT_DIR/blob" "$T/blob.want" && echo "resumed at \$SPOTRUN_RESUME_STEP, blob byte-exact"
	exit 0
fi
step=0
while [ \$step -lt 300 ]; do
	if [ -f "\$SPOTRUN_CKPT_REQUEST" ]; then
		cp "$T/blob.want" "\$SPOTRUN_CKPT_DIR/blob"
		echo \$step > "\$SPOTRUN_CKPT_DONE.t"; mv "\$SPOTRUN_CKPT_DONE.t" "\$SPOTRUN_CKPT_DONE"
	fi
	step=\$((step + 1)); sleep 0.1
done
SH
printf '[job]\nname = g\ncommand = /bin/sh %s/job.sh\n[checkpoint]\nsignal = none\nstore = %s/store\nlocal_dir = %s/local\nmargin = 1s\n[provider]\nname = signal\ngrace = 5s\n' \
	"$T" "$T" "$T" > "$T/g.ini"
"$S" run "$T/g.ini" > "$T/run1.out" 2> "$T/run1.err" &
pid=$!
sleep 1
kill -TERM $pid
wait $pid
t_is $? 75 "the job is preempted after a committed checkpoint" || t_show "$T/run1.err"

# Everything the run wrote is old; beside it, what a save killed before its
# commit leaves (its pack and manifest), a dead gang's part, and the same
# young (written now), which gc must keep, and keys that are no debris.
find "$T/store" -type f -exec touch -d '3 hours ago' {} +
debris "$T/store/g/packs/0000000001-9f3a0c.tar" 402653
debris "$T/store/g/manifests/0000000001.json" 812
debris "$T/store/g/parts/4-120-1.json" 640
debris "$T/store/g/packs/0000000002-77e1.tar" 5000 now
debris "$T/store/g/parts/5-130-1.json" 640 now
debris "$T/store/g/packs/notes.txt" 10
before=$(objects "$T/store")

run dry "$S" gc "$T/g.ini"
expect dry 0 "would delete g/manifests/0000000001.json (812 B): manifest of a save that never committed
would delete g/packs/0000000001-9f3a0c.tar (393.2 KiB): pack no committed checkpoint references
would delete g/parts/4-120-1.json (640 B): part of a gang's or ranks' save that never merged
would delete 3 objects, 394.6 KiB, of 1 job (a dry run: --apply deletes them)" "" \
	"a dry run lists each old piece of debris with its size and why, and the total"
t_is "$(objects "$T/store")" "$before" "a dry run deletes nothing"

run grace "$S" gc --grace 4h g -s "$T/store"
expect grace 0 "would delete 0 objects, 0 B, of 1 job (a dry run: --apply deletes them)" "" \
	"nothing older than --grace 4h: nothing to delete (a NAME in a store, as ls takes it)"

run apply "$S" gc --apply "$T/g.ini"
expect apply 0 "deleted g/manifests/0000000001.json (812 B): manifest of a save that never committed
deleted g/packs/0000000001-9f3a0c.tar (393.2 KiB): pack no committed checkpoint references
deleted g/parts/4-120-1.json (640 B): part of a gang's or ranks' save that never merged
deleted 3 objects, 394.6 KiB, of 1 job" "" "--apply deletes them and says so"
t_is "$(objects "$T/store")" "$(printf '%s\n' "$before" | grep -v -e '^g/packs/0000000001-9f3a0c.tar ' \
	-e '^g/manifests/0000000001.json ' -e '^g/parts/4-120-1.json ')" \
	"--apply removed exactly the old debris: the committed chain, young debris and other keys stay"

"$S" run "$T/g.ini" > "$T/run2.out" 2> "$T/run2.err"
t_is "$?:$(grep '^resumed' "$T/run2.out" | sed 's/at [0-9]*/at N/')" "0:resumed at N, blob byte-exact" \
	"the job resumes from its checkpoint afterwards, byte-exact" || t_show "$T/run2.err"

# --- a job whose lease is held: left alone ----------------------------------
now=$(date +%s)
mkdir -p "$T/store/_leases"
printf '{"job": "h", "epoch": 3, "state": "running", "owner": {"host": "elsewhere", "pid": 4242, "boot_id": "b", "agent": "", "instance": "", "provider": "local"}, "claimed": %s.0, "renewed": %s.0, "expires": %s.0, "ttl": 3600}' \
	"$now" "$now" "$((now + 3600))" > "$T/store/_leases/h"
debris "$T/store/h/packs/0000000000-0a.tar" 100
run held "$S" gc --apply -s "$T/store" h
t_is "$rc:$(cat "$T/held.out")|$(sed 's/ until .*//' "$T/held.err")" \
	"0:deleted 0 objects, 0 B, of 1 job|spotrun: gc h: skipped: its lease is held by spotrun run (host elsewhere, pid 4242, local)" \
	"a job whose lease is held is skipped, saying by whom"
t_is "$(ls "$T/store/h/packs")" "0000000000-0a.tar" "and its packs stay"

# --- a queue: gc --queue, and the agent's sweep at idle ---------------------
Q=$T/q
printf '[job]\nname = qj\ncommand = /bin/true\n' > "$T/qj.ini"
"$S" submit --create --queue "$Q" "$T/qj.ini" > "$T/sub.out" 2>&1 || t_show "$T/sub.out"
"$S" cancel --queue "$Q" qj > "$T/cancel.out" 2>&1 || t_show "$T/cancel.out"
marker=$(cd "$Q/index" && ls)
old=$(printf '%s' "$marker" | sed 's/~[0-9]\{13\}~/~1764560000000~/')
debris "$Q/index/$old" 0
debris "$Q/ckpt/qj/packs/0000000000-1b.tar" 2048
run qdry "$S" gc --queue "$Q"
expect qdry 0 "would delete qj/packs/0000000000-1b.tar (2.0 KiB): pack no committed checkpoint references
would delete index/$old (0 B): status marker of qj older than its newest
would delete 2 objects, 2.0 KiB, of 1 job (a dry run: --apply deletes them)" "" \
	"gc --queue lists a job's debris in Q/ckpt and a stale status marker"
run ag "$S" agent --queue "$Q" --once --provider local --dir "$T/agent"
t_is "$rc:$(grep -c 'gc at idle: deleted 2 objects, 2.0 KiB, of 1 job$' "$T/ag.err")" "0:1" \
	"an idle agent sweeps the same debris, with --apply's rules" || t_show "$T/ag.err"
t_is "$(ls "$Q/ckpt/qj/packs" 2>/dev/null; ls "$Q/index")" "$marker" \
	"the pack and the stale marker are gone, the newest marker stays"
t_is "$(grep -cxE "[0-9]{10}\.[0-9]{3} $(hostname)-[0-9]+" "$Q/gc")" 1 \
	"Q/gc says when the sweep began and which agent"
# An hour has not passed: another idle agent leaves the sweep alone.
debris "$Q/ckpt/qj/packs/0000000000-2c.tar" 100
run ag2 "$S" agent --queue "$Q" --once --provider local --dir "$T/agent"
t_is "$rc:$(grep -c 'gc at idle' "$T/ag2.err"):$(ls "$Q/ckpt/qj/packs")" "0:0:0000000000-2c.tar" \
	"a second idle agent within the hour does not sweep: one sweep an hour per queue"
t_done
