#!/bin/sh
# t64-python-path.sh: a spotrun run from its build tree (not installed) puts
# the source tree's python/ on the job's PYTHONPATH, so `import spotrun`
# works in any job with no install: after what PYTHONPATH held (the user's
# copy stays first), alone when it was unset or empty, not twice; a copy of
# the binary elsewhere (as an installed one) writes out the module it
# carries and adds that, which a virtual environment's Python imports too;
# pip installs python/ (pyproject.toml) into a virtual environment.
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

# Any other spotrun (installed, or fetched by a VM's user-data) writes out
# the module it carries into the job's local folder and puts that there.
mkdir -p "$t_tmp/bin"
cp "$SPOTRUN" "$t_tmp/bin/spotrun"
job copy
PYTHONPATH=/x "$t_tmp/bin/spotrun" run -q "$t_tmp/copy.ini" > "$t_tmp/copy.out" 2>&1
placed=$t_tmp/.spotrun/copy/python
t_is "$(out copy PP)" "/x:$placed" "a copy of the binary puts the module it carries on PYTHONPATH" ||
    t_show "$t_tmp/copy.out"
t_is "$(out copy MOD)" "$(cd "$placed" 2>/dev/null && pwd -P)" "... and the job imports that one"
for f in __init__.py torch.py hf.py lightning.py; do
	cmp -s "$top_srcdir/python/spotrun/$f" "$placed/spotrun/$f"
	t_is "$?" 0 "the module written out is python/spotrun/$f byte for byte"
done
ino=$(stat -c %i "$placed/spotrun/torch.py")
echo 'damaged = True' > "$placed/spotrun/__init__.py"
(unset PYTHONPATH; "$t_tmp/bin/spotrun" run -q "$t_tmp/copy.ini" > "$t_tmp/copy2.out" 2>&1)
t_is "$(out copy2 PP)" "$placed" "the next run, PYTHONPATH unset: the written module alone"
cmp -s "$top_srcdir/python/spotrun/__init__.py" "$placed/spotrun/__init__.py"
t_is "$?" 0 "... a file changed since is written out again"
t_is "$(stat -c %i "$placed/spotrun/torch.py")" "$ino" "... one still the same is left alone"

# Where it cannot be written, the run says so and goes on: a job that
# is no Python job needs no module.
mkdir -p "$t_tmp/.spotrun/nopy"
: > "$t_tmp/.spotrun/nopy/python"
sed 's|command = .*|command = echo ran|; s|name = copy|name = nopy|' "$t_tmp/copy.ini" > "$t_tmp/nopy.ini"
"$t_tmp/bin/spotrun" run "$t_tmp/nopy.ini" > "$t_tmp/nopy.out" 2>&1
t_is "$?" 0 "a module that cannot be written out does not fail the run" || t_show "$t_tmp/nopy.out"
t_has "$t_tmp/nopy.out" "warning  write module spotrun into $t_tmp/.spotrun/nopy/python: " \
    "... which says why and where"
t_has "$t_tmp/nopy.out" "; the job finds \`import spotrun\` only where its Python has the module (doc/python.md)" \
    "... and what it means"

# A virtual environment without the module (a job's own Python on a VM)
# imports it with no PYTHONPATH of the job's.
/usr/bin/python3 -m venv --without-pip "$t_tmp/bare" || t_bail "python3 -m venv failed"
sed "s|/usr/bin/python3|$t_tmp/bare/bin/python|; s|name = copy|name = venv|" "$t_tmp/copy.ini" > "$t_tmp/venv.ini"
(unset PYTHONPATH; "$t_tmp/bin/spotrun" run -q "$t_tmp/venv.ini" > "$t_tmp/venv.out" 2>&1)
t_is "$(out venv MOD)" "$(cd "$t_tmp/.spotrun/venv/python" 2>/dev/null && pwd -P)" \
    "a job in a virtual environment without the module imports spotrun" || t_show "$t_tmp/venv.out"

# pip installs python/ into a virtual environment (with no index: the
# build's setuptools and wheel from Debian's wheels), at configure's version.
cp -r "$top_srcdir/python" "$t_tmp/pysrc"
rm -rf "$t_tmp/pysrc/spotrun/__pycache__"
/usr/bin/python3 -m venv "$t_tmp/env" || t_bail "python3 -m venv (with pip) failed"
"$t_tmp/env/bin/pip" install -q --no-index --find-links /usr/share/python-wheels "$t_tmp/pysrc" \
    > "$t_tmp/pip.out" 2>&1
t_is "$?" 0 "pip install python/ into a virtual environment" || t_show "$t_tmp/pip.out"
(cd / && "$t_tmp/env/bin/python" -c 'import importlib.metadata as m, spotrun, os; print(m.version("spotrun"), os.path.dirname(spotrun.__file__))') > "$t_tmp/pip-import.out" 2>&1
t_is "$(cat "$t_tmp/pip-import.out")" \
    "$(sed -n 's/^AC_INIT(\[spotrun\], \[\([^]]*\)\].*/\1/p' "$top_srcdir/configure.ac") $($t_tmp/env/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/spotrun" \
    "the installed package: configure's version, in the environment's site-packages"
t_done
