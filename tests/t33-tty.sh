#!/bin/sh
# t33-tty.sh: `spotrun run` on a terminal (a pty of script(1), 50 columns)
# during a checkpoint that takes seconds while the job goes on printing: the
# progress line is drawn, cut to the width (49 columns: it never wraps), is
# erased before each line of the job's output and of the timeline, so none
# is glued onto it, and is drawn again after. The bytes spotrun wrote to the
# terminal are checked as they are. The job goes on printing until the test
# has seen the checkpoint committed (however long the save took under load),
# then ends.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
mib=$(t_save_mib 3)
t_diag "a save of $mib MiB takes about 3 s here"
cat > "$t_tmp/tty.ini" <<EOF
[job]
name = tty
command = $PY $JOBS/slowsave.py $mib 8 $t_tmp/stop
workdir = $t_tmp
[checkpoint]
store = file://$t_tmp/store
interval = 1s
level = 19
chunk_size = 2MiB
[provider]
name = local
EOF
script -qfec "stty cols 50 rows 20; exec $SPOTRUN run $t_tmp/tty.ini" "$t_tmp/typescript" > /dev/null 2>&1 &
tty_pid=$!
t_pids="$t_pids $tty_pid"
wait_for "$t_tmp/typescript" "  ckpt     0 step .*, committed in " 600 "$tty_pid"
: > "$t_tmp/stop"
wait "$tty_pid"
t_is "$?" 0 "the job runs to its end on a terminal" || t_show "$t_tmp/typescript"
$PY - "$t_tmp/typescript" > "$t_tmp/check" <<'EOF'
import re, sys
data = open(sys.argv[1], "rb").read()
draws = re.findall(rb"\r(checkpoint: [^\r\n\x1b]*)\x1b\[K", data)
print("draws %d" % len(draws))
print("widest %d" % max([len(d) for d in draws] or [0]))
glued = [data[max(0, m.start() - 30):m.end()] for m in re.finditer(rb"working \d+|\d\d:\d\d  ckpt", data)
         if not (data[:m.start()].endswith(b"\n") or data[:m.start()].endswith(b"\r\x1b[K"))]
print("glued %d %r" % (len(glued), glued[:2]))
print("redrawn %d" % len(re.findall(rb"working \d+\r\n\rcheckpoint: ", data)))
print("erased %d" % len(re.findall(rb"\x1b\[K\r\x1b\[Kworking \d+\r\n", data)))
EOF
val() { sed -n "s/^$1 //p" "$t_tmp/check"; }
t_is "$([ "$(val draws)" -ge 2 ] && echo yes)" yes "the progress line was drawn ($(val draws) times)" || t_show "$t_tmp/typescript"
t_is "$([ "$(val widest)" -le 49 ] && echo yes)" yes "at most 49 columns wide on a 50-column terminal (widest: $(val widest))"
t_is "$(val glued)" "0 []" "no line of the job's or of the timeline is glued onto it"
t_is "$([ "$(val erased)" -ge 1 ] && echo yes)" yes "it is erased before a line of the job's output ($(val erased) times)"
t_is "$([ "$(val redrawn)" -ge 1 ] && echo yes)" yes "and drawn again after it ($(val redrawn) times)"
t_done
