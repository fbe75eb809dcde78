#!/bin/sh
# t09-lib-exports.sh: libspotrun.so exports libspotrun.h's API and nothing
# else (lib/libspotrun.map), each tier at its own version node: the stable
# functions at SPOTRUN_0.1, those the header fences with
# SPOTRUN_EXPERIMENTAL at SPOTRUN_EXPERIMENTAL_0, a node that inherits
# nothing (objdump -T's dynamic symbols with their versions, readelf -V's
# version definitions); a name moved to the other node fails it, as does
# a header whose two parts declare other names; its pkg-config file names
# the library and the header's folder; and no function in it can end the
# job's process (abort, exit, assert, sr_fatal, the allocators that die on
# out-of-memory), as objdump's disassembly shows.
: "${top_builddir:?}" "${top_srcdir:?}"
so="$top_builddir/.libs/libspotrun.so"
h="$top_srcdir/lib/libspotrun.h"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..7"
cat > "$tmp/stable" <<'LIST'
spotrun_checkpoint_requested
spotrun_create
spotrun_free
spotrun_getErrorName
spotrun_getErrorString
spotrun_params_init
spotrun_register
spotrun_restore
spotrun_save
spotrun_versionNumber
LIST
cat > "$tmp/experimental" <<'LIST'
spotrun_prepare_async
spotrun_register_device
spotrun_report
spotrun_save_async
spotrun_set_cuda_library
spotrun_set_last
spotrun_set_staging_bytes
spotrun_wait
LIST
{ sed 's/$/ SPOTRUN_0.1/' "$tmp/stable"
  sed 's/$/ SPOTRUN_EXPERIMENTAL_0/' "$tmp/experimental"; } | sort > "$tmp/want"
if [ -f "$so" ]; then echo "ok 1 - libspotrun.so is built"; else echo "not ok 1 - no $so"; fi
# objdump -T: "ADDR g DF .text SIZE VERSION NAME"; the functions defined
# (not *UND*), each with its version; the nodes themselves are *ABS*
objdump -T "$so" 2>&1 | awk '$4 == ".text" || $3 == ".text" { print $NF, $(NF-1) }' |
    sort > "$tmp/got"
if [ -s "$tmp/got" ] && cmp -s "$tmp/want" "$tmp/got"; then
	echo "ok 2 - it exports exactly the API: the stable part at SPOTRUN_0.1, the experimental at SPOTRUN_EXPERIMENTAL_0"
else
	echo "not ok 2 - its exported functions or their version nodes differ from the API (- want, + got)"
	diff "$tmp/want" "$tmp/got" | sed 's/^/# /'
fi
# readelf -V: the version definitions, with "Cnt: 2" and a "Parent 1:"
# line for a node that inherits
readelf -V "$so" > "$tmp/verdef" 2>&1
sed -n '/Version definition section/,/^$/p' "$tmp/verdef" |
    sed -n 's/.*Cnt: \([0-9]*\)  *Name: \(.*\)$/\2 \1/p' | sort > "$tmp/nodes"
printf '%s\n' "SPOTRUN_0.1 1" "SPOTRUN_EXPERIMENTAL_0 1" "libspotrun.so.0 1" > "$tmp/want-nodes"
if cmp -s "$tmp/want-nodes" "$tmp/nodes"; then
	echo "ok 3 - its version nodes: SPOTRUN_0.1 and SPOTRUN_EXPERIMENTAL_0, neither inheriting"
else
	echo "not ok 3 - its version definitions (node and count; - want, + got):"
	diff "$tmp/want-nodes" "$tmp/nodes" | sed 's/^/# /'
fi
n=$(nm -D --defined-only "$so" | grep -c ' sr_')
if [ "$n" = 0 ]; then echo "ok 4 - no sr_ name of the modules inside is exported"
else echo "not ok 4 - $n sr_ names are exported"; fi
# every function the header declares is exported (and so callable), at
# the node of the part that declares it
decls() {
	sed -n 's/^\(spotrun_[A-Za-z_]*\)(.*/\1/p; s/^[a-z].* \**\(spotrun_[A-Za-z_]*\)(.*/\1/p' | sort -u
}
fence='^#if defined(SPOTRUN_EXPERIMENTAL)'
sed "/$fence/,\$d" "$h" | decls > "$tmp/decl-stable"
sed -n "/$fence/,\$p" "$h" | decls > "$tmp/decl-experimental"
if grep -q "$fence" "$h" && cmp -s "$tmp/decl-stable" "$tmp/stable" &&
    cmp -s "$tmp/decl-experimental" "$tmp/experimental"; then
	echo "ok 5 - the header declares the same functions, the experimental ones past its fence"
else
	echo "not ok 5 - the header's functions differ from the exports (- exported, + declared)"
	diff "$tmp/stable" "$tmp/decl-stable" | sed 's/^/# stable: /'
	diff "$tmp/experimental" "$tmp/decl-experimental" | sed 's/^/# experimental: /'
fi
pc="$top_builddir/lib/spotrun.pc"
# the installed one, not spotrun-uninstalled.pc beside it (t11's)
libs=$(PKG_CONFIG_DISABLE_UNINSTALLED=1 PKG_CONFIG_PATH="$top_builddir/lib" \
    pkg-config --libs spotrun 2>&1)
case "$libs" in
*-lspotrun*) echo "ok 6 - pkg-config --libs spotrun says -lspotrun ($libs)" ;;
*) echo "not ok 6 - pkg-config --libs spotrun: $libs (from $pc)" ;;
esac
# The dying family (sr_malloc...) is in the library with common/util.o,
# called by nothing; what calls sr_fatal is that family alone.
objdump -d --no-show-raw-insn "$so" > "$tmp/dis" 2>&1
awk '/^[0-9a-f]+ <.*>:$/ { fn = $2 }
	/(call|jmp).*<(abort|exit|_exit|__assert_fail)@plt>/ ||
	    /(call|jmp).*<sr_(fatal|malloc|calloc|realloc|reallocarray|grow|strdup|strndup|asprintf)>/ {
		print fn, $NF }' "$tmp/dis" | sort -u |
    grep -v '^<sr_\(malloc\|calloc\|realloc\|reallocarray\|grow\|strdup\|strndup\|asprintf\)>: <sr_fatal>$' |
    grep -v '^<sr_fatal>: <abort@plt>$' > "$tmp/dying"
if [ -s "$tmp/dis" ] && grep -q '<spotrun_save>:' "$tmp/dis" && [ ! -s "$tmp/dying" ]; then
	echo "ok 7 - no function of libspotrun.so calls abort, exit, assert, sr_fatal or a dying allocator"
else
	echo "not ok 7 - functions of libspotrun.so that can end the process (caller: callee):"
	sed 's/^/# /' "$tmp/dying"
	grep -q '<spotrun_save>:' "$tmp/dis" || head -3 "$tmp/dis" | sed 's/^/# objdump: /'
fi
