#!/bin/sh
# t02-clang-build.sh: clang builds spotrun, its libraries, examples and
# every check program without a warning, as gcc does (build-aux/test-all
# checks gcc's build of the tree itself for warnings). The source tree's
# files (git's tracked ones and the untracked ones it does not ignore, so
# uncommitted work counts) are copied to a scratch folder and built there
# with CC=clang at -O0: clang's warnings come from its front end, the same
# at any optimisation level, and -O0 -g0 keeps the run near 3 minutes on 2
# cores. The tree's own autotools output (configure, Makefile.in, the
# aux files: what autoreconf made for the build that runs this test) is
# copied with it, times kept, and autoreconf is not run again (a minute of
# a loaded CI machine, and nothing clang compiles): make's rebuild rules
# remake what of it is older than its sources, as they would in the tree.
# No dependency tracking either: the copy is built once.
# Skipped without clang (failed instead with
# SPOTRUN_TEST_REQUIRE_CLANG=1, which test-all sets, since
# build-aux/install-deps installs it) and where the source is not a git
# checkout (a release tarball, make distcheck).
set -u
src=$(cd "$top_srcdir" && pwd -P) || { echo "Bail out! no top_srcdir"; exit 1; }
clang=$(command -v clang 2>/dev/null)
if [ -z "$clang" ]; then
	if [ "${SPOTRUN_TEST_REQUIRE_CLANG:-}" = 1 ]; then
		echo "1..1"
		echo "not ok 1 - clang is not installed, and SPOTRUN_TEST_REQUIRE_CLANG=1 (build-aux/install-deps installs it)"
		exit 0
	fi
	echo "1..0 # SKIP clang is not installed (Debian: apt-get install clang)"; exit 0
fi
git_src() { git -c safe.directory='*' -C "$src" "$@"; }
if ! command -v git >/dev/null 2>&1 ||
    [ "$(git_src rev-parse --show-toplevel 2>/dev/null)" != "$src" ]; then
	echo "1..0 # SKIP $src is not a git checkout of its own (its files are copied by git ls-files)"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t02-clang.XXXXXX") || { echo "Bail out! mktemp"; exit 1; }
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# Not the outer make's jobserver (its file descriptors are not ours: make
# would warn) nor its variables.
unset MAKEFLAGS MFLAGS MAKELEVEL CFLAGS CPPFLAGS LDFLAGS
echo "1..3"
mkdir "$tmp/src" || { echo "Bail out! mkdir"; exit 1; }
# a file deleted from the work tree is still in git's index: not copied
git_src ls-files -z --cached --others --exclude-standard |
	(cd "$src" && tar -cf - --null --ignore-failed-read -T - 2>/dev/null) |
	tar -xf - -C "$tmp/src" || { echo "Bail out! copying the source tree"; exit 1; }
# autoreconf's output in the tree (ignored by git), when it is there
reconf="autoreconf -fi" made=autoreconf
if [ -x "$src/configure" ]; then
	git_src ls-files -z --others --ignored --exclude-standard -- configure aclocal.m4 \
	    config.h.in Makefile.in build-aux m4 |
		(cd "$src" && tar -cf - --null -T -) | tar -xf - -C "$tmp/src" &&
		reconf=: made="the tree's configure" || { echo "Bail out! copying the tree's configure"; exit 1; }
fi
jobs=$(nproc 2>/dev/null || echo 2)
cd "$tmp/src" || exit 1
if $reconf >"$tmp/conf.log" 2>&1 &&
    CC=$clang CFLAGS='-O0 -g0' ./configure -q --disable-dependency-tracking \
    >>"$tmp/conf.log" 2>&1; then
	echo "ok 1 - $made and configure with CC=$clang"
else
	echo "not ok 1 - $made and configure with CC=$clang:"
	tail -n 20 "$tmp/conf.log" | sed 's/^/#   /'
	exit 0
fi
# all, then the check programs (check TESTS= runs none)
if make -j"$jobs" >"$tmp/build.log" 2>&1 && make -j"$jobs" check TESTS= >>"$tmp/build.log" 2>&1; then
	echo "ok 2 - clang builds all and the check programs"
else
	echo "not ok 2 - clang builds all and the check programs:"
	grep -E 'error|Error' "$tmp/build.log" | head -n 20 | sed 's/^/#   /'
fi
if grep -q 'warning:' "$tmp/build.log"; then
	echo "not ok 3 - clang warned ($(grep -c 'warning:' "$tmp/build.log") lines with warning:):"
	grep -A3 'warning:' "$tmp/build.log" | head -n 60 | sed 's/^/#   /'
else
	echo "ok 3 - no warning from clang ($(grep -cE '^ +CC ' "$tmp/build.log") files compiled)"
fi
