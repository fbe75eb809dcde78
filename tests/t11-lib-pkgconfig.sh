#!/bin/sh
# t11-lib-pkgconfig.sh: a program built against the build tree as a user
# builds one, with nothing but what `pkg-config --cflags --libs
# spotrun-uninstalled` says (lib/spotrun-uninstalled.pc), compiles, links
# and runs without LD_LIBRARY_PATH, on the build tree's libspotrun.so; and
# the header's experimental tier is there with SPOTRUN_EXPERIMENTAL
# defined (also on a second include), and absent without it: a program
# calling it does not compile. The compiler and its flags are the build's
# (SR_CC, SR_CFLAGS, SR_LDFLAGS: the sanitizers' too), nothing of spotrun.
: "${top_builddir:?}" "${top_srcdir:?}"
cc=${SR_CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..8"
unset LD_LIBRARY_PATH PKG_CONFIG_DISABLE_UNINSTALLED
LC_ALL=C	# the compiler's messages, read below
export LC_ALL

# (pkg-config ends its line with a space)
pc() {
	PKG_CONFIG_PATH="$top_builddir/lib" pkg-config "$@" 2>&1 | sed 's/ *$//'
}
flags=$(pc --cflags --libs spotrun-uninstalled)
want="-I$top_srcdir/lib -L$top_builddir/.libs -Wl,-rpath,$top_builddir/.libs -lspotrun"
if [ "$flags" = "$want" ]; then
	echo "ok 1 - spotrun-uninstalled: the source tree's header, the build tree's library"
else
	echo "not ok 1 - pkg-config --cflags --libs spotrun-uninstalled: $flags"
	echo "# want: $want"
fi
# pkg-config's own rule: with lib/ on the path, `spotrun` is the uninstalled one
got=$(pc --cflags --libs spotrun)
if [ "$got" = "$want" ]; then
	echo "ok 2 - pkg-config spotrun finds spotrun-uninstalled.pc first"
else
	echo "not ok 2 - pkg-config --cflags --libs spotrun: $got"
fi

# build NAME: compile and link $tmp/NAME.c with the flags above
build() {
	# shellcheck disable=SC2086 # the flags are words
	$cc $SR_CFLAGS -Werror=implicit-function-declaration -o "$tmp/$1" "$tmp/$1.c" \
	    $SR_LDFLAGS $flags > "$tmp/$1.err" 2>&1
}

cat > "$tmp/version.c" <<'EOF'
#include <stdio.h>
#include <libspotrun.h>

int
main(void)
{
	printf("libspotrun %u, header %u\n", spotrun_versionNumber(), SPOTRUN_VERSION_NUMBER);
	return 0;
}
EOF
v=$(sed -n 's/^#define SPOTRUN_VERSION_\(MAJOR\|MINOR\|RELEASE\) \([0-9]*\)$/\2/p' \
    "$top_srcdir/lib/libspotrun.h" | tr '\n' ' ')
set -- $v
n=$(($1 * 10000 + $2 * 100 + $3))
if build version && out=$("$tmp/version" 2>&1) && [ "$out" = "libspotrun $n, header $n" ]; then
	echo "ok 3 - it compiles, links and runs without LD_LIBRARY_PATH: $out"
else
	echo "not ok 3 - the program built with those flags: ${out:-did not build}"
	sed 's/^/# /' "$tmp/version.err"
fi
lib=$(ldd "$tmp/version" 2>/dev/null | awk '$1 ~ /^libspotrun\.so/ { print $3 }')
if [ "$lib" = "$top_builddir/.libs/libspotrun.so.0" ]; then
	echo "ok 4 - it loads the build tree's libspotrun.so (the -rpath)"
else
	echo "not ok 4 - it loads libspotrun from '$lib'"
fi

# The experimental tier: a setter called on no context returns
# SPOTRUN_ERROR_PARAMETER (2); the other names are only taken by address.
body='
#include <stdio.h>

int
main(void)
{
	void *f[] = { (void *)spotrun_save_async, (void *)spotrun_wait,
	    (void *)spotrun_register_device, (void *)spotrun_set_cuda_library };

	printf("%d %d\n", (int)spotrun_set_staging_bytes(NULL, 0), f[0] != NULL && f[3] != NULL);
	return 0;
}'
printf '#define SPOTRUN_EXPERIMENTAL\n#include <libspotrun.h>\n%s\n' "$body" > "$tmp/exp.c"
if build exp && out=$("$tmp/exp" 2>&1) && [ "$out" = "2 1" ]; then
	echo "ok 5 - with SPOTRUN_EXPERIMENTAL: the experimental tier is declared, links and runs"
else
	echo "not ok 5 - with SPOTRUN_EXPERIMENTAL: ${out:-did not build}"
	sed 's/^/# /' "$tmp/exp.err"
fi
printf '#include <libspotrun.h>\n#define SPOTRUN_EXPERIMENTAL\n#include <libspotrun.h>\n%s\n' \
    "$body" > "$tmp/twice.c"
if build twice && out=$("$tmp/twice" 2>&1) && [ "$out" = "2 1" ]; then
	echo "ok 6 - included without it first, then with it: declared too (its own guard)"
else
	echo "not ok 6 - the second include with SPOTRUN_EXPERIMENTAL: ${out:-did not build}"
	sed 's/^/# /' "$tmp/twice.err"
fi
printf '#include <libspotrun.h>\n%s\n' "$body" > "$tmp/stable.c"
if build stable; then
	echo "not ok 7 - without SPOTRUN_EXPERIMENTAL the experimental tier compiled"
elif grep -q "spotrun_set_staging_bytes" "$tmp/stable.err" &&
    grep -Eq "spotrun_save_async.* undeclared|undeclared identifier .spotrun_save_async" "$tmp/stable.err"; then
	echo "ok 7 - without SPOTRUN_EXPERIMENTAL it is not declared: the program does not compile"
else
	echo "not ok 7 - without SPOTRUN_EXPERIMENTAL it failed, but not for the undeclared names:"
	sed 's/^/# /' "$tmp/stable.err"
fi
# the stable part alone is what a program without it sees: the example
# of the header's opening comment, as a program
cat > "$tmp/loop.c" <<'EOF'
#include <stdio.h>
#include <libspotrun.h>

int
main(void)
{
	spotrun_params p;
	spotrun_ctx *ctx;

	spotrun_params_init(&p);
	p.store = NULL;
	p.job = "t11";
	ctx = spotrun_create(&p);
	printf("%s\n", spotrun_getErrorName(spotrun_save(ctx, 1)));
	spotrun_free(ctx);
	return 0;
}
EOF
out=
if build loop && out=$(env -u SPOTRUN_STORE "$tmp/loop" 2>&1) &&
    [ "$out" = "no checkpoint store given" ]; then
	echo "ok 8 - a stable-only program runs: $out"
else
	echo "not ok 8 - the stable-only program: ${out:-did not build}"
	sed 's/^/# /' "$tmp/loop.err"
fi
