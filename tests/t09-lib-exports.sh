#!/bin/sh
# t09-lib-exports.sh: libspotrun.so exports libspotrun.h's API and nothing
# else (lib/libspotrun.map): the dynamic symbols it defines, as nm -D lists
# them, are exactly these, each at version SPOTRUN_0.1; its pkg-config
# file names the library and the header's folder; and no function in it
# can end the job's process (abort, exit, assert, sr_fatal, the allocators
# that die on out-of-memory), as objdump's disassembly shows.
: "${top_builddir:?}" "${top_srcdir:?}"
so="$top_builddir/.libs/libspotrun.so"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..6"
cat > "$tmp/want" <<'LIST'
spotrun_checkpoint_requested@@SPOTRUN_0.1
spotrun_create@@SPOTRUN_0.1
spotrun_free@@SPOTRUN_0.1
spotrun_getErrorName@@SPOTRUN_0.1
spotrun_getErrorString@@SPOTRUN_0.1
spotrun_params_init@@SPOTRUN_0.1
spotrun_register@@SPOTRUN_0.1
spotrun_register_device@@SPOTRUN_0.1
spotrun_restore@@SPOTRUN_0.1
spotrun_save@@SPOTRUN_0.1
spotrun_save_async@@SPOTRUN_0.1
spotrun_versionNumber@@SPOTRUN_0.1
spotrun_wait@@SPOTRUN_0.1
LIST
if [ -f "$so" ]; then echo "ok 1 - libspotrun.so is built"; else echo "not ok 1 - no $so"; fi
# T: functions; the version node itself is an A (absolute) symbol
nm -D --defined-only "$so" 2>&1 | awk '$2 != "A" { print $3 }' | sort > "$tmp/got"
if cmp -s "$tmp/want" "$tmp/got"; then
	echo "ok 2 - it defines exactly the 13 functions of the API, at SPOTRUN_0.1"
else
	echo "not ok 2 - its dynamic symbols differ from the API"
	diff "$tmp/want" "$tmp/got" | sed 's/^/# /'
fi
n=$(nm -D --defined-only "$so" | grep -c ' sr_')
if [ "$n" = 0 ]; then echo "ok 3 - no sr_ name of the modules inside is exported"
else echo "not ok 3 - $n sr_ names are exported"; fi
# every API function the header declares is exported (and so callable)
sed -n 's/^\(spotrun_[A-Za-z_]*\)(.*/\1/p; s/^[a-z].* \**\(spotrun_[A-Za-z_]*\)(.*/\1/p' \
    "$top_srcdir/lib/libspotrun.h" | sort -u > "$tmp/decl"
sed 's/@@.*//' "$tmp/want" > "$tmp/want-names"
if cmp -s "$tmp/decl" "$tmp/want-names"; then
	echo "ok 4 - the header declares the same 13 functions"
else
	echo "not ok 4 - the header's functions differ from the exports"
	diff "$tmp/want-names" "$tmp/decl" | sed 's/^/# /'
fi
pc="$top_builddir/lib/spotrun.pc"
libs=$(PKG_CONFIG_PATH="$top_builddir/lib" pkg-config --libs spotrun 2>&1)
case "$libs" in
*-lspotrun*) echo "ok 5 - pkg-config --libs spotrun says -lspotrun ($libs)" ;;
*) echo "not ok 5 - pkg-config --libs spotrun: $libs (from $pc)" ;;
esac
# The dying family (sr_malloc...) is in the library with common/util.o,
# called by nothing; what calls sr_fatal is that family alone.
objdump -d --no-show-raw-insn "$so" > "$tmp/dis" 2>&1
awk '/^[0-9a-f]+ <.*>:$/ { fn = $2 }
	/(call|jmp).*<(abort|exit|_exit|__assert_fail)@plt>/ ||
	    /(call|jmp).*<sr_(fatal|malloc|calloc|realloc|reallocarray|strdup|strndup|asprintf)>/ {
		print fn, $NF }' "$tmp/dis" | sort -u |
    grep -v '^<sr_\(malloc\|calloc\|realloc\|reallocarray\|strdup\|strndup\|asprintf\)>: <sr_fatal>$' |
    grep -v '^<sr_fatal>: <abort@plt>$' > "$tmp/dying"
if [ -s "$tmp/dis" ] && grep -q '<spotrun_save>:' "$tmp/dis" && [ ! -s "$tmp/dying" ]; then
	echo "ok 6 - no function of libspotrun.so calls abort, exit, assert, sr_fatal or a dying allocator"
else
	echo "not ok 6 - functions of libspotrun.so that can end the process (caller: callee):"
	sed 's/^/# /' "$tmp/dying"
	grep -q '<spotrun_save>:' "$tmp/dis" || head -3 "$tmp/dis" | sed 's/^/# objdump: /'
fi
