"""`cmake --install` of nvfresh's build tree, as a distribution packages it.

- The default install holds what runs: the stripped launcher (and nvfresh-remote where the build has
  it), the preloaded tracer and heap-noise libraries and the CMake module, at most 30 MB together,
  and no debug file.
- The debug info is the install component `debug` (`cmake --install <build> --component debug`), as
  distributions split -dbg packages: bin/.debug/<name>.debug for each executable, holding its DWARF,
  and named with its CRC by the stripped executable's .gnu_debuglink, so gdb finds it.
Runs against the build tree the suite built (NVFRESH_BUILD_DIR); needs binutils (objcopy, readelf).
"""
import struct
import zlib
from pathlib import Path

import harness

NVFRESH = harness.nvfresh_bin()
BUILD_DIR = harness.build_dir()
k_default_install_limit = 30 * 1000 * 1000  # bytes


def cache_value(name):
    """The value of a CMakeCache.txt entry of the build tree, or None."""
    for line in (BUILD_DIR / "CMakeCache.txt").read_text().splitlines():
        if line.startswith(name + ":"):
            return line.split("=", 1)[1]
    return None


def executables():
    """The executables the build installs: the launcher, and the remote cache's helper when built."""
    names = ["nvfresh"]
    if cache_value("NVFRESH_REMOTE_CACHE") == "ON":
        names.append("nvfresh-remote")
    return names


def install(prefix, *component):
    harness.run(["cmake", "--install", str(BUILD_DIR), "--prefix", str(prefix), *component], check=True)
    return sorted(path for path in Path(prefix).rglob("*") if path.is_file())


def section_names(path):
    listing = harness.run(["readelf", "--wide", "--section-headers", str(path)], check=True).stdout.decode()
    return {word for line in listing.splitlines() for word in line.split() if word.startswith(".")}


def debuglink(path, work):
    """(file name, CRC-32) that the .gnu_debuglink section of path names: the name, NUL-padded to a
    multiple of four bytes, then the CRC, little-endian (gdb's "Separate Debug Files")."""
    dumped = work / (path.name + ".gnu_debuglink")
    harness.run(["objcopy", f"--dump-section=.gnu_debuglink={dumped}", str(path), str(work / "scratch")],
                check=True)
    data = dumped.read_bytes()
    name = data[:data.index(b"\0")].decode()
    (crc,) = struct.unpack("<I", data[-4:])
    return name, crc


class Install(harness.unittest.TestCase):
    def setUp(self):
        self.work = harness.make_workdir("nvfresh-install-")
        self.assertEqual(cache_value("NVFRESH_SPLIT_DEBUG_INFO"), "ON",
                         "these tests need the default build (NVFRESH_SPLIT_DEBUG_INFO=ON)")

    def test_default_install_is_the_runtime_without_debug_files(self):
        prefix = self.work / "prefix"
        files = install(prefix)
        names = {path.relative_to(prefix).as_posix() for path in files}
        for name in executables():
            self.assertIn(f"bin/{name}", names)
            self.assertNotIn(".debug_info", section_names(prefix / "bin" / name),
                             f"the installed {name} still holds its DWARF")
        self.assertIn("share/nvfresh/nvfresh.cmake", names)
        self.assertIn("share/nvfresh/nvfreshConfig.cmake", names)
        libraries = {path.name for path in files if path.parent.name == "nvfresh" and path.suffix == ".so"}
        self.assertEqual(libraries, {"libnvfresh_trace.so", "libnvfresh_heap_noise.so"})
        self.assertEqual([path for path in files if path.suffix == ".debug" or ".debug" in path.parts], [],
                         "the debug files belong to the debug component")
        total = sum(path.stat().st_size for path in files)
        sizes = "\n".join(f"{path.stat().st_size:>12} {path.relative_to(prefix)}" for path in files)
        self.assertLessEqual(total, k_default_install_limit,
                             f"the default install is {total / 1e6:.1f} MB, over 30 MB:\n{sizes}")
        version = harness.run([str(prefix / "bin" / "nvfresh"), "--version"], check=True).stdout.decode()
        self.assertIn("nvfresh", version)

    def test_debug_component_installs_each_executables_debug_file(self):
        runtime = self.work / "runtime"
        debug = self.work / "debug"
        install(runtime)
        files = install(debug, "--component", "debug")
        self.assertEqual(sorted(path.relative_to(debug).as_posix() for path in files),
                         sorted(f"bin/.debug/{name}.debug" for name in executables()))
        for name in executables():
            debug_file = debug / "bin" / ".debug" / f"{name}.debug"
            self.assertIn(".debug_info", section_names(debug_file), f"{debug_file} holds no DWARF")
            link_name, link_crc = debuglink(runtime / "bin" / name, self.work)
            self.assertEqual(link_name, f"{name}.debug")
            self.assertEqual(link_crc, zlib.crc32(debug_file.read_bytes()),
                             f"the installed {name}'s .gnu_debuglink does not name this {debug_file}")


if __name__ == "__main__":
    harness.main()
