#!/bin/sh
# t64-python-path.sh: a spotrun run from its build tree (not installed) puts
# the source tree's python/ on the job's PYTHONPATH, so `import spotrun`
# works in any job with no install: after what PYTHONPATH held (the user's
# copy stays first), alone when it was unset or empty, not twice; a copy of
# the binary elsewhere (as an installed one) adds nothing.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
pydir=$(cd "$top_srcdir/python" && pwd -P)

job() {	# job NAME: a job printing PYTHONPATH and where spotrun came from
	cat > "$t_tmp/$1.ini" <<INI
[job]
name = $1
command = /usr/bin/python3 -c "import os; print('PP=' + os.environ.get('PYTHONPATH', '<unset>'), flush=True); import spotrun; print('MOD=' + os.path.dirname(os.path.dirname(os.path.realpath(spotrun.__file__))))"
workdir = $t_tmp
[checkpoint]
store = file://$t_tmp/store
[provider]
name = local
INI
}
out() { sed -n "s/^$2=//p" "$t_tmp/$1.out"; }

job plain
(unset PYTHONPATH; "$SPOTRUN" run -q "$t_tmp/plain.ini" > "$t_tmp/plain.out" 2>&1)
t_is "$?" 0 "a job runs with PYTHONPATH unset" || t_show "$t_tmp/plain.out"
t_is "$(out plain PP)" "$top_srcdir/python" "unset PYTHONPATH: the source tree's python/ alone"
t_is "$(out plain MOD)" "$pydir" "the job imports the source tree's module"

job empty
PYTHONPATH= "$SPOTRUN" run -q "$t_tmp/empty.ini" > "$t_tmp/empty.out" 2>&1
t_is "$(out empty PP)" "$top_srcdir/python" "empty PYTHONPATH: no empty entry (the current directory) added"

mkdir -p "$t_tmp/mine/spotrun"
cp -r "$top_srcdir/python/spotrun/." "$t_tmp/mine/spotrun/"
job mine
PYTHONPATH="$t_tmp/mine" "$SPOTRUN" run -q "$t_tmp/mine.ini" > "$t_tmp/mine.out" 2>&1
t_is "$(out mine PP)" "$t_tmp/mine:$top_srcdir/python" "a PYTHONPATH of the user's comes first"
t_is "$(out mine MOD)" "$(cd "$t_tmp/mine" && pwd -P)" "the user's own copy of the module wins"

job twice
PYTHONPATH="/x:$top_srcdir/python" "$SPOTRUN" run -q "$t_tmp/twice.ini" > "$t_tmp/twice.out" 2>&1
t_is "$(out twice PP)" "/x:$top_srcdir/python" "already on PYTHONPATH: not added again"

mkdir -p "$t_tmp/bin"
cp "$SPOTRUN" "$t_tmp/bin/spotrun"
job copy
PYTHONPATH=/x "$t_tmp/bin/spotrun" run -q "$t_tmp/copy.ini" > "$t_tmp/copy.out" 2>&1
t_is "$(out copy PP)" "/x" "a copy of the binary outside the build tree adds nothing"
t_done
