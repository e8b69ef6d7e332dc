"""Build of the onyx extension (onyx._onyx).

libonyx and the onyx command line are built with the repository's CMake
project (Release, position-independent) and linked statically into the
extension, so the installed package does not need libonyx.so. Set
ONYX_BUILD_DIR to an existing CMake build folder (one that has libonyx.a and
libonyx_cli.a, e.g. the repository's build/) to reuse it instead.

The shared libraries libonyx itself links (PCRE2 and the image codecs behind
ImageDecoder) are copied into the wheel (onyx/_libs, found through the
extension's RPATH) unless every Debian 12 system has them, so a wheel built
here installs on another Debian 12 machine with only python3 and
python3-numpy.
"""
import glob
import os
import re
import shutil
import subprocess

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# What libonyx.a and libonyx_cli.a link (CMakeLists.txt, ONYX_CODEC_LIBRARIES + zlib).
LINK_LIBS = ["pcre2-8", "png16", "jpeg", "tiff", "webp", "openjp2", "z", "pthread", "m"]

# Libraries every Debian 12 installation has (glibc and the "required"
# packages apt and dpkg themselves need): not bundled.
BASE_SYSTEM = re.compile(r"^(linux-vdso|ld-linux|libc|libm|libpthread|libdl|librt|libgcc_s|libstdc\+\+|"
                         r"libz|liblzma|libzstd|libpcre2-8|libselinux)\.so")

BUNDLE_DIR = "_libs"


class BuildExt(build_ext):
    def run(self):
        libdir = self._libonyx_dir()
        for ext in self.extensions:
            ext.extra_objects = [os.path.join(libdir, "libonyx_cli.a"), os.path.join(libdir, "libonyx.a")]
            # relink when libonyx changes, not only when the extension's sources do
            ext.depends = ext.extra_objects + [os.path.join(ROOT, "include", "onyx.h"), os.path.join("src", "pyonyx.h")]
        super().run()
        if not self.inplace:
            for ext in self.extensions:
                self._bundle_shared_libs(self.get_ext_fullpath(ext.name))

    def _libonyx_dir(self):
        given = os.environ.get("ONYX_BUILD_DIR")
        if given:
            d = os.path.abspath(given)
            for lib in ("libonyx.a", "libonyx_cli.a"):
                if not os.path.isfile(os.path.join(d, lib)):
                    raise RuntimeError(f"ONYX_BUILD_DIR={given}: {lib} is missing (build it with "
                                       f"`cmake --build {given} --target onyx_static onyx_cli`)")
            return d
        d = os.path.abspath(os.path.join(self.build_temp, "libonyx"))
        os.makedirs(d, exist_ok=True)
        subprocess.check_call(["cmake", "-S", ROOT, "-B", d, "-DCMAKE_BUILD_TYPE=Release",
                               "-DONYX_BUILD_TESTS=OFF"])
        jobs = str(max(1, os.cpu_count() or 1))
        subprocess.check_call(["cmake", "--build", d, "--target", "onyx_static", "onyx_cli", "-j", jobs])
        return d

    def _bundle_shared_libs(self, ext_path):
        """Copy the non-base shared libraries the extension needs next to it."""
        out = subprocess.run(["ldd", ext_path], check=True, capture_output=True, text=True).stdout
        dest = os.path.join(os.path.dirname(ext_path), BUNDLE_DIR)
        for line in out.splitlines():
            m = re.match(r"\s*(\S+) => (/\S+)", line)
            if not m or BASE_SYSTEM.match(m.group(1)):
                continue
            os.makedirs(dest, exist_ok=True)
            target = os.path.join(dest, m.group(1))
            if not (os.path.exists(target) and os.path.samefile(m.group(2), target)):  # a rebuild finds the copies
                shutil.copy2(m.group(2), target)


ext = Extension(
    "onyx._onyx",
    # onyx's ONNX Runtime ABI layer comes along for custom-op libraries (custom_ops.c)
    sources=[os.path.join("src", f) for f in ("module.c", "values.c", "session.c", "runopts.c", "custom_ops.c")]
    + sorted(os.path.relpath(p, HERE) for p in glob.glob(os.path.join(ROOT, "src", "ort_abi", "*.c"))),
    include_dirs=[os.path.join(ROOT, "include"), os.path.join(ROOT, "src"), numpy.get_include()],
    libraries=LINK_LIBS + ["dl"],
    extra_compile_args=["-std=gnu11", "-O2", "-fvisibility=hidden", "-Wno-missing-field-initializers"],
    # DT_RPATH (not RUNPATH) also serves the bundled libraries' own dependencies;
    # symbols of the static archives stay private to the extension.
    extra_link_args=[f"-Wl,--disable-new-dtags,-rpath,$ORIGIN/{BUNDLE_DIR}", "-Wl,--exclude-libs,ALL"],
)

setup(ext_modules=[ext], cmdclass={"build_ext": BuildExt})
