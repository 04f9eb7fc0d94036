"""Builds the replystream shared library with cargo and bundles it into the package.

The library is built from the repository this directory belongs to (`ffi/python` inside a
clone), with the workspace's `dist` profile (release, no debug info, stripped), into cargo's
target directory (`$CARGO_TARGET_DIR` if set), then copied next to `replystream/__init__.py`.

The wheel is for any Python 3 (the library is loaded with ctypes, not linked against
Python) and for this platform. On Linux it is tagged `manylinux_2_N_<arch>`, which a
package index accepts (a plain `linux_<arch>` tag is refused): N is the newest glibc
symbol version the library needs (PEP 600), read from the library itself, so the tag is
true of the build. The library links nothing but libc, libgcc_s and the dynamic loader, all
allowed by every manylinux policy. `auditwheel show` on the wheel reports the same tag.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:  # setuptools >= 70.1 ships bdist_wheel itself
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # older setuptools: the wheel package
    from wheel.bdist_wheel import bdist_wheel

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CRATE = "replystream-ffi"


def library_file_name():
    if sys.platform == "darwin":
        return "libreplystream_ffi.dylib"
    if os.name == "nt":
        return "replystream_ffi.dll"
    return "libreplystream_ffi.so"


def crate_version():
    """The version of the C library crate (one version for the library and the package)."""
    manifest = (ROOT / "ffi" / "Cargo.toml").read_text(encoding="utf-8")
    match = re.search(r'^version\s*=\s*"([^"]+)"', manifest, re.MULTILINE)
    if not match:
        raise RuntimeError("no version in ffi/Cargo.toml")
    return match.group(1)


def build_library():
    """Runs cargo and returns the path of the built shared library."""
    if not (ROOT / "Cargo.toml").exists():
        raise RuntimeError(
            "replystream's Python package is built from a clone of the repository "
            f"(expected the workspace at {ROOT}); install it with `pip install ./ffi/python`"
        )
    cargo = os.environ.get("CARGO", "cargo")
    command = [cargo, "build", "--profile", "dist", "-p", CRATE,
               "--manifest-path", str(ROOT / "Cargo.toml")]
    print("running", " ".join(command), flush=True)
    subprocess.run(command, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    if not target.is_absolute():
        target = ROOT / target
    library = target / "dist" / library_file_name()
    if not library.exists():
        raise RuntimeError(f"cargo did not produce {library}")
    return library


def glibc_needed(library):
    """The newest glibc symbol version `library` needs, as (major, minor), or None when it
    needs none (not a glibc build). The version names it needs are strings `GLIBC_x.y` of
    its dynamic string table."""
    names = re.findall(rb"GLIBC_([0-9]+)\.([0-9]+)", Path(library).read_bytes())
    return max(((int(a), int(b)) for a, b in names), default=None)


class BuildWithLibrary(build_py):
    """build_py, plus the shared library copied into the package."""

    def run(self):
        super().run()
        library = build_library()
        destination = Path(self.build_lib) / "replystream" / library_file_name()
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(library, destination)


class PlatformWheel(bdist_wheel):
    """A wheel for this platform and any Python 3: the library is not a Python extension.
    On Linux, a manylinux tag for the glibc the library needs (see the module docs)."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        _, _, platform = super().get_tag()
        if platform.startswith("linux_"):
            build_lib = self.get_finalized_command("build_py").build_lib
            library = Path(build_lib) / "replystream" / library_file_name()
            needed = glibc_needed(library) if library.exists() else None
            if needed is None:
                raise RuntimeError(
                    f"cannot tag the wheel: {library} is missing or needs no glibc version")
            arch = platform[len("linux_"):]
            platform = f"manylinux_{needed[0]}_{needed[1]}_{arch}"
        return "py3", "none", platform


class BinaryDistribution(Distribution):
    """A distribution that carries a compiled library, so the wheel's files go at its root
    as platform files (platlib), not under `.data/purelib/`, where a shared library makes the
    wheel invalid for auditwheel and for the manylinux rules."""

    def has_ext_modules(self):
        return True


setup(
    version=crate_version(),
    distclass=BinaryDistribution,
    cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel},
)
