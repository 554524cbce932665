# SPDX-License-Identifier: MIT
"""setup.py -- builds the SQLite extension (ext/idem.c) into the package.

The extension is an ordinary SQLite loadable extension, not a Python
module: it is compiled from the C sources of this repository (../../ext,
or the directory named by IDEM_SOURCE, which holds ext/ and include/, or
the ext/ and include/ an sdist carries beside this file) and installed as
idem/idem.so, which idem.loadable_path() names.  Building needs a C
compiler and the headers of libsqlite3-dev and libxxhash-dev; xxHash is
compiled in (XXH_INLINE_ALL), so the built extension needs neither at
run time.

The wheel (pip wheel ./bindings/python) is tagged py3-none-PLATFORM: the
extension is loaded by SQLite, not imported by Python, so one wheel serves
every Python 3 on that platform.  An sdist (python -m build --sdist)
carries the whole of ext/ and include/ (ext/idem.c includes its parts).

Inside a clone of the repository the intermediate files go to the clone's
build/python/<pid>/ (not beside this file; one directory a build, so that
two builds at once do not share one).
"""
import glob
import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.sdist import sdist

try:                                    # setuptools >= 70.1
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:                     # older: the wheel package's
    from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))


def find_root():
    """The directory that holds ext/idem.c and include/idem.h."""
    for root in (os.environ.get("IDEM_SOURCE"), HERE, os.path.join(HERE, "..", "..")):
        if root and os.path.isfile(os.path.join(root, "ext", "idem.c")):
            return os.path.normpath(root)
    sys.exit("sqlite-idem: the C sources were not found: expected ext/idem.c "
             "two directories up (a clone of the idem repository), or set "
             "IDEM_SOURCE to the directory that holds ext/ and include/")


def check_headers(cc_include_dirs):
    """Say which Debian package is missing before the compiler does."""
    missing = []
    for header, package in (("sqlite3ext.h", "libsqlite3-dev"),
                            ("xxhash.h", "libxxhash-dev")):
        if not any(os.path.isfile(os.path.join(d, header)) for d in cc_include_dirs):
            missing.append(package)
    if missing:
        sys.exit("sqlite-idem: the C headers are missing; install them with:\n"
                 "  sudo apt-get install -y " + " ".join(missing))


class BuildLoadable(build_ext):
    """Build the extension as idem/idem.so: SQLite derives the entry point
    sqlite3_idem_init from the file name."""

    def get_ext_filename(self, fullname):
        return os.path.join(*fullname.split(".")) + ".so"

    def get_export_symbols(self, ext):
        return ["sqlite3_idem_init"]

    def build_extension(self, ext):
        dirs = list(ext.include_dirs) + list(self.include_dirs or []) + \
            ["/usr/include", "/usr/local/include"]
        check_headers(dirs)
        # Absolute sources: the object files then go under build_temp
        # (a relative ../../ext would climb out of it).
        given = ext.sources
        ext.sources = [os.path.normpath(os.path.join(HERE, s)) for s in given]
        print("sqlite-idem: compiling the SQLite extension from %s (a few seconds)"
              % ext.sources[0], flush=True)
        try:
            super().build_extension(ext)
        finally:
            ext.sources = given      # later steps want them relative


class PlatformWheel(bdist_wheel):
    """py3-none-PLATFORM: no Python ABI (the extension is not a Python
    module), but a platform's machine code."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        return ("py3", "none") + tuple(super().get_tag()[2:])


class SdistWithSources(sdist):
    """An sdist that carries the C sources: the whole of ext/ (whatever its
    parts are) and include/, beside setup.py, where find_root() looks."""

    def make_release_tree(self, base_dir, files):
        # The manifest names the sources as ../../ext/...: not those.
        files = [f for f in files if not f.startswith(os.pardir)]
        super().make_release_tree(base_dir, files)
        for part in ("ext", "include"):
            for f in sorted(os.listdir(os.path.join(ROOT, part))):
                src = os.path.join(ROOT, part, f)
                if os.path.isfile(src) and f.endswith((".c", ".h")):
                    os.makedirs(os.path.join(base_dir, part), exist_ok=True)
                    self.copy_file(src, os.path.join(base_dir, part, f))


ROOT = find_root()
SOURCE = os.path.relpath(os.path.join(ROOT, "ext", "idem.c"), HERE)
options = {}
if os.path.abspath(ROOT) == os.path.abspath(os.path.join(HERE, "..", "..")):
    # In a clone: build outputs under the clone's build/, as make's are,
    # one directory a build, so that builds at once (.ci/run's background
    # targets each make a venv) do not remove each other's bdist tree.
    out = os.path.relpath(os.path.join(ROOT, "build", "python",
                                       str(os.getpid())), HERE)
    options = {"build": {"build_base": out}, "egg_info": {"egg_base": out}}
    os.makedirs(os.path.join(HERE, out), exist_ok=True)

setup(
    packages=["idem"],
    package_data={"idem": ["py.typed"]},
    ext_modules=[Extension(
        "idem.idem",
        sources=[SOURCE],
        depends=[os.path.relpath(p, HERE) for p in
                 sorted(glob.glob(os.path.join(ROOT, "ext", "*.[ch]")))
                 + [os.path.join(ROOT, "include", "idem.h")]],
        extra_compile_args=["-fvisibility=hidden", "-Wall", "-Wextra"],
    )],
    cmdclass={"build_ext": BuildLoadable, "bdist_wheel": PlatformWheel,
              "sdist": SdistWithSources},
    options=options,
)
