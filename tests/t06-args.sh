#!/bin/sh
# t06-args.sh: the command line as a user meets it, with exact output:
# --help/-h and `help CMD` for every command, did-you-mean for a mistyped
# command, the parser's errors (unknown option, missing value, too many or
# too few arguments), a script or program given where a job file goes, and
# `spotrun ls` pointed at a job file or at a NAME in a store given as a plain
# path, its RUN column, unusable checkpoints and the catalog's warnings of a
# LATEST that is garbage, oversize or without its newline.
set -u
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
S=$SPOTRUN
cd "$t_tmp" || t_bail "cd $t_tmp"

# run_cmd NAME CMD...: stdout to NAME.out, stderr to NAME.err, status in rc
run_cmd() {
	_n=$1; shift
	"$@" >"$t_tmp/$_n.out" 2>"$t_tmp/$_n.err"
	rc=$?
}
# expect NAME RC OUT ERR DESC: the exact status, stdout and stderr
expect() {
	t_is "$rc|$(cat "$t_tmp/$1.out")|$(cat "$t_tmp/$1.err")" "$2|$3|$4" "$5"
}

# --- help ------------------------------------------------------------------
ls_help="usage: spotrun ls [-a] [-s STORE] JOB.ini|NAME

List the committed checkpoints of a job, oldest first: sequence number,
step, creation time, files, raw and stored size, ratio; the latest is
marked, and one a restore would refuse is marked unusable, with why on
standard error. With -a, list the job's attempts, run by run.
The job is a job file (its name and store, unless -s), or a job NAME in
STORE, else in the default store.

options:
  -a, --attempts     list the job's attempts instead, run by run
  -s, --store STORE  look in this store: a URL or a directory
  -h, --help         show this help"
run_cmd h "$S" ls --help
expect h 0 "$ls_help" "" "ls --help: the full usage on stdout, exit 0"
run_cmd h "$S" run --help
expect h 0 "usage: spotrun run [-q] JOB.ini

Validate the job file, then supervise the job until it finishes: restore its
newest checkpoint, launch it, ask it for checkpoints periodically and on a
preemption notice, commit them to the store, and restart it as [retry] says.
Exits with the job's own status, 75 when preempted (see spotrun(1)).

options:
  -q, --quiet  print only the important lines: notices, checkpoints, the end
  -h, --help   show this help" "" "run --help (an error before): the full usage"
cmds=$("$S" help | sed -n '/^commands:/,/^$/p' | sed -e '1d' | awk 'NF {print $1}')
for c in $cmds; do
	"$S" help "$c" >"$t_tmp/want" 2>&1
	w=$?
	for form in --help -h; do
		run_cmd h "$S" "$c" "$form"
		t_is "$rc|$w|$(cat "$t_tmp/h.out")|$(cat "$t_tmp/h.err")" "0|0|$(cat "$t_tmp/want")|" \
			"$c $form prints what 'spotrun help $c' prints, exit 0"
	done
	# the usage (longer than a line: continued on indented lines), a blank
	# line, the description
	head -n 1 "$t_tmp/want" | grep -q "^usage: spotrun $c" &&
		! awk 'NR > 1 && /^$/ {exit} NR > 1' "$t_tmp/want" | grep -qv '^  ' &&
		awk 'blank {print; exit} /^$/ {blank = 1}' "$t_tmp/want" | grep -q . &&
		grep -qx 'options:' "$t_tmp/want" &&
		tail -n 1 "$t_tmp/want" | grep -qE '^  -h, --help +show this help$'
	t_result $? "help $c: usage line, description, options ending with -h" || t_show "$t_tmp/want"
	t_is "$(awk 'length > 80' "$t_tmp/want")" "" "help $c: no line over 80 columns"
done
run_cmd h "$S" check good.ini -h
expect h 0 "$("$S" help check)" "" "-h after an operand: the help, nothing checked"
run_cmd h "$S" help
t_is "$rc|$(sed -n '1,5p' "$t_tmp/h.out")" "0|usage: spotrun COMMAND [ARGS]
       spotrun --version

commands:
  run     [-q] JOB.ini                       supervise a job on this machine until it finishes" \
	"help: the table of commands, one line each"
t_has "$t_tmp/h.out" "'spotrun help COMMAND' or 'spotrun COMMAND --help' shows a command's options." \
	"help: says where the options are"
run_cmd h "$S" --help ls
expect h 0 "$ls_help" "" "spotrun --help ls is help ls"

# --- did you mean ------------------------------------------------------------
run_cmd u "$S" rnu x.ini
expect u 64 "" "spotrun: unknown command 'rnu'; did you mean 'run'? (spotrun help lists the commands)" \
	"a swapped command: did you mean 'run'"
run_cmd u "$S" chek x.ini
expect u 64 "" "spotrun: unknown command 'chek'; did you mean 'check'? (spotrun help lists the commands)" \
	"a letter short: did you mean 'check'"
run_cmd u "$S" sl
expect u 64 "" "spotrun: unknown command 'sl'; did you mean 'ls'? (spotrun help lists the commands)" \
	"'sl': did you mean 'ls'"
run_cmd u "$S" frobnicate
expect u 64 "" "spotrun: unknown command 'frobnicate'; try 'spotrun help'" "nothing close: no suggestion"
run_cmd u "$S" help rnu
expect u 64 "" "spotrun: unknown command 'rnu'; did you mean 'run'? (spotrun help lists the commands)" \
	"help rnu: the same did-you-mean"

# --- the parser's errors -----------------------------------------------------
printf '[job]\nname = good\ncommand = /bin/true\n[checkpoint]\nstore = %s/store\n' "$t_tmp" >good.ini
lsu="usage: spotrun ls [-a] [-s STORE] JOB.ini|NAME"
run_cmd e "$S" ls -x good.ini
expect e 64 "" "spotrun ls: unknown option -x; see 'spotrun help ls'
$lsu" "unknown short option: what, where to look, the usage"
run_cmd e "$S" ls -ax good.ini
expect e 64 "" "spotrun ls: unknown option -x; see 'spotrun help ls'
$lsu" "unknown option inside a cluster"
run_cmd e "$S" ls --stroe x good.ini
expect e 64 "" "spotrun ls: unknown option --stroe (did you mean --store?); see 'spotrun help ls'
$lsu" "a mistyped long option: did you mean"
run_cmd e "$S" ls --frobnicate good.ini
expect e 64 "" "spotrun ls: unknown option --frobnicate; see 'spotrun help ls'
$lsu" "an unknown long option, nothing close"
run_cmd e "$S" ls good.ini -s
expect e 64 "" "spotrun ls: option -s needs a value (STORE); see 'spotrun help ls'
$lsu" "-s without its value"
run_cmd e "$S" ls good.ini --store
expect e 64 "" "spotrun ls: option --store needs a value (STORE); see 'spotrun help ls'
$lsu" "--store without its value"
run_cmd e "$S" ls --attempts=yes good.ini
expect e 64 "" "spotrun ls: option --attempts takes no value; see 'spotrun help ls'
$lsu" "a flag given a value"
run_cmd e "$S" ls a b
expect e 64 "" "spotrun ls: too many arguments: 'b' (takes 1: JOB.ini|NAME); see 'spotrun help ls'
$lsu" "too many arguments: names the first extra one"
run_cmd e "$S" ls -a
expect e 64 "" "spotrun ls: too few arguments (takes 1: JOB.ini|NAME); see 'spotrun help ls'
$lsu" "too few arguments"
run_cmd e "$S" check -q
expect e 64 "" "spotrun check: too few arguments (takes at least 1: JOB.ini ...); see 'spotrun help check'
usage: spotrun check [-q] JOB.ini ..." "check: at least one file"
run_cmd e "$S" run
expect e 64 "" "usage: spotrun run [-q] JOB.ini" "no argument at all: the usage line alone"
run_cmd e "$S" help a b
expect e 64 "" "spotrun help: too many arguments: 'b' (takes at most 1: [COMMAND]); see 'spotrun help help'
usage: spotrun help [COMMAND]" "help takes at most one command"
run_cmd e "$S" check good.ini -q
expect e 0 "" "" "an option after the operands counts (check good.ini -q)"
run_cmd e "$S" check --quiet good.ini
expect e 0 "" "" "--quiet is -q"
run_cmd e "$S" check -- -q
expect e 65 "" "-q: cannot open: No such file or directory" "after --, -q is a file name"

# --- a script or a program instead of a job file ------------------------------
printf 'import torch\nprint(1)\n' >train.py
printf '#!/usr/bin/env python3\nimport os\n' >tool
printf '#!/usr/bin/env spotrun\n[job]\nname = shebang\n' >shebang.ini
cp /bin/true prog
see="(see spotrun-job(5), examples/quickstart.ini)"
run_cmd s "$S" run train.py
expect s 65 "" "spotrun: train.py is a script, not a job file; write a job file with command = python3 train.py $see" \
	"run train.py: one line saying what to write, exit 65"
run_cmd s "$S" check train.py
expect s 65 "" "spotrun: train.py is a script, not a job file; write a job file with command = python3 train.py $see" \
	"check train.py: the same"
run_cmd s "$S" check good.ini tool
expect s 65 "good.ini: ok" "spotrun: tool is a script, not a job file; write a job file with command = python3 tool $see" \
	"a script by its #! line; the other file still checked"
run_cmd s "$S" run ./prog
expect s 65 "" "spotrun: ./prog is a program, not a job file; write a job file with command = ./prog $see" \
	"a compiled program"
run_cmd s "$S" ls train.py
expect s 65 "" "spotrun: train.py is a script, not a job file; write a job file with command = python3 train.py $see" \
	"ls train.py: the same"
run_cmd s "$S" check shebang.ini
expect s 65 "" "shebang.ini: missing required key 'command' in [job]; add e.g. command = python3 train.py" \
	"a job file with a #! line of its own gets its own errors"

# --- ls: a job file, or a NAME in a store given as a path -----------------------
cat >job.sh <<'SH'
step=0
[ -n "$SPOTRUN_RESUME_STEP" ] && step=$(cat "$SPOTRUN_CKPT_DIR/step")
start=$step
while [ "$step" -lt 12 ]; do
	if [ -f "$SPOTRUN_CKPT_REQUEST" ] && [ "$step" -gt "$start" ]; then
		echo "$step" >"$SPOTRUN_CKPT_DIR/step"; echo "$step" >"$SPOTRUN_CKPT_DONE.t"
		mv "$SPOTRUN_CKPT_DONE.t" "$SPOTRUN_CKPT_DONE"
	fi
	step=$((step + 1)); sleep 0.1
done
SH
# two preemptions a run (a checkpoint each), run twice: checkpoints 0-3
printf '[job]\nname = lsjob\ncommand = /bin/sh job.sh\n[checkpoint]\nstore = %s/store\nsignal = none\nkeep = 5\n[provider]\nname = local\nafter = 0.4s\npreemptions = 2\n' \
	"$t_tmp" >lsjob.ini
"$S" run -q lsjob.ini >run1.out 2>run1.err && "$S" run -q lsjob.ini >run2.out 2>run2.err
t_result $? "two runs of the job, two checkpoints each" || t_show run2.err
run_cmd l "$S" ls lsjob.ini
cp l.out clean.out
# The steps depend on the machine's speed (the job counts one every 0.1 s
# until the notice, and answers a request only after a step of its own, so
# that a loaded machine, where the next notice can come before a resumed
# job's first step, still moves on): each run's second checkpoint is at a
# later step than its first, and the second run starts afresh (the first
# finished).
steps=$(sed -nE 's/^([0-9]+) +([0-9-]+) .*/\1 \2/p' l.out | tr '\n' ' ')
s2=$(printf '%s\n' "$steps" | awk '{ print $6 }')
t_is "$rc|$(printf '%s\n' "$steps" | awk '{ print $1, $3, $5, $7, ($2 >= 0 && $4 > $2 && $6 >= 0 && $8 > $6) }')|$(tail -n 1 l.out | grep -c ' latest$')" \
	"0|0 1 2 3 1|1" "ls JOB.ini: checkpoints 0-3, each run's second at a later step, the last one latest"
run_cmd l "$S" ls -s "$t_tmp/store" lsjob
t_is "$rc|$(cat l.out)|$(cat l.err)" "0|$(cat clean.out)|" "ls -s /plain/path NAME lists the same"
run_cmd l "$S" ls --store "$t_tmp/store/" lsjob
t_is "$rc|$(cat l.out)|$(cat l.err)" "0|$(cat clean.out)|" "--store, with a trailing slash"
run_cmd l sh -c "cd '$t_tmp' && '$S' ls -s store lsjob"
t_is "$rc|$(cat l.out)|$(cat l.err)" "0|$(cat clean.out)|" "ls -s relative/path NAME, from the working directory"
run_cmd l "$S" ls -s "file://$t_tmp/store" lsjob
t_is "$rc|$(cat l.out)" "0|$(cat clean.out)" "a file:// URL still works"
run_cmd l "$S" ls -s "$t_tmp/elsewhere" lsjob
expect l 0 "no checkpoints of job lsjob in file://$t_tmp/elsewhere" "" "a plain path without the job: none"
run_cmd l "$S" ls -s "$t_tmp/elsewhere" lsjob.ini
expect l 0 "no checkpoints of job lsjob in file://$t_tmp/elsewhere" "" "-s wins over the job file's store"
run_cmd l "$S" ls ../x
expect l 64 "" "spotrun: ../x is not a job file, and job name \"../x\": segments are letters, digits, '.', '_' and '-', starting with a letter or digit" \
	"a NAME that cannot be a job's: exit 64"
run_cmd l "$S" ls missing.ini
expect l 65 "" "missing.ini: cannot open: No such file or directory" "a missing JOB.ini is a missing file, not a job name"

# --- ls -a: a RUN column, by run ----------------------------------------------
run_cmd l "$S" ls -a lsjob.ini
t_is "$rc|$(head -n 1 l.out | awk '{print $1, $2, $3}')" "0|RUN ATTEMPT STARTED" "ls -a: the RUN column first"
awk 'NR > 1 {print $1, $2}' l.out >runs
r1=$(sed -n 1p runs | cut -d' ' -f1) r2=$(sed -n 4p runs | cut -d' ' -f1)
t_is "$(cat runs | tr '\n' ' ')" "$r1 1 $r1 2 $r1 3 $r2 1 $r2 2 $r2 3 " "each run's three attempts together, in order"
t_is "$([ "$r1" != "$r2" ] && echo "$r1 $r2" | grep -cE '^[0-9]{8}T[0-9]{6}Z-[0-9]+ [0-9]{8}T[0-9]{6}Z-[0-9]+$')" 1 \
	"two runs, each named by its id (UTC start time and pid)"
t_is "$(ls store/lsjob/attempts | sed 's/-[0-9]*\.json$//' | sort -u | tr '\n' ' ')" "$(printf '%s\n' "$r1" "$r2" | sort | tr '\n' ' ')" \
	"the RUN column shows the run ids of the records"
t_is "$(awk 'NR > 1 {print $3 " " $4}' l.out | sort -c 2>&1 && echo sorted)" "sorted" "runs in the order they started"

# --- ls: unusable checkpoints and a garbage LATEST -------------------------------
m=store/lsjob/manifests
cp $m/0000000003.json m3
sed -E 's/"step": [0-9]+,/"step": -7,/' m3 >$m/0000000003.json
bad3="bad manifest lsjob/manifests/0000000003.json: step: -7 is out of range [-1, 9223372036854775807]"
run_cmd l "$S" ls lsjob.ini
t_is "$rc|$(head -n 4 l.out)|$(tail -n 1 l.out)" \
	"0|$(head -n 4 clean.out)|3      -          -                         -          -          -      -  latest unusable" \
	"an unusable latest checkpoint: marked, its figures not shown"
t_is "$(cat l.err)" "spotrun: warning: checkpoint 3, the latest, cannot be restored: $bad3; a restore falls back to checkpoint 2 (step $s2)" \
	"and a line names the problem and the checkpoint a restore falls back to"
cp $m/0000000001.json m1
printf '{' >$m/0000000001.json
run_cmd l "$S" ls lsjob.ini
# LATEST's chain runs 3 -> 2 -> 1; 1 cannot name its parent, so the chain
# ends there and 0 is no longer listed as committed (doc/format.md).
t_is "$(sed -n 2p l.out)" "1      -          -                         -          -          -      -  unusable" "an older unusable one is marked too"
t_is "$(sed -n 's/\.json: .*/.json/p' l.err | grep 'checkpoint 1 cannot be restored')" "spotrun: warning: checkpoint 1 cannot be restored: bad manifest lsjob/manifests/0000000001.json" \
	"and named"
t_is "$(grep -c 'checkpoint 1 of lsjob cannot say which checkpoint came before it: the chain of committed checkpoints ends there, and the 1 older manifest listed is not restored' l.err)|$(awk 'NR > 1 { print $1 }' l.out | tr '\n' ' ')" \
	"1|1 2 3 " "the chain ends at the unreadable one: checkpoint 0 below it is not listed, and a line says so"
t_is "$(tail -n 1 l.err)" "spotrun: warning: checkpoint 3, the latest, cannot be restored: $bad3; a restore falls back to checkpoint 2 (step $s2)" \
	"the fallback is the newest usable one"
for f in 0 2; do cp $m/000000000$f.json m$f; printf '{' >$m/000000000$f.json; done
run_cmd l "$S" ls lsjob.ini
t_is "$(grep -c 'cannot be restored' l.err)|$(tail -n 1 l.err)" \
	"2|spotrun: warning: checkpoint 3, the latest, cannot be restored: $bad3; no older checkpoint is usable, so a restore fails" \
	"none usable on the chain (3, and 2 where it ends): each named, and a restore fails, says ls"
for f in 0 1 2; do cp m$f $m/000000000$f.json; done
# what ls said a restore falls back to is what a restore does
rm -f store/lsjob/FINISHED
printf '[job]\nname = lsjob\ncommand = /bin/true\n[checkpoint]\nstore = %s/store\nlocal_dir = %s/l2\n[provider]\nname = local\n' \
	"$t_tmp" "$t_tmp" >restore.ini
run_cmd r "$S" run restore.ini
t_like r.err "attempt +1 restored checkpoint 2 at step $s2 " "the restore used checkpoint 2, as ls said" || t_show r.err
cp m3 $m/0000000003.json
# latest_case CONTENT-FILE WANT-LATEST-SEQ WANT-WARNING DESC: ls with that LATEST
latest_case() {
	cp "$1" store/lsjob/LATEST
	run_cmd l "$S" ls lsjob.ini
	t_is "$rc|$(sed -nE 's/^([0-9]+) .* latest$/\1/p' l.out)|$(cat l.err)" "0|$2|spotrun: $3" "$4"
}
tail="every manifest counts as committed and the newest is the latest; the next save rewrites LATEST"
printf 'abc\n' >L1; printf '3\n\n' >L2; printf 'x' >L3; head -c 5000 /dev/zero | tr '\0' 1 >L4; printf '2' >L5
latest_case L1 3 "warning: lsjob/LATEST is not a checkpoint number (it holds \"abc\\n\"): $tail" \
	"LATEST not a number: the catalog's warning, the newest manifest is the latest"
latest_case L2 3 "warning: lsjob/LATEST is not a checkpoint number (it holds \"3\\n\\n\"): $tail" \
	"LATEST with more after its newline: garbage too"
latest_case L3 3 "warning: lsjob/LATEST is not a checkpoint number (it holds \"x\"): $tail" \
	"LATEST without a digit or a newline"
latest_case L4 3 "warning: lsjob/LATEST is not a checkpoint number (it holds 5000 bytes, more than the 4096 a pointer may have): $tail" \
	"LATEST over 4096 bytes: a warning, not an error"
latest_case L5 2 "warning: lsjob/LATEST holds 2 without the newline that ends it: read as 2; the next save rewrites LATEST" \
	"LATEST without its newline: read as that number, with a warning"
t_done
