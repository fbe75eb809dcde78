# doc/local.mk: man pages and design notes.
EXTRA_DIST += doc/design.md doc/benchmarks.md doc/python.md doc/hacking.md
# What each cloud's IAM must allow a queue's user and VM (t96 checks aws.md's).
EXTRA_DIST += doc/aws.md doc/gcp.md doc/azure.md
dist_man_MANS += doc/spotrun.1
dist_check_SCRIPTS += tests/t05-usage.sh
# Both pages render without a warning (man -l, groff -ww, mandoc -T lint).
dist_check_SCRIPTS += tests/t07-man.sh
