# doc/local.mk: man pages and design notes.
EXTRA_DIST += doc/design.md doc/benchmarks.md
