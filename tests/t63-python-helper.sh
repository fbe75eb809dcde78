#!/bin/sh
# t63-python-helper.sh: the spotrun Python module's unit test
# (tests/python-helper.py, TAP) with Debian's Python and its python3-torch,
# then its protocol part again with Python 3.9, the oldest the module
# supports, when a python3.9 is installed (pyenv's, here).
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
t_python_module

"$PY" "$top_srcdir/tests/python-helper.py" > "$t_tmp/main.tap" 2> "$t_tmp/main.err"
rc=$?
plan=$(grep -E '^1\.\.[0-9]+$' "$t_tmp/main.tap")
grep -vE '^1\.\.[0-9]+$' "$t_tmp/main.tap"
ran=$(grep -cE '^(not )?ok ' "$t_tmp/main.tap")
t_n=$ran
t_failed=$(grep -cE '^not ok ' "$t_tmp/main.tap")
t_is "$rc" 0 "python-helper.py with $PY: exit 0" || t_show "$t_tmp/main.err"
t_is "$plan" "1..$ran" "python-helper.py with $PY: ran to its plan" || t_show "$t_tmp/main.err"

# A python3.9 on PATH, else pyenv's (a shim on PATH runs only the versions
# pyenv is set to).
py39=
for p in $(command -v python3.9) "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.9*/bin/python3.9; do
	if [ -x "$p" ] && [ "$("$p" -c 'import sys; print(sys.version_info[:2])' 2>/dev/null)" = "(3, 9)" ]; then
		py39=$p
		break
	fi
done
if [ -n "$py39" ]; then
	"$py39" "$top_srcdir/tests/python-helper.py" > "$t_tmp/py39.tap" 2> "$t_tmp/py39.err"
	t_is "$?" 0 "python-helper.py with Python 3.9: exit 0" || t_show "$t_tmp/py39.err"
	t_is "$(grep -cE '^not ok ' "$t_tmp/py39.tap")" 0 "python-helper.py with Python 3.9: no test failed" \
		|| grep -E '^not ok|^#' "$t_tmp/py39.tap" | sed 's/^/# /'
else
	t_skip "python-helper.py with Python 3.9: no python3.9"
	t_skip "python-helper.py with Python 3.9: no python3.9"
fi
t_done
