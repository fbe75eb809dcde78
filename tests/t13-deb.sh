#!/bin/sh
# t13-deb.sh: the Debian package of `make deb` (build-aux/make-deb,
# dist/local.mk): its control fields exactly (Package, Version as
# configure.ac's AC_INIT says, Architecture as dpkg says, Depends naming
# exactly the packages that hold the libraries the ELF files need, each
# found with dpkg -S, none from -dev), its files (the binary, libspotrun,
# the man pages, the unit, /etc/default/spotrun-agent as a conffile, all
# root's), its md5sums, stripped ELF files, and the extracted binary's
# --version. In a tree configured with --prefix=/usr the package is `make
# deb`'s own. In another (the default /usr/local, as build-aux/test-all
# configures) `make deb` must refuse, and so must make-deb on that tree's
# install; the package is then made from the same install moved under /usr
# with the unit's ExecStart set to /usr/bin: a stand-in for a /usr tree,
# which is what the package's checks need, without a second build.
: "${top_builddir:?}" "${top_srcdir:?}"
for tool in dpkg-deb dpkg-shlibdeps objdump readelf ldd; do
	command -v "$tool" >/dev/null 2>&1 || { echo "1..0 # SKIP no $tool (dpkg-dev, binutils)"; exit 0; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t13-deb.XXXXXX") || { echo "Bail out! mktemp"; exit 1; }
trap 'rm -rf "$tmp"' EXIT
unset DEBEMAIL DEBFULLNAME MAKEFLAGS MFLAGS
LC_ALL=C
export LC_ALL
make=${MAKE:-make}
mkdeb="$top_srcdir/build-aux/make-deb"
version=$(sed -n 's/^AC_INIT(\[spotrun\], \[\([^]]*\)\].*/\1/p' "$top_srcdir/configure.ac")
arch=$(dpkg --print-architecture)
prefix=$(sed -n 's/^prefix = //p' "$top_builddir/Makefile")
deb=spotrun_${version}_$arch.deb
echo "1..13"
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); echo "not ok $n - $*"; }
check() { # check DESCRIPTION COMMAND...: ok when COMMAND succeeds
	d=$1; shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}

if [ "$prefix" = /usr ]; then
	if $make -s -C "$top_builddir" deb >"$tmp/make.out" 2>&1 && [ -f "$top_builddir/$deb" ]; then
		ok "make deb made $deb in the build tree"
		cp "$top_builddir/$deb" "$tmp/$deb"
	else
		nok "make deb"; sed 's/^/# /' "$tmp/make.out"
	fi
	$make -s -C "$top_builddir" deb prefix=/usr/local >"$tmp/refuse.out" 2>&1
	rc=$?
	want="make deb: this tree is configured for /usr/local; a package installs under /usr: ./configure --prefix=/usr first"
	if [ $rc -ne 0 ] && grep -qxF "$want" "$tmp/refuse.out"; then
		ok "make deb prefix=/usr/local refuses"
	else
		nok "make deb prefix=/usr/local: exit $rc"; sed 's/^/# /' "$tmp/refuse.out"
	fi
	ok "# SKIP make-deb on an install for another prefix (this tree is for /usr)"
else
	$make -s -C "$top_builddir" deb >"$tmp/make.out" 2>&1
	rc=$?
	want="make deb: this tree is configured for $prefix; a package installs under /usr: ./configure --prefix=/usr first"
	if [ $rc -ne 0 ] && grep -qxF "$want" "$tmp/make.out" && [ ! -e "$top_builddir/$deb" ]; then
		ok "make deb refuses a tree configured for $prefix"
	else
		nok "make deb in a tree for $prefix: exit $rc"; sed 's/^/# /' "$tmp/make.out"
	fi
	# The tree's install, then the same files under /usr.
	$make -s -C "$top_builddir" install DESTDIR="$tmp/inst" >"$tmp/install.out" 2>&1 ||
		{ sed 's/^/# /' "$tmp/install.out"; echo "Bail out! make install DESTDIR=$tmp/inst"; exit 1; }
	unit=$top_builddir/dist/spotrun-agent.service
	"$mkdeb" --unit "$unit" "$tmp/inst" "$version" "$tmp" >"$tmp/refuse1.out" 2>&1; rc1=$?
	mkdir -p "$tmp/usr-inst/usr"
	cp -a "$tmp/inst$prefix/." "$tmp/usr-inst/usr/"
	"$mkdeb" --unit "$unit" "$tmp/usr-inst" "$version" "$tmp" >"$tmp/refuse2.out" 2>&1; rc2=$?
	want1="make-deb: $tmp/inst/usr/bin/spotrun: not there (install a tree configured with --prefix=/usr into $tmp/inst)"
	want2="make-deb: the unit's ExecStart is '$prefix/bin/spotrun agent', not '/usr/bin/spotrun agent' (configure with --prefix=/usr)"
	if [ $rc1 -eq 1 ] && [ "$(cat "$tmp/refuse1.out")" = "$want1" ] &&
	   [ $rc2 -eq 1 ] && [ "$(cat "$tmp/refuse2.out")" = "$want2" ] && [ ! -e "$tmp/$deb" ]; then
		ok "make-deb refuses an install for $prefix, and its unit moved under /usr"
	else
		nok "make-deb on an install for $prefix: exit $rc1, $rc2"
		sed 's/^/# /' "$tmp/refuse1.out" "$tmp/refuse2.out"
	fi
	sed 's|^ExecStart=.*/spotrun agent$|ExecStart=/usr/bin/spotrun agent|' "$unit" >"$tmp/unit"
	rm -rf "$tmp/usr-inst/usr/lib/systemd"
	if out=$("$mkdeb" --unit "$tmp/unit" "$tmp/usr-inst" "$version" "$tmp" 2>"$tmp/mkdeb.err") &&
	   [ "$out" = "$tmp/$deb" ] && [ -f "$tmp/$deb" ]; then
		ok "make-deb made $deb from the install moved under /usr"
	else
		nok "make-deb printed '$out'"; sed 's/^/# /' "$tmp/mkdeb.err"
	fi
fi
[ -f "$tmp/$deb" ] || { echo "Bail out! no package to check"; exit 1; }
p=$tmp/$deb

# Control fields.
field() { dpkg-deb -f "$p" "$1"; }
got="$(field Package)|$(field Version)|$(field Architecture)|$(field Maintainer)"
want="spotrun|$version|$arch|spotrun developers <spotrun@localhost>"
if [ "$got" = "$want" ]; then
	ok "Package, Version ($version, configure.ac's), Architecture ($arch), Maintainer"
else
	nok "control fields: $got"; echo "# want: $want"
fi
if dpkg-deb --info "$p" >"$tmp/info" 2>&1 && grep -q '^ Description: batch job runner' "$tmp/info"; then
	ok "dpkg-deb --info reads it"
else
	nok "dpkg-deb --info"; sed 's/^/# /' "$tmp/info"
fi

# Files: what make install installs, the unit and the defaults, all root's.
dpkg-deb -c "$p" >"$tmp/list" || echo "Bail out! dpkg-deb -c"
missing=
for f in usr/bin/spotrun lib/systemd/system/spotrun-agent.service etc/default/spotrun-agent \
	usr/include/libspotrun.h usr/lib/pkgconfig/spotrun.pc usr/share/spotrun/prices.ini; do
	grep -q " \./$f\$" "$tmp/list" || missing="$missing $f"
done
grep -q ' \./usr/lib/libspotrun\.so\.[0-9]' "$tmp/list" || missing="$missing usr/lib/libspotrun.so.N"
for m in "$top_srcdir"/doc/*.[1-8]; do
	m=${m##*/}
	grep -q " \./usr/share/man/man${m##*.}/$m\.gz\$" "$tmp/list" || missing="$missing $m.gz"
done
grep ' \./.*\.la$' "$tmp/list" >"$tmp/la" && missing="$missing (and a .la: $(cat "$tmp/la"))"
if [ -z "$missing" ]; then
	ok "files: the binary, libspotrun, its header and .pc, the man pages, the unit, the defaults, no .la"
else
	nok "files missing:$missing"; sed 's/^/# /' "$tmp/list"
fi
if awk '$2 != "root/root" { bad = 1 } END { exit bad }' "$tmp/list"; then
	ok "every file is root's"
else
	nok "files not root/root"; awk '$2 != "root/root"' "$tmp/list" | sed 's/^/# /'
fi

# The control archive: conffiles, md5sums of every other file.
dpkg-deb -x "$p" "$tmp/x" && dpkg-deb -e "$p" "$tmp/ctl" || echo "Bail out! dpkg-deb -x/-e"
if [ "$(cat "$tmp/ctl/conffiles")" = /etc/default/spotrun-agent ] &&
   (cd "$tmp/x" && md5sum --quiet -c "$tmp/ctl/md5sums") >"$tmp/md5.out" 2>&1 &&
   [ "$(wc -l <"$tmp/ctl/md5sums")" -eq "$(cd "$tmp/x" && find . -type f ! -path './etc/*' | wc -l)" ]; then
	ok "conffiles is /etc/default/spotrun-agent, md5sums covers and matches every other file"
else
	nok "conffiles or md5sums"; sed 's/^/# /' "$tmp/md5.out" "$tmp/ctl/conffiles"
fi

# ELF files: stripped; Depends = the packages of the libraries they need.
elves=$(cd "$tmp/x" && find . -type f \( -path ./usr/bin/spotrun -o -name 'libspotrun.so.*' \) | sort)
unstripped=
for f in $elves; do
	readelf -S "$tmp/x/$f" | grep -q -E ' \.(symtab|debug_info) ' && unstripped="$unstripped $f"
done
check "spotrun and libspotrun are stripped${unstripped:+ (not:$unstripped)}" [ -z "$unstripped" ]
# owner LIB PATH: the package that holds PATH, as dpkg -S says, trying the
# path as given and as /usr-merged (Debian 12 lists some under /lib, some
# under /usr/lib)
owner() {
	for q in "$1" "$(readlink -f "$1")"; do
		for c in "$q" "/usr${q#/usr}" "${q#/usr}"; do
			o=$(dpkg -S "$c" 2>/dev/null | sed -n '1s/:.*//p')
			[ -n "$o" ] && { echo "$o"; return 0; }
		done
	done
	echo "NONE($1)"
}
ours=$(cd "$tmp/x" && find . -name '*.so*' | sed 's|.*/||' | tr '\n' ' ')
for f in $elves; do
	for need in $(objdump -p "$tmp/x/$f" | awk '$1 == "NEEDED" { print $2 }'); do
		case " $ours" in *" $need "*) continue;; esac
		path=$(LD_LIBRARY_PATH="$tmp/x/usr/lib" ldd "$tmp/x/$f" | awk -v n="$need" '$1 == n { print $3 }')
		owner "$path"
	done
done | sort -u >"$tmp/want-deps"
field Depends | tr ',' '\n' | sed 's/^ *//; s/[ (:].*//' | sort -u >"$tmp/got-deps"
if cmp -s "$tmp/want-deps" "$tmp/got-deps" && ! grep -q -- '-dev$' "$tmp/got-deps"; then
	ok "Depends names exactly the packages of the libraries needed: $(tr '\n' ' ' <"$tmp/got-deps")"
else
	nok "Depends: $(field Depends)"; echo "# want: $(tr '\n' ' ' <"$tmp/want-deps")"
fi
# glibc: the newest GLIBC_ symbol version the ELF files need, Depends' libc6 bound
glibc=$(for f in $elves; do objdump -T "$tmp/x/$f"; done |
	sed -n 's/.*GLIBC_\([0-9][0-9.]*\).*/\1/p' | sort -t. -k1,1n -k2,2n -k3,3n | tail -n 1)
echo "# the newest glibc symbol needed: GLIBC_$glibc"
if field Depends | tr ',' '\n' | grep -qx " *libc6 (>= $glibc)"; then
	ok "Depends has libc6 (>= $glibc), the newest GLIBC_ version the binaries need"
else
	nok "libc6 in Depends: $(field Depends) (newest GLIBC_ needed: $glibc)"
fi

# Extracted, it runs: its --version, libspotrun from the package if it links it.
got=$(LD_LIBRARY_PATH="$tmp/x/usr/lib" "$tmp/x/usr/bin/spotrun" --version 2>&1)
check "the extracted /usr/bin/spotrun --version says 'spotrun $version'" [ "$got" = "spotrun $version" ]
got=$(sed -n 's/^ExecStart=//p' "$tmp/x/lib/systemd/system/spotrun-agent.service")
check "the unit runs /usr/bin/spotrun agent" [ "$got" = "/usr/bin/spotrun agent" ]
[ "$n" -eq 13 ] || echo "# ran $n checks, planned 13"
