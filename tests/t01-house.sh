#!/bin/sh
# t01-house.sh: the module diagram of doc/design.md ("The house") holds in
# the sources and in the built libraries: includes and links only go down,
# no loop of calls between files, no folder over a quarter of the code
# (tests/house.py says how each is checked).
exec python3 "$top_srcdir/tests/house.py" "$top_srcdir" "$top_builddir"
