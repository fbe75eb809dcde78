#!/bin/sh
# t07-man.sh: the man pages (doc/spotrun.1, doc/spotrun-job.5, doc/spotrun-pool.5,
# doc/libspotrun.3) render as
# Debian's tools render them, without a warning: groff through man-db
# (`man -l`, whose --warnings hands -w to groff), groff -mandoc with every
# warning on (-ww), and `mandoc -T lint` at warning level; and the quotes
# of the rendering are balanced: every ‘ is closed by a ’ before the next
# one opens (a .Ql on a line of .Pq used to swallow the rest of the line,
# `ckpt-pointer’’’’’`). The command's and the job file's pages have a FILES
# section naming the local state and the store's layout.
#
# The harness exports top_srcdir; by hand:
#   SPOTRUN=$PWD/spotrun top_srcdir=/path/to/src sh /path/to/src/tests/t07-man.sh
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
pages="$top_srcdir/doc/spotrun.1 $top_srcdir/doc/spotrun-job.5 $top_srcdir/doc/spotrun-pool.5 $top_srcdir/doc/libspotrun.3"
tmp=$t_tmp
show() {	# show FILE: as TAP comments
	sed 's/^/# /' "$1"
}

# quotes FILE: print the lines whose ‘ and ’ do not alternate, starting
# with ‘ (the page is rendered without line breaks in text, so a quote
# never spans lines).
quotes() {
	awk '{
		s = $0; open = 0; bad = 0
		while ((i = match(s, /‘|’/)) > 0) {
			q = substr(s, i, RLENGTH)
			if (q == "‘") { if (open) bad = 1; open = 1 } else { if (!open) bad = 1; open = 0 }
			s = substr(s, i + RLENGTH)
		}
		if (bad || open) print NR ": " $0
	}' "$1"
}

for page in $pages; do
	name=${page##*/}
	for tool in man groff mandoc; do
		if ! command -v "$tool" >/dev/null 2>&1; then
			t_skip "$name: $tool is not installed (build-aux/install-deps)"
			continue
		fi
		case $tool in
		man)	MANWIDTH=10000 LC_ALL=C.UTF-8 man --warnings -E UTF-8 -l "$page" \
			    > "$tmp/out" 2> "$tmp/err" ;;
		groff)	groff -mandoc -Tutf8 -ww -z "$page" > "$tmp/out" 2> "$tmp/err" ;;
		mandoc)	mandoc -T lint -W warning "$page" > "$tmp/out" 2> "$tmp/err" ;;
		esac
		code=$?
		# mandoc's note about the system's stale database is no warning
		# about the page
		grep -v '^mandoc: outdated mandoc.db' "$tmp/err" >> "$tmp/out"
		if [ "$tool" = man ]; then
			t_result "$([ "$code" -eq 0 ] && [ ! -s "$tmp/err" ]; echo $?)" \
			    "$name: man -l renders it without a warning"
			[ -s "$tmp/err" ] && show "$tmp/err"
			mv "$tmp/out" "$tmp/$name.txt"
			continue
		fi
		t_result "$([ "$code" -eq 0 ] && [ ! -s "$tmp/out" ]; echo $?)" \
		    "$name: $tool reports no warning"
		[ -s "$tmp/out" ] && show "$tmp/out"
	done
	if [ -f "$tmp/$name.txt" ]; then
		quotes "$tmp/$name.txt" > "$tmp/q"
		t_result "$([ ! -s "$tmp/q" ]; echo $?)" "$name: every quote opened is closed, once"
		[ -s "$tmp/q" ] && show "$tmp/q"
	fi
	# the library's page and the pool file's have no local state or
	# store layout of their own
	if [ -f "$tmp/$name.txt" ] && [ "$name" != libspotrun.3 ] && [ "$name" != spotrun-pool.5 ]; then
		files=$(sed -n '/^FILES$/,/^[A-Z][A-Z ]*$/p' "$tmp/$name.txt")
		missing=
		for want in WORKDIR/.spotrun/NAME/ lock ckpt/ ckpt.restore.PID ctl/request logs/ \
		    STORE/NAME/ LATEST manifests/SEQ.json packs/SEQ-RAND.tar attempts/RUN-N.json \
		    FINISHED .tmp/; do
			printf '%s\n' "$files" | grep -qF -- "$want" || missing="$missing $want"
		done
		t_result "$([ -z "$missing" ]; echo $?)" \
		    "$name: a FILES section with the local state and the store's layout"
		[ -n "$missing" ] && echo "# missing from FILES:$missing"
	fi
done
# The sources themselves: no quote macro that swallows the rest of its line
# (a .Ql followed by No or another .Ql on one line).
grep -nE '^\.(Pq|Po|Bq|Dq|Sq).* (Ql|Dq|Sq|Qq) .* (No|Ql|Dq|Sq) ' $pages > "$tmp/src"
t_result "$([ ! -s "$tmp/src" ]; echo $?)" "no enclosure macro in the middle of a line of the sources"
[ -s "$tmp/src" ] && show "$tmp/src"
t_done
