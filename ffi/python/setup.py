"""Builds the replystream shared library with cargo and bundles it into the package.

The library is built from the repository this directory belongs to (`ffi/python` inside a
clone), in release mode, into cargo's target directory (`$CARGO_TARGET_DIR` if set), then
copied next to `replystream/__init__.py`. The wheel is tagged for this platform but for any
Python 3 (the library is loaded with ctypes, not linked against Python).
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
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
    command = [cargo, "build", "--release", "-p", CRATE,
               "--manifest-path", str(ROOT / "Cargo.toml")]
    print("running", " ".join(command), flush=True)
    subprocess.run(command, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    if not target.is_absolute():
        target = ROOT / target
    library = target / "release" / library_file_name()
    if not library.exists():
        raise RuntimeError(f"cargo did not produce {library}")
    return library


def strip_debug_info(library):
    """Drops debug info from the bundled copy (the release profile keeps some for
    profiling), when `strip` is available; the library works the same either way."""
    strip = shutil.which("strip")
    if strip and sys.platform.startswith("linux"):
        subprocess.run([strip, "--strip-debug", str(library)], check=False)


class BuildWithLibrary(build_py):
    """build_py, plus the shared library copied into the package."""

    def run(self):
        super().run()
        library = build_library()
        destination = Path(self.build_lib) / "replystream" / library_file_name()
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(library, destination)
        strip_debug_info(destination)


class PlatformWheel(bdist_wheel):
    """A wheel for this platform and any Python 3: the library is not a Python extension."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(
    version=crate_version(),
    cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel},
)
