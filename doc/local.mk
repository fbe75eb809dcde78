# doc/local.mk: man pages and design notes.
EXTRA_DIST += doc/design.md doc/benchmarks.md doc/python.md doc/hacking.md
dist_man_MANS += doc/spotrun.1
dist_check_SCRIPTS += tests/t05-usage.sh
# Both pages render without a warning (man -l, groff -ww, mandoc -T lint).
dist_check_SCRIPTS += tests/t07-man.sh
