#!/bin/sh
# first-async.sh: how long the first spotrun_save_async blocks training
# against the second, without and with spotrun_prepare_async (issue 21,
# item 13: the first one faulted its staging memory in inside the call).
# tests/bench-libsave saves two buffers of N/2 MiB of random bytes twice
# (two states) into a file:// store: for each call the seconds training
# was blocked and the CPU seconds of the calling thread meanwhile; with
# prepare, spotrun_prepare_async's own. BENCH_FIRST_ASYNC_MIB (default
# "64 196"), BENCH_THREADS (the library's threads; default all CPUs).
# Figures: doc/benchmarks.md.
set -eu
: "${top_builddir:=.}"
lib=$top_builddir/tests/bench-libsave
[ -x "$lib" ] || make -C "$top_builddir" tests/bench-libsave >/dev/null
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-first-async.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
kv() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
for mib in ${BENCH_FIRST_ASYNC_MIB:-64 196}; do
	for f in a1 b1 a2 b2; do head -c $((mib << 19)) /dev/urandom > "$tmp/$f"; done
	for mode in save-async save-prepared; do
		rm -rf "$tmp/store"
		"$lib" "$mode" "file://$tmp/store" 2 "w=bytes:$tmp/a1,$tmp/b1" \
			"m=bytes:$tmp/a2,$tmp/b2" > "$tmp/out"
		p=$(grep '^prepare ' "$tmp/out" || echo "prepare seconds=- cpu=-")
		one=$(sed -n 's/^save ckpt=1 //p' "$tmp/out")
		two=$(sed -n 's/^save ckpt=2 //p' "$tmp/out")
		printf '%4s MiB %-13s prepare %6s s (cpu %6s)  first %6s s (cpu %6s)  second %6s s (cpu %6s)\n' \
			"$mib" "$mode" "$(kv seconds "$p")" "$(kv cpu "$p")" \
			"$(kv seconds "$one")" "$(kv blocked_cpu "$one")" \
			"$(kv seconds "$two")" "$(kv blocked_cpu "$two")"
	done
done
