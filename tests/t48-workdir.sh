#!/bin/sh
# t48-workdir.sh: a submitted job's working directory shipped to the agent
# (doc/fleet.md, "Your code on the machines"), on a file:// queue:
# 1. submit snapshots the "laptop" folder into Q/ckpt/_workdir/NAME; the
#    folder is then moved away, and an agent still runs the job, in its own
#    copy: the files it reads are there, what .gitignore, a deeper
#    .gitignore and .spotrunignore leave out is not (negated rules taken
#    again), nor .git, .spotrun or the job's local_dir; modes and a
#    symlink as they were; the job writes into its copy, the agent's cache
#    of the snapshot stays as restored.
# 2. Submitting the same code again uploads nothing (0 chunks, 0 bytes, no
#    new pack); one file changed uploads its chunk alone, one new pack.
# 3. A folder over workdir_max: refused with the total, the biggest entries
#    and the fix, nothing queued (65).
# 4. ship_workdir = no: nothing shipped, no "workdir" in meta.json, and the
#    agent runs the job in workdir as a path of its machine (as before).
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/jobs/fleet.sh"
t_setup
S=$SPOTRUN
T=$t_tmp
export HOME=$T/home XDG_DATA_HOME=$T/data XDG_CONFIG_HOME=$T/config XDG_STATE_HOME=$T/state
unset SPOTRUN_QUEUE
mkdir -p "$HOME" "$T/out"
Q=$T/q
L=$T/laptop

# --- 1. shipped, then run with the folder gone ------------------------------
mkdir -p "$L/sub/deep" "$L/build" "$L/.git" "$L/.spotrun/x" "$L/ckpt" "$L/priv"
cat > "$L/job.ini" <<EOF2
[job]
name = ship
command = ./run.sh $T/out/ship.txt
[checkpoint]
local_dir = ckpt
[provider]
name = local
EOF2
cat > "$L/run.sh" <<'EOF2'
#!/bin/sh
{
	cat data.txt
	for f in a.log keep.log build sub/x.tmp sub/keep.tmp sub/deep/x.tmp priv secret.key \
	    .git .spotrun ckpt/c .gitignore .spotrunignore sub/.gitignore; do
		if [ -e "$f" ]; then echo "has $f"; else echo "no $f"; fi
	done
	stat -c '%a %n' run.sh ro.txt sub sub/deep
	readlink link
} > "$1"
echo scribbled > data.txt
EOF2
chmod 755 "$L/run.sh"
echo hello > "$L/data.txt"
echo ro > "$L/ro.txt"
chmod 640 "$L/ro.txt"
chmod 700 "$L/sub/deep"
ln -s data.txt "$L/link"
printf '# logs\n*.log\n!keep.log\nbuild/\n/priv\n' > "$L/.gitignore"
printf '*.tmp\n!keep.tmp\n' > "$L/sub/.gitignore"
printf 'secret.key\n' > "$L/.spotrunignore"
for f in a.log keep.log build/o.o sub/x.tmp sub/keep.tmp sub/deep/x.tmp priv/p secret.key \
    .git/HEAD .spotrun/x/y ckpt/c; do
	echo "$f" > "$L/$f"
done
# taken: job.ini run.sh data.txt ro.txt link .gitignore .spotrunignore
# keep.log sub/.gitignore sub/keep.tmp: 9 files and a link
files=9
bytes=$(cd "$L" && cat job.ini run.sh data.txt ro.txt .gitignore .spotrunignore keep.log \
    sub/.gitignore sub/keep.tmp | wc -c)
run s "$S" submit -n --create --queue "$Q" "$L/job.ini"
t_is "$rc|$(head -n 1 "$T/s.out")|$(ls "$Q" 2>/dev/null)" \
    "0|ship: workdir $L would be shipped (what .gitignore and .spotrunignore leave out left out)|" \
    "submit -n says which folder it would ship, and writes nothing"
run s "$S" submit --create --queue "$Q" "$L/job.ini"
t_is "$rc|$(sed -E 's/uploaded 9 chunks, [0-9]+ bytes/uploaded 9 chunks, N bytes/' "$T/s.out")|$(cat "$T/s.err")" \
    "0|ship: workdir $L: snapshot 0, $files files, $bytes bytes; uploaded 9 chunks, N bytes (0 chunks already in the store)
ship: queued
1 queued, 0 already in the queue: file://$Q (from --queue)|" \
    "submit ships the workdir: files, bytes, what it uploaded"
snap=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["workdir"])' "$Q/jobs/ship/meta.json")
t_is "$snap" "_workdir/ship/manifests/0000000000.json" "meta.json names the snapshot: its manifest"
t_is "$(ls "$Q/ckpt/_workdir/ship/packs" | wc -l)" 1 "... its chunks in one pack"
mv "$L" "$T/moved"
run ag "$S" agent --queue "$Q" --once --dir "$T/ag"
t_is "$rc" 0 "an agent runs the job with the laptop's folder gone" || t_show "$T/ag.err"
t_is "$(cat "$T/out/ship.txt")" "hello
no a.log
has keep.log
no build
no sub/x.tmp
has sub/keep.tmp
no sub/deep/x.tmp
no priv
no secret.key
no .git
no .spotrun
no ckpt/c
has .gitignore
has .spotrunignore
has sub/.gitignore
755 run.sh
640 ro.txt
755 sub
700 sub/deep
data.txt" "the job reads its files; ignored ones absent, negated ones there; modes and the link kept"
t_has "$T/ag.err" "spotrun agent: ship: workdir $T/ag/jobs/ship/workdir (snapshot $snap)" \
    "the agent says where the job runs"
cache=$(sed -nE 's/^spotrun agent: ship: workdir: snapshot .* restored into ([^ ]+) .*/\1/p' "$T/ag.err")
t_is "$(cat "$T/ag/jobs/ship/workdir/data.txt")|$(cat "$cache/data.txt")" "scribbled|hello" \
    "the job wrote into its own copy; the cache stays as restored"
mv "$T/moved" "$L"

# --- 2. dedup ----------------------------------------------------------------
# without --again: the job is there, the same file; the code is not looked
# at, and the hint says how to ship it as it is now
run s "$S" submit --queue "$Q" "$L/job.ini"
t_is "$rc|$(sed -n 2p "$T/s.out")" \
    "0|ship: its workdir $L was not shipped again; to run it with the folder as it is now: spotrun submit --again $L/job.ini" \
    "the same job file again: the hint to --again, nothing shipped"
run s "$S" submit --again --queue "$Q" "$L/job.ini"
t_is "$rc|$(head -n 1 "$T/s.out")" \
    "0|ship: workdir $L: snapshot 1 (the tree of snapshot 0), $files files, $bytes bytes; uploaded 0 chunks, 0 bytes (9 chunks already in the store)" \
    "the same code again: nothing uploaded, named by the snapshot of the same tree"
t_is "$(sed -n 's/.*"workdir": *"\([^"]*\)".*/\1/p' "$Q/jobs/ship.r2/meta.json" 2>/dev/null)" "_workdir/ship/manifests/0000000000.json" \
    "... so its job's meta.json names snapshot 0: machines that have it restored use it again"
t_is "$(ls "$Q/ckpt/_workdir/ship/packs" | wc -l)" 1 "... no new pack"
echo "hello again" > "$L/data.txt"
run s "$S" submit --again --queue "$Q" "$L/job.ini"
t_like "$T/s.out" "^ship: workdir $L: snapshot 2, $files files, $((bytes + 6)) bytes; uploaded 1 chunk, [0-9]+ bytes \\(8 chunks already in the store\\)\$" \
    "one file changed: its chunk alone is uploaded"
t_is "$(ls "$Q/ckpt/_workdir/ship/packs" | wc -l)" 2 "... in one new pack"
t_is "$(cat "$T/s.out" | sed -n 2,3p)" "$L/job.ini: submitted again as ship.r3
ship.r3: queued" "... and the job is queued"

# a rule file refused (4 "**" segments): the user's to fix, exit 65,
# nothing queued
mkdir -p "$T/br"
printf '**/a/**/b/**/c/**/d\n' > "$T/br/.spotrunignore"
printf '[job]\nname = br\ncommand = true\n[provider]\nname = local\n' > "$T/br/job.ini"
run s "$S" submit --queue "$Q" "$T/br/job.ini"
t_is "$rc|$(cat "$T/s.err")|$(ls "$Q/jobs" | grep -c '^br')" \
    "65|spotrun: $T/br/job.ini: ship its workdir: save _workdir/br: .spotrunignore: line 1: **/a/**/b/**/c/**/d: more than 3 \"**\" segments, each of which multiplies the work of matching a path: split it into rules of fewer; fix or remove that rule; nothing was submitted|0" \
    "a refused ignore rule: exit 65, its file and line, nothing queued"

# --- 3. workdir_max ---------------------------------------------------------
mkdir -p "$T/big/data"
head -c 3000 /dev/zero > "$T/big/data/a.bin"
head -c 2000 /dev/zero > "$T/big/data/b.bin"
head -c 1500 /dev/zero > "$T/big/model.pt"
printf '[job]\nname = big\ncommand = true\nworkdir_max = 4KiB\n' > "$T/big/job.ini"
run s "$S" submit --queue "$Q" "$T/big/job.ini"
expect s 65 "" "spotrun: $T/big/job.ini: workdir $T/big holds 6.4 KiB in 4 files, over the limit of 4.0 KiB; the biggest: data/ (4.9 KiB), model.pt (1.5 KiB), job.ini (51 B); leave files out with a .spotrunignore (gitignore's syntax) or raise workdir_max in [job] (e.g. workdir_max = 4GiB); nothing was submitted" \
    "over workdir_max: refused, saying the total, the biggest and the fix"
t_is "$(ls "$Q/jobs" | grep -c '^big')|$(ls "$Q/ckpt/_workdir" | grep -c '^big')" "0|0" "... nothing queued, nothing uploaded"
echo 'data/' > "$T/big/.spotrunignore"
run s "$S" submit --queue "$Q" "$T/big/job.ini"
t_is "$rc|$(head -n 1 "$T/s.out" | sed -E 's/, [0-9]+ bytes \(/, N bytes (/')" \
    "0|big: workdir $T/big: snapshot 0, 3 files, 1557 bytes; uploaded 3 chunks, N bytes (0 chunks already in the store)" \
    "... and taken once .spotrunignore leaves the data out"

# --- 4. ship_workdir = no ---------------------------------------------------
mkdir -p "$T/plain" "$T/vmdir"
printf '[job]\nname = plain\ncommand = sh -c "pwd > %s/out/plain.txt"\nworkdir = %s/vmdir\nship_workdir = no\n[provider]\nname = local\n' \
    "$T" "$T" > "$T/plain/job.ini"
run s "$S" submit --create --queue "$T/q2" "$T/plain/job.ini"
expect s 0 "plain: queued
1 queued, 0 already in the queue: file://$T/q2 (from --queue)" "" "ship_workdir = no: nothing shipped"
t_is "$(python3 -c 'import json,sys; print("workdir" in json.load(open(sys.argv[1])))' "$T/q2/jobs/plain/meta.json")" \
    "False" "... no snapshot in meta.json"
run ag2 "$S" agent --queue "$T/q2" --once --dir "$T/ag2"
t_is "$rc|$(cat "$T/out/plain.txt" 2>&1)" "0|$T/vmdir" "... and the job runs in workdir as a path of the agent's machine" ||
    t_show "$T/ag2.err"
t_done
