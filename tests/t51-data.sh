#!/bin/sh
# t51-data.sh: a job's [data] (doc/spotrun-job.5, doc/fleet.md "Data") on
# the file:// store, with real runs and agents:
# 1. spotrun run: a folder and one object fetched into the working
#    directory's .spotrun/data, the destinations symlinks to files 0444 in
#    folders 0555, the bytes as in the store, the timeline's counts;
# 2. a second run fetches nothing; a changed object is fetched again, one
#    gone from the store removed, a cached file changed on the machine
#    (root ignores the modes) fetched again;
# 3. a URL with nothing under it fails the run naming the key and URL;
# 4. two jobs of a sweep on one agent: the first fetches into DIR/data,
#    the second fetches nothing; the lines are in `spotrun logs`.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/jobs/fleet.sh"
t_setup
S=$SPOTRUN
T=$t_tmp
export HOME=$T/home XDG_DATA_HOME=$T/data XDG_CONFIG_HOME=$T/config XDG_STATE_HOME=$T/state
unset SPOTRUN_QUEUE
mkdir -p "$HOME" "$T/src/a/sub" "$T/w/out" "$T/L"
printf 'xxxxx' > "$T/src/a/x"
printf 'yy\n' > "$T/src/a/sub/y"
printf 'one' > "$T/src/one.bin"

# --- 1. spotrun run -----------------------------------------------------------
cat > "$T/w/job.ini" <<EOF2
[job]
name = d
command = sh -c "cat data/x one > out/got"
[provider]
name = local
[data]
data = file://$T/src/a/
one = file://$T/src/one.bin
EOF2
run r1 "$S" run "$T/w/job.ini"
t_is "$rc|$(cat "$T/w/out/got")" "0|xxxxxone" "the job reads the data" || t_show "$T/r1.err"
t_like "$T/r1.err" "data +data <- file://$T/src/a/: 2 objects \\(2 to fetch, 8 B\\)\$" \
    "the timeline says what is fetched"
t_like "$T/r1.err" "data +data: 2 fetched \\(8 B\\), 0 cached, 0 removed, [0-9.]+ s\$" "... and what was"
t_like "$T/r1.err" "data +one: 1 fetched \\(3 B\\), 0 cached, 0 removed, [0-9.]+ s\$" "... for each entry"
t_is "$(stat -L -c %a "$T/w/data/x" "$T/w/data/sub/y" "$T/w/data/" "$T/w/data/sub" "$T/w/one" | tr '\n' ' ')|$(cat "$T/w/data/sub/y")" \
    "444 444 555 555 444 |yy" "files 0444 in folders 0555, the bytes of the store"
t_is "$(readlink "$T/w/data" | sed "s|$T/w/.spotrun/data/[0-9a-f]*/tree|CACHE|")|$(readlink "$T/w/one" | sed "s|$T/w/.spotrun/data/[0-9a-f]*/tree/|CACHE/|")" \
    "CACHE|CACHE/one.bin" "the destinations are links into the cache"

# --- 2. cached, changed, gone, tampered ----------------------------------------
run r2 "$S" run "$T/w/job.ini"
t_is "$rc" 0 "a second run" || t_show "$T/r2.err"
t_like "$T/r2.err" "data +data: 0 fetched \\(0 B\\), 2 cached, 0 removed" "... fetches nothing"
printf 'XXXXXXX' > "$T/src/a/x"
rm "$T/src/a/sub/y"
run r3 "$S" run "$T/w/job.ini"
t_is "$rc|$(cat "$T/w/out/got")|$(ls "$T/w/data/sub" 2>&1 | wc -l)" "0|XXXXXXXone|0" \
    "a changed object is fetched again, a gone one removed" || t_show "$T/r3.err"
t_like "$T/r3.err" "data +data: 1 fetched \\(7 B\\), 0 cached, 1 removed" "... as the timeline says"
echo tampered >> "$T/w/data/x"
run r4 "$S" run "$T/w/job.ini"
t_is "$rc|$(cat "$T/w/out/got")" "0|XXXXXXXone" "a cached file changed on the machine is fetched again" ||
    t_show "$T/r4.err"
t_like "$T/r4.err" "data +data: 1 fetched \\(7 B\\), 0 cached, 0 removed" "... as the timeline says"
if [ "$(id -u)" -ne 0 ]; then
	(echo z >> "$T/w/data/x") 2>/dev/null
	t_is "$?" 1 "the job's user cannot write to the data"
fi

# --- 3. nothing under the URL ----------------------------------------------------
mkdir -p "$T/w2"
cat > "$T/w2/job.ini" <<EOF2
[job]
name = d
command = true
[provider]
name = local
[data]
in = file://$T/src/nothing/
EOF2
run r5 "$S" run "$T/w2/job.ini"
t_is "$rc|$(grep -c '' "$T/w2/in" 2>&1 | head -c 0)" "65|" "a URL with nothing under it fails the run (65: the job file's to fix)" || t_show "$T/r5.err"
t_like "$T/r5.err" "\\[data\\] in = file://$T/src/nothing/: no object there, and none under it; check the bucket and the path \\(a folder's URL ends in '/'\\)" \
    "... naming the key and the URL"

# --- 4. an agent: the second job fetches nothing ---------------------------------
cat > "$T/L/job.ini" <<EOF2
[job]
name = sw
command = sh -c "cat /$T/ag-data/x > $T/out.\${seed}"
[provider]
name = local
[data]
$T/ag-data = file://$T/src/a/
[sweep]
seed = 1..2
EOF2
run s "$S" submit --create --queue "$T/q" "$T/L/job.ini"
t_is "$rc" 0 "a sweep with [data] is submitted" || t_show "$T/s.err"
run ag "$S" agent --queue "$T/q" --once --dir "$T/ag"
t_is "$rc|$(cat "$T/out.1" "$T/out.2")" "0|XXXXXXXXXXXXXX" "both jobs read the data" || t_show "$T/ag.err"
first=$(sed -nE 's/^spotrun agent: (sw\.[12]): claimed .*/\1/p' "$T/ag.err" | head -n 1)
second=$(sed -nE 's/^spotrun agent: (sw\.[12]): claimed .*/\1/p' "$T/ag.err" | tail -n 1)
t_like "$T/ag.err" "^spotrun agent: $first: data: $T/ag-data: 1 fetched \\(7 B\\), 0 cached, 0 removed" \
    "the first job fetches into the machine's cache"
t_like "$T/ag.err" "^spotrun agent: $second: data: $T/ag-data: 0 fetched \\(0 B\\), 1 cached, 0 removed" \
    "the second fetches nothing"
t_is "$(readlink "$T/ag-data" | sed "s|$T/ag/data/[0-9a-f]*/tree|CACHE|")" CACHE "the link is into DIR/data"
run lg "$S" logs --queue "$T/q" "$second"
t_like "$T/lg.out" "^\\+[0-9.]+ spotrun data: $T/ag-data: 0 fetched" "spotrun logs shows the data lines"
t_done
