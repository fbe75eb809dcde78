#!/bin/sh
# t08-gitignore.sh: every file the build and the tests make is covered by
# .gitignore, so that `git status` stays clean after the README's in-tree
# build (./configure && make && make check in the source tree) as after
# one in _build/. Run from any build tree, it asks git, for each file in
# that tree, whether the same path in the source tree would be ignored (the
# build tree has the source tree's layout); in an in-tree build the files
# git tracks are skipped. build-aux/test-all checks besides that the source
# tree itself gains no untracked file. Skipped where the source is not a
# git checkout of its own (a release tarball, make distcheck).
set -u
src=$(cd "$top_srcdir" && pwd -P) || { echo "Bail out! no top_srcdir"; exit 1; }
build=$(cd "${top_builddir:-.}" && pwd -P) || { echo "Bail out! no top_builddir"; exit 1; }
git_src() { git -c safe.directory='*' -C "$src" "$@"; }
if ! command -v git >/dev/null 2>&1; then
	echo "1..0 # SKIP git is not installed"; exit 0
fi
if [ "$(git_src rev-parse --show-toplevel 2>/dev/null)" != "$src" ]; then
	echo "1..0 # SKIP $src is not a git checkout of its own"; exit 0
fi
echo "1..2"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t08-gitignore.XXXXXX") || { echo "Bail out! mktemp"; exit 1; }
trap 'rm -rf "$tmp"' EXIT
(cd "$build" && find . -path ./.git -prune -o -type f -print -o -type l -print) |
	sed 's|^\./||' | sort >"$tmp/all"
if [ "$build" = "$src" ]; then
	git_src ls-files | sort >"$tmp/tracked"
	comm -23 "$tmp/all" "$tmp/tracked" >"$tmp/made"
else
	cp "$tmp/all" "$tmp/made"
fi
git_src check-ignore --no-index --stdin <"$tmp/made" | sort >"$tmp/ignored"
comm -23 "$tmp/made" "$tmp/ignored" >"$tmp/loose"
# the programs the build made: the executables among its files
while IFS= read -r f; do
	[ -x "$build/$f" ] && [ ! -L "$build/$f" ] && echo "$f"
done <"$tmp/made" >"$tmp/progs"
loose_progs=$(comm -12 "$tmp/loose" "$tmp/progs")
if [ -z "$loose_progs" ] && [ "$(wc -l <"$tmp/progs")" -gt 0 ]; then
	echo "ok 1 - the $(wc -l <"$tmp/progs" | tr -d ' ') programs the build made are ignored"
else
	echo "not ok 1 - programs the build made that .gitignore does not cover (add them there):"
	printf '%s\n' "$loose_progs" | sed 's/^/#   /'
fi
if [ ! -s "$tmp/loose" ]; then
	echo "ok 2 - all $(wc -l <"$tmp/made" | tr -d ' ') files of the build tree are ignored"
else
	echo "not ok 2 - files of the build tree that would show up in git status (add them to .gitignore):"
	sed 's/^/#   /' "$tmp/loose" | head -n 40
fi
