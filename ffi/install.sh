#!/usr/bin/env sh
# Builds and installs the replystream C library: static and shared libraries (with a
# versioned soname), the header with its version macros, and a pkg-config file whose
# Libs.private (also its variable native_static_libs) are the link flags rustc reports for
# the static library (--print native-static-libs). The same layout as `cargo cinstall` (cargo-c) with this
# crate's [package.metadata.capi], without needing cargo-c.
#
# The libraries are built with the `dist` profile (release without debug info, the shared
# library stripped). On ELF systems the .pc file's Libs carry an rpath to LIBDIR, so a
# program linked with `pkg-config --libs replystream` finds the shared library where it was
# installed, without LD_LIBRARY_PATH; --no-rpath leaves it out (a system libdir the dynamic
# loader searches anyway, or a distribution's package).
#
# Usage: ffi/install.sh [--prefix DIR] [--libdir DIR] [--includedir DIR] [--destdir DIR]
#                       [--no-rpath]
#   --prefix      where to install (default /usr/local)
#   --libdir      libraries and pkgconfig/ (default PREFIX/lib)
#   --includedir  the header (default PREFIX/include)
#   --destdir     staging root prepended to every path (for packaging); the .pc file still
#                 names the final paths
#   --no-rpath    no -Wl,-rpath in the .pc file's Libs
# Environment: CARGO (default cargo), CARGO_TARGET_DIR (default <repo>/target).
set -eu

prefix=/usr/local
libdir=
includedir=
destdir=
rpath=yes
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix=$2; shift 2 ;;
        --libdir) libdir=$2; shift 2 ;;
        --includedir) includedir=$2; shift 2 ;;
        --destdir) destdir=$2; shift 2 ;;
        --no-rpath) rpath=no; shift ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        *) echo "install.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
libdir=${libdir:-$prefix/lib}
includedir=${includedir:-$prefix/include}

root=$(cd "$(dirname "$0")/.." && pwd)
cargo=${CARGO:-cargo}
target=${CARGO_TARGET_DIR:-$root/target}
case "$target" in /*) ;; *) target=$root/$target ;; esac

version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/ffi/Cargo.toml" | head -n 1)
major=${version%%.*}
rest=${version#*.}
minor=${rest%%.*}
# The soname changes when the ABI may break: on the major version, or on the minor version
# while the major version is 0 (semver).
if [ "$major" = 0 ]; then abi=$major.$minor; else abi=$major; fi

case "$(uname -s)" in
    Darwin)
        shared=libreplystream.$version.dylib
        soname=libreplystream.$abi.dylib
        links="libreplystream.$abi.dylib libreplystream.dylib"
        soname_flag="-Wl,-install_name,$libdir/$soname"
        built=libreplystream_ffi.dylib
        # The install name is the library's full path: no rpath needed.
        rpath_flag=
        ;;
    *)
        shared=libreplystream.so.$version
        soname=libreplystream.so.$abi
        links="libreplystream.so.$abi libreplystream.so"
        soname_flag="-Wl,-soname,$soname"
        built=libreplystream_ffi.so
        rpath_flag=" -Wl,-rpath,\${libdir}"
        ;;
esac

# Dependencies first, then the library crate alone, cleaned so rustc runs (and prints the
# static library's native dependencies) even when nothing changed.
"$cargo" build --profile dist -p replystream-ffi --manifest-path "$root/Cargo.toml"
"$cargo" clean --profile dist -p replystream-ffi --manifest-path "$root/Cargo.toml" 2>/dev/null
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! "$cargo" rustc --profile dist -p replystream-ffi --lib --manifest-path "$root/Cargo.toml" \
    -- --print native-static-libs -C "link-arg=$soname_flag" >"$log" 2>&1; then
    cat "$log" >&2
    exit 1
fi
native=$(sed -n 's/^note: native-static-libs: //p' "$log" | tail -n 1)
if [ -z "$native" ]; then
    echo "install.sh: rustc did not report native-static-libs" >&2
    cat "$log" >&2
    exit 1
fi

if [ "$rpath" = no ]; then rpath_flag=; fi

out=$target/dist
install -d "$destdir$libdir/pkgconfig" "$destdir$includedir"
install -m 644 "$root/ffi/include/replystream.h" "$destdir$includedir/replystream.h"
install -m 644 "$out/libreplystream_ffi.a" "$destdir$libdir/libreplystream.a"
# The profile strips the shared library; an archive is not linked, so the debug info of the
# standard library's objects in it is dropped here (15 MB instead of 24), where strip exists.
if command -v strip >/dev/null 2>&1; then
    case "$(uname -s)" in
        Darwin) strip -S "$destdir$libdir/libreplystream.a" 2>/dev/null || true ;;
        *) strip --strip-debug "$destdir$libdir/libreplystream.a" ;;
    esac
fi
install -m 755 "$out/$built" "$destdir$libdir/$shared"
for link in $links; do
    ln -sf "$shared" "$destdir$libdir/$link"
done
cat >"$destdir$libdir/pkgconfig/replystream.pc" <<EOF
prefix=$prefix
libdir=$libdir
includedir=$includedir
native_static_libs=$native

Name: replystream
Description: Turns a streaming LLM reply into well-formed, well-paced chat messages
Version: $version
Libs: -L\${libdir}$rpath_flag -lreplystream
Libs.private: \${native_static_libs}
Cflags: -I\${includedir}
EOF

echo "installed replystream $version into $destdir$prefix:"
echo "  $includedir/replystream.h"
echo "  $libdir/libreplystream.a, $libdir/$shared (soname $soname)"
echo "  $libdir/pkgconfig/replystream.pc (static link flags: $native)"
