#!/bin/sh
# t73-python-doc.sh: the code doc/python.md shows is the code the example
# jobs run (and the tests t65, t71, t72 with them): each ```python block
# after a line "<!-- from examples/pytorch/FILE -->" is, indentation aside,
# a run of consecutive lines of FILE, word for word. The blocks without such
# a line are only the sketches of the first section (before "## Where it
# is"), which elide code ("...").
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
"$PY" - "$top_srcdir" > "$t_tmp/doc.out" 2>&1 <<'PYEOF'
import os
import re
import sys
import textwrap

top = sys.argv[1]
lines = open(os.path.join(top, "doc/python.md")).read().split("\n")
section, source, i = "", None, 0
while i < len(lines):
    l = lines[i]
    if l.startswith("## "):
        section = l[3:]
    m = re.fullmatch(r"<!-- from (examples/pytorch/[\w.]+) -->", l)
    if m:
        source = m.group(1)
    elif l == "```python":
        j = lines.index("```", i + 1)
        block, at = lines[i + 1:j], i + 1
        if source is None:
            print("unquoted %s line %d" % (section or "(first)", at + 1))
        else:
            want = textwrap.dedent("\n".join(block))
            have = open(os.path.join(top, source)).read().split("\n")
            n = len(block)
            found = any(textwrap.dedent("\n".join(have[k:k + n])) == want
                        for k in range(len(have) - n + 1))
            print("%s %s line %d: %s" % ("quoted" if found else "DIFFERS", source, at + 1,
                                         block[0].strip()))
        source, i = None, j
    elif l.strip():
        source = None
    i += 1
PYEOF
t_is "$?" 0 "doc/python.md read" || t_show "$t_tmp/doc.out"
t_is "$(grep -c '^DIFFERS ' "$t_tmp/doc.out")" 0 "no quote differs from its example" ||
	t_show "$t_tmp/doc.out"
t_is "$(grep -c '^quoted ' "$t_tmp/doc.out")" 8 \
	"8 quotes of examples/pytorch/: ddp.py 2, dcp.py 4, hf_train.py 1, pl_train.py 1" ||
	t_show "$t_tmp/doc.out"
for f in ddp.py dcp.py hf_train.py pl_train.py; do
	t_like "$t_tmp/doc.out" "^quoted examples/pytorch/$f " "doc/python.md quotes $f"
done
t_is "$(grep '^unquoted ' "$t_tmp/doc.out" | cut -d' ' -f2)" "$(printf '(first)\n(first)')" \
	"the two sketches of the first section are the only blocks quoting nothing" ||
	t_show "$t_tmp/doc.out"
t_done
