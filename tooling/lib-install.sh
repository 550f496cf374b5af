#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# libualink as a distribution would package it: the uAPI headers from the
# prepared kernel tree's `make headers_install`, then tools/ualink's
# install into a DESTDIR, checked as a packager would (soname, exported
# symbols, manual pages through man --warnings, bash completion), the
# symmetric-heap example built against the installed copy alone (through
# pkg-config, no path into this repository), and uninstall. The example so
# built runs in the guest (IGT tools, symmetric-heap-installed).
#
#   lib-install.sh DIR    (DIR/pkg: the install and the example; the
#                         kernel's objects of headers_install in
#                         $OUT/hdr-build)
#
# Prints one "pass NAME" or "fail NAME REASON" line per check; exits 1 when
# one failed.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

dir=$1/pkg
root=$dir/root
fails=0
pass() { echo "pass $1"; }
fail() { echo "fail $1 ${2:-}"; fails=$((fails + 1)); }
rm -rf "$dir"
mkdir -p "$dir"

# the headers as the kernel installs them for userspace
if make -s -C "$TREE" O="$OUT/hdr-build" headers_install INSTALL_HDR_PATH="$dir/hdr" > "$dir/hdr.log" 2>&1 &&
   grep -q '^#define DRM_IOCTL_AMDGPU_UALINK' "$dir/hdr/include/drm/amdgpu_drm.h"; then
	pass headers-install
else
	fail headers-install "see $dir/hdr.log"
fi

pkg=(make -s -C "$REPO/tools/ualink" UAPI="$OUT/uapi" OUT="$dir/build"
     PREFIX=/usr CC="ccache gcc"
     DESTDIR="$root" UAPI_HEADERS="$dir/hdr/include/drm")
if "${pkg[@]}" install > "$dir/install.log" 2>&1; then
	pass install
else
	fail install "see $dir/install.log"
fi
multiarch=$(gcc -print-multiarch)
libdir=$root/usr/lib/$multiarch

# what a package would hold
(cd "$root" && find . -type f -o -type l | sort) > "$dir/files"
want=$(printf '%s\n' ./usr/bin/ualinkctl ./usr/include/ualink/amdgpu_drm.h \
	./usr/include/ualink/amdgpu_ualink_vpod.h ./usr/include/ualink/libualink.h \
	"./usr/lib/$multiarch/libualink.a" "./usr/lib/$multiarch/libualink.so" \
	"./usr/lib/$multiarch/libualink.so.0" "./usr/lib/$multiarch/libualink.so.0.2.0" \
	"./usr/lib/$multiarch/pkgconfig/libualink.pc" \
	./usr/share/bash-completion/completions/ualinkctl \
	./usr/share/man/man1/ualinkctl.1 ./usr/share/man/man3/libualink.3 | sort)
if [ "$(cat "$dir/files")" = "$want" ]; then
	pass files
else
	fail files "$(diff <(echo "$want") "$dir/files" | tr '\n' ' ')"
fi
# installed headers are the headers_install ones
if cmp -s "$dir/hdr/include/drm/amdgpu_drm.h" "$root/usr/include/ualink/amdgpu_drm.h" &&
   cmp -s "$dir/hdr/include/drm/amdgpu_ualink_vpod.h" \
	"$root/usr/include/ualink/amdgpu_ualink_vpod.h"; then
	pass headers-from-kernel
else
	fail headers-from-kernel
fi

# soname, and the symbols libualink.h declares, nothing else
soname=$(readelf -d "$libdir/libualink.so.0.2.0" 2>/dev/null |
	 sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = libualink.so.0 ] && pass soname || fail soname "soname '$soname'"
syms=$(nm -D --defined-only "$libdir/libualink.so.0.2.0" 2>/dev/null |
       awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort)
decl=$(grep -oE '^[a-z].*\bualink_[a-z_]+\(' "$REPO/tools/ualink/libualink.h" |
       grep -oE 'ualink_[a-z_]+\($' | tr -d '(' | sort)
if [ -n "$syms" ] && [ "$syms" = "$decl" ]; then
	pass exported-symbols
else
	fail exported-symbols "$(diff <(echo "$decl") <(echo "$syms") | tr '\n' ' ')"
fi
# position-independent: no text relocations in the shared object
if readelf -d "$libdir/libualink.so.0.2.0" | grep -q TEXTREL; then
	fail pic "text relocations"
else
	pass pic
fi

# the manuals, as man reads them: no warning
for m in man1/ualinkctl.1 man3/libualink.3; do
	w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$root/usr/share/man/$m" 2>&1 >/dev/null)
	if [ -f "$root/usr/share/man/$m" ] && [ -z "$w" ]; then
		pass "man:$(basename "$m")"
	else
		fail "man:$(basename "$m")" "$w"
	fi
done

# bash completion: the commands, then the render nodes sysfs names
got=$(bash -c '. "$1"; COMP_WORDS=(ualinkctl pr); COMP_CWORD=1; _ualinkctl; echo "${COMPREPLY[*]}"' \
	_ "$root/usr/share/bash-completion/completions/ualinkctl" 2>&1)
[ "$got" = probe ] && pass bash-completion || fail bash-completion "got '$got'"

# the example, against an installed copy only, through pkg-config: one
# installed at its final prefix (a DESTDIR's .pc names where the package
# will be, not where it is)
prefix=$dir/prefix
"${pkg[@]}" OUT="$dir/build-prefix" DESTDIR= PREFIX="$prefix" install \
	> "$dir/install-prefix.log" 2>&1
plib=$prefix/lib/$multiarch
if cflags=$(PKG_CONFIG_PATH=$plib/pkgconfig pkg-config --cflags libualink) &&
   libs=$(PKG_CONFIG_PATH=$plib/pkgconfig pkg-config --libs libualink) &&
   [[ "$cflags $libs" != *"$REPO"* ]] &&
   gcc -O2 -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE $cflags \
	-o "$dir/ualink_symheap" "$REPO/tools/ualink/ualink_symheap.c" $libs \
	> "$dir/example.log" 2>&1 &&
   readelf -d "$dir/ualink_symheap" | grep -q 'NEEDED.*\[libualink.so.0\]'; then
	pass example-builds-against-installed
else
	fail example-builds-against-installed "see $dir/example.log"
fi
# the guest runs it with the installed library (IGT tools)
echo "$plib" > "$dir/libdir"

# uninstall leaves nothing behind
"${pkg[@]}" uninstall > "$dir/uninstall.log" 2>&1
left=$(cd "$root" && find . -type f -o -type l)
[ -z "$left" ] && pass uninstall || fail uninstall "left: $(echo "$left" | tr '\n' ' ')"

[ "$fails" -eq 0 ]
