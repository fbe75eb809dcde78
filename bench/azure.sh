#!/bin/sh
# azure.sh: the checkpoint pipeline into an az:// store against
# `tar | zstd -1 -T0 | the Azure SDK's streaming upload` on the same data
# and the same server, in one run: bench/s3.sh's comparison for Azure Blob
# (issue 22, item 4: our save's client CPU <= 1/4 of the baseline's, every
# block still checked by the server). The server is Azurite on loopback
# (tests/azurite.sh, started here in a temporary directory and stopped at
# exit); the data the synthetic training checkpoint of bench/ckpt.sh
# (tests/bench-ckpt gen). Measured:
#
#  save:    tar -cf - DIR | zstd -q -1 -T0 | bench/azblob.py put (the SDK
#           under the Azure CLI, blocks of 4 MiB, 2 at once as the CLI's
#           default; the CLI cannot read a pipe, see azblob.py), against
#           `bench-ckpt save az://ACCOUNT/C/PREFIX?endpoint=... DIR` with
#           the store's defaults (an x-ms-content-crc64 on every block,
#           which Azure checks; Azurite, run with --loose, takes it
#           unchecked) and again with checksum=md5 (a Content-MD5, which
#           Azurite checks too);
#  restore: azblob.py get | zstd -q -d | tar -xf - -C OUT against
#           `bench-ckpt restore az://... OUT`, then a sync; every restored
#           tree is compared with the source (diff -r), a difference fails
#           the benchmark;
#  CPU:     user + system time of each side (the whole pipeline for the
#           baseline) and of the server (Azurite's node), since client and
#           server share the machine's CPUs: the client's CPU per GiB is
#           what decides a real node's wall time, its server being
#           elsewhere (bench/lib.sh's timed);
#  stored:  the sum of the blob sizes; peak RSS the largest process.
#
# Runs alternate baseline / ours (which goes first alternates too); each
# starts after the container is emptied and synced and a second of quiet.
# The median of BENCH_AZ_REPS (default 3) and the range are reported, with
# each target met or NOT MET; the exit status is non-zero when the
# benchmark itself failed, for an unmet target only with
# BENCH_AZ_STRICT=1. Without Azurite (tests/azurite.sh install) or the
# Azure SDK it says so and skips.
#
# Environment: BENCH_AZ_MIB (size, default 1024), BENCH_AZ_REPS,
# BENCH_AZ_DIR (where the data, Azurite's files and the restored trees
# go; default $TMPDIR or /tmp), BENCH_AZ_OLD (another build's bench-ckpt,
# run with the defaults in the same rounds: a change's before and after).
set -eu
: "${top_builddir:=.}"
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$top_srcdir/bench/lib.sh"
bin=$top_builddir/tests/bench-ckpt
[ -x "$bin" ] || make -C "$top_builddir" tests/bench-ckpt >/dev/null
for tool in tar zstd diff sync awk date node; do
	command -v "$tool" >/dev/null || { echo "azure.sh: $tool is needed" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "azure.sh: GNU time (/usr/bin/time) is needed:" \
    "build-aux/install-deps" >&2; exit 1; }
py=/usr/bin/python3
if ! "$py" -c 'import azure.storage.blob' 2>/dev/null; then
	echo "azure.sh: skipped: no Azure SDK for Python (build-aux/install-deps installs azure-cli)"
	exit 0
fi
if ! sh "$top_srcdir/tests/azurite.sh" install >/dev/null 2>&1; then
	echo "azure.sh: skipped: Azurite is not installed and cannot be (tests/azurite.sh install)"
	exit 0
fi

mib=${BENCH_AZ_MIB:-1024}
reps=${BENCH_AZ_REPS:-3}
tmp=$(mktemp -d "${BENCH_AZ_DIR:-${TMPDIR:-/tmp}}/bench-az.XXXXXX")
st=$tmp/azurite
trap 'sh "$top_srcdir/tests/azurite.sh" stop "$st" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
src=$tmp/src
out=$tmp/out
res=$tmp/results
cont=bench
sh "$top_srcdir/tests/azurite.sh" start "$st" >"$tmp/azurite.out" 2>&1 ||
    { cat "$tmp/azurite.out" >&2; echo "azure.sh: could not start Azurite" >&2; exit 1; }
. "$st/env"
AZ_ACCOUNT=$SPOTRUN_TEST_AZ_ACCOUNT
AZ_KEY=$SPOTRUN_TEST_AZ_KEY
AZ_ENDPOINT=$SPOTRUN_TEST_AZ_ENDPOINT
AZURE_STORAGE_KEY=$SPOTRUN_TEST_AZ_KEY
export AZ_ACCOUNT AZ_KEY AZ_ENDPOINT AZURE_STORAGE_KEY
blob() { "$py" "$top_srcdir/bench/azblob.py" "$@"; }
url() { echo "az://$AZ_ACCOUNT/$cont/$1?endpoint=$AZ_ENDPOINT${2:+&$2}"; }

# CPU seconds used so far by Azurite.
server_cpu()
{
	awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$(cat "$st/azurite.pid")/stat"
}
clean()
{
	rm -rf "$@"
	blob rm "$cont"
	sync
	sleep 1
}
verify()
{
	diff -r "$src" "$out" >/dev/null ||
	    { echo "azure.sh: $1: the restored tree differs from the source" >&2; exit 1; }
}
base()
{
	clean
	timed bsave sh -c 'tar -cf - -C "$1" . | zstd -q -1 -T0 | "$2" "$3" put "$4" ckpt.tar.zst' \
	    sh "$src" "$py" "$top_srcdir/bench/azblob.py" "$cont"
	synced bsave_sync
	rec bstored "$(blob size "$cont" ckpt)"
	rm -rf "$out"
	mkdir "$out"
	timed brest sh -c '"$1" "$2" get "$3" ckpt.tar.zst | zstd -q -d | tar -xf - -C "$4"' \
	    sh "$py" "$top_srcdir/bench/azblob.py" "$cont" "$out"
	synced brest_sync
	verify "azblob.py get | zstd -d | tar -x"
}
old=${BENCH_AZ_OLD:-}
[ -z "$old" ] || [ -x "$old" ] || { echo "azure.sh: BENCH_AZ_OLD=$old is not a program" >&2; exit 1; }
# ours NAME OPTS [BENCH-CKPT]
ours()
{
	clean
	timed "${1}save" "${3:-$bin}" save "$(url "$1" "$2")" "$src"
	synced "${1}save_sync"
	rec "${1}stored" "$(blob size "$cont" "$1/")"
	rm -rf "$out"
	timed "${1}rest" "${3:-$bin}" restore "$(url "$1" "$2")" "$out"
	synced "${1}rest_sync"
	verify "spotrun restore ($1)"
}

blob mk "$cont"
"$bin" gen "$src" "$mib"
sync
cat "$src"/* >/dev/null
raw=$(cat "$src"/* | wc -c)
: >"$res"
i=0
while [ "$i" -lt "$reps" ]; do
	i=$((i + 1))
	if [ $((i % 2)) -eq 1 ]; then
		base; ours o ""; [ -z "$old" ] || ours p "" "$old"; ours m checksum=md5
	else
		ours m checksum=md5; [ -z "$old" ] || ours p "" "$old"; ours o ""; base
	fi
done

awk -v raw="$raw" -v mib="$mib" -v reps="$reps" -v cpus="$(nproc)" -v old="$old" \
    -v strict="${BENCH_AZ_STRICT:-0}" "$bench_stats_awk"'
function mbs(s) { return raw / s / 1e6 }
function row(what, k, stored) {
	printf "  %-38s %5.2f s (%s) %4.0f MB/s  CPU %4.1f + server %4.1f s", what,
	    median(k), range(k), mbs(median(k)), median(k "_cpu"), median(k "_srv")
	if (stored != "") printf "  stored/raw %.3f", stored / raw
	printf "  peak RSS %3.0f MiB\n", median(k "_rss") / 1024
	printf "  %-38s %5.2f s (%s)\n", "  (the same, then sync)", median(k "_sync"), range(k "_sync")
}
function verdict(ok) { if (!ok) failed = 1; return ok ? "met" : "NOT MET" }
{ cnt[$1]++; val[$1, cnt[$1]] = $2 }
END {
	gib = raw / 1073741824
	printf "checkpoint of %.0f MiB (%d bytes) to Azurite on loopback, %d CPUs shared by" \
	    " client and server; median (range) of %d runs\n", mib, raw, cpus, reps
	print "save:"
	row("tar | zstd -1 -T0 | azblob.py put", "bsave", median("bstored"))
	row("spotrun (defaults: CRC-64 on each block)", "osave", median("ostored"))
	if (old != "") row("the BENCH_AZ_OLD build (defaults)", "psave", median("pstored"))
	row("spotrun, checksum=md5", "msave", median("mstored"))
	print "restore:"
	row("azblob.py get | zstd -d | tar -x", "brest", "")
	row("spotrun", "orest", "")
	if (old != "") row("the BENCH_AZ_OLD build", "prest", "")
	row("spotrun, checksum=md5", "mrest", "")
	print "ours / baseline:"
	split(old != "" ? "o m p" : "o m", ks, " ")
	split("defaults|checksum=md5|BENCH_AZ_OLD", ws, "|")
	for (j = 1; j in ks; j++) {
		k = ks[j]
		cpur = median(k "save_cpu") / median("bsave_cpu")
		printf "  %s: client CPU/GiB save %.2f s against %.2f s: %.2fx of it (target" \
		    " <= 1/4: %s); restore %.2f s against %.2f s\n", ws[j],
		    median(k "save_cpu") / gib, median("bsave_cpu") / gib, cpur,
		    verdict(cpur <= 0.25), median(k "rest_cpu") / gib, median("brest_cpu") / gib
		printf "  %s: save %.2fx, restore %.2fx (with the syncs %.2fx, %.2fx), stored" \
		    " %.3fx\n", ws[j], median("bsave") / median(k "save"),
		    median("brest") / median(k "rest"), median("bsave_sync") / median(k "save_sync"),
		    median("brest_sync") / median(k "rest_sync"), median(k "stored") / median("bstored")
	}
	exit failed && strict == 1
}' "$res"
