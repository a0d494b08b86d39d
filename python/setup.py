"""Builds trainwatch._native with the project's own CMake build, so the extension has one
set of sources and flags whether it comes from scripts/build.sh or from pip.

    pip install --no-index --no-build-isolation ./python

The extension links the reporter and the agent statically (python/CMakeLists.txt), so the
installed package needs neither the build folder, LD_LIBRARY_PATH nor PYTHONPATH; it needs
the same run-time libraries as the trainwatch binary (Boost.JSON/URL, OpenSSL).

Where CMake builds:
- by default, build-release/ at the top of the source tree, the folder and flags of
  scripts/demo (scripts/build_release.sh, cmake/release.flags): after the demo, pip builds
  nothing again; it is kept, so installing again only rebuilds what changed;
- TRAINWATCH_CMAKE_BUILD_DIR=<folder>: an already configured build folder (build/ of
  scripts/build.sh): pip then builds the one target there and installs that.
ccache is used as scripts/build.sh uses it (CCACHE_BASEDIR at the top of the tree).
"""
import os
import re
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGET = "trainwatch_python"


def project_version():
    """The version CMake's project() declares, so the package and the binary agree."""
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        match = re.search(r"project\(trainwatch VERSION ([0-9.]+)", f.read())
    if not match:
        sys.exit("setup.py: no project(trainwatch VERSION ...) in " + os.path.join(ROOT, "CMakeLists.txt"))
    return match.group(1)


class BuildWithCMake(build_ext):
    """Builds the trainwatch_python target and copies the module where setuptools wants it."""

    def build_extension(self, ext):
        env = dict(os.environ)
        env.setdefault("CCACHE_BASEDIR", ROOT)
        env.setdefault("CCACHE_NOHASHDIR", "true")
        given = os.environ.get("TRAINWATCH_CMAKE_BUILD_DIR")
        if given:
            build_dir = os.path.abspath(given)
            if not os.path.isfile(os.path.join(build_dir, "CMakeCache.txt")):
                sys.exit(f"setup.py: TRAINWATCH_CMAKE_BUILD_DIR={given} is not a configured CMake build folder")
        else:
            build_dir = os.path.join(ROOT, "build-release")
            with open(os.path.join(ROOT, "cmake", "release.flags"), encoding="utf-8") as f:
                flags = f.read().split()
            configure = ["cmake", "-S", ROOT, "-B", build_dir, *flags, f"-DTRAINWATCH_PYTHON={sys.executable}"]
            if shutil.which("ninja") and not os.path.isfile(os.path.join(build_dir, "CMakeCache.txt")):
                configure += ["-G", "Ninja"]
            subprocess.run(configure, check=True, env=env)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", build_dir, "--target", TARGET, "-j", jobs], check=True, env=env)

        # The module CMake made for this interpreter's ABI (EXT_SUFFIX), as python/CMakeLists.txt names it.
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = os.path.join(build_dir, "python", "trainwatch", "_native" + suffix)
        if not os.path.isfile(built):
            sys.exit(f"setup.py: {built} was not built; is {build_dir} configured for this Python "
                     f"({sys.executable}, {suffix})? See TRAINWATCH_PYTHON in python/CMakeLists.txt")
        destination = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        shutil.copyfile(built, destination)


setup(
    version=project_version(),
    ext_modules=[Extension("trainwatch._native", sources=[])],
    cmdclass={"build_ext": BuildWithCMake},
)
