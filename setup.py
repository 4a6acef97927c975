"""Builds the `chunkmeta` package with the project's CMake: the
chunkmeta_python target lays out <build>/python/chunkmeta (extension, the
pure-Python modules, the corpus), which is copied into the wheel as it is."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCE = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = Path(self.build_temp).resolve() / "cmake"
        subprocess.run(["cmake", "-S", str(SOURCE), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                        "-DCHUNKMETA_BUILD_PYTHON=ON", "-DCHUNKMETA_BUILD_TESTS=OFF", "-DCHUNKMETA_BUILD_TOOLS=OFF",
                        "-DCHUNKMETA_BUILD_BENCHMARKS=OFF", "-DCHUNKMETA_BUILD_FUZZERS=OFF",
                        "-DCHUNKMETA_BUILD_EXAMPLES=OFF", f"-DPython_EXECUTABLE={sys.executable}"], check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(build), "--target", "chunkmeta_python", "--parallel", jobs], check=True)
        package = Path(self.get_ext_fullpath(ext.name)).parent
        shutil.copytree(build / "python" / "chunkmeta", package, dirs_exist_ok=True)


setup(packages=[], ext_modules=[Extension("chunkmeta._chunkmeta", sources=[])], cmdclass={"build_ext": CMakeBuild})
