#!/bin/sh
# t05-usage.sh: every command's usage line (generated from the command table)
# appears verbatim in the SYNOPSIS of doc/spotrun.1, and the SYNOPSIS lists no
# command the binary lacks; every option of every command (the option lines
# of its help, generated from the same entry) is in the man page; plus the
# exit codes of usage errors.
set -u
man_page="$top_srcdir/doc/spotrun.1"
# An entry too long for one line goes on indented lines: joined to it here.
synopsis=$(groff -mdoc -Tascii -P-c -P-b -P-u "$man_page" 2>/dev/null |
	sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' | sed -e '1d' -e '$d' | grep . |
	awk '/^     [^ ]/ { if (l != "") print l; l = $0; next } { l = l " " $0 } END { print l }' |
	sed -e 's/^ *//' -e 's/  */ /g')
cmds=$("$SPOTRUN" help | sed -n '/^commands:/,/^$/p' | sed -e '1d' | awk 'NF {print $1}')
n=0
for c in $cmds; do n=$((n + 1)); done
echo "1..$((2 * n + 7))"
i=0
for c in $cmds; do
	i=$((i + 1))
	# the usage: its first line and the indented ones after it, joined
	usage=$("$SPOTRUN" help "$c" | sed '/^$/,$d' | tr '\n' ' ' |
		sed -e 's/^usage: //' -e 's/  */ /g' -e 's/ $//')
	if printf '%s\n' "$synopsis" | grep -qxF "$usage"; then
		echo "ok $i - usage of $c is in the man page: $usage"
	else
		echo "not ok $i - usage of $c is not in the SYNOPSIS of doc/spotrun.1: $usage"
		printf '%s\n' "$synopsis" | sed 's/^/# /'
	fi
done
i=$((i + 1))
extra=$(printf '%s\n' "$synopsis" | awk '{print $2}' | grep -vxE -e '--version|--help' | sort -u)
want=$(printf '%s\n' $cmds | sort -u)
if [ "$extra" = "$want" ]; then
	echo "ok $i - the SYNOPSIS lists exactly the commands of the binary"
else
	echo "not ok $i - SYNOPSIS commands differ: man: $(echo $extra) binary: $(echo $want)"
fi
# The options of each command: its help's option lines ("  -s, --store STORE
# help") give the names; each must be in the man page's text.
page=$(groff -mdoc -Tascii -P-c -P-b -P-u "$man_page" 2>/dev/null)
for c in $cmds; do
	i=$((i + 1))
	names=$("$SPOTRUN" help "$c" | sed -n '/^options:$/,$p' | sed 1d |
		sed -E 's/^ +((-[A-Za-z0-9], )?(--[a-z][a-z0-9-]*)?|-[A-Za-z0-9]).*/\1/' | tr ',' '\n' | awk 'NF {print $1}')
	missing=
	for o in $names; do
		printf '%s\n' "$page" | grep -qE -- "(^|[^-A-Za-z0-9])$o([^-A-Za-z0-9]|$)" || missing="$missing $o"
	done
	if [ -z "$missing" ] && [ -n "$names" ]; then
		echo "ok $i - the options of $c are in the man page:" $names
	else
		echo "not ok $i - options of $c missing from doc/spotrun.1:$missing"
	fi
done
i=$((i + 1))
v=$("$SPOTRUN" --version)
case "$v" in "spotrun "[0-9]*) echo "ok $i - --version: $v" ;; *) echo "not ok $i - --version printed '$v'" ;; esac
check_code() { # description, expected code, command...
	desc=$1 want=$2; shift 2
	"$@" >/dev/null 2>&1
	got=$?
	i=$((i + 1))
	if [ "$got" -eq "$want" ]; then echo "ok $i - $desc exits $want"; else echo "not ok $i - $desc exits $got, want $want"; fi
}
check_code "no arguments" 64 "$SPOTRUN"
check_code "an unknown command" 64 "$SPOTRUN" frobnicate
check_code "run without a job file" 64 "$SPOTRUN" run
check_code "run with an unknown option" 64 "$SPOTRUN" run -Z x.ini
i=$((i + 1))
msg=$("$SPOTRUN" frobnicate 2>&1)
if [ "$msg" = "spotrun: unknown command 'frobnicate'; try 'spotrun help'" ]; then
	echo "ok $i - unknown command message"
else
	echo "not ok $i - unknown command message: $msg"
fi
