"""Content decides: nvfresh skips nvcc only when no input changed in content (real nvcc).

A wrong skip is worse than a slow build, so every way a skip could be wrong is tried here: each
kind of input changed in content with its mtime kept (header, forced include, options file,
toolchain file, env flag), each kind of probe (shadowing header, __has_include), the object
modified or deleted, a record that is corrupt, truncated, of an older format or missing, a clock
that jumps, a compile whose output went to a terminal (captured through a pseudo-terminal, replayed
only to a terminal), and an input that changes during the check.
Where nvfresh must compile, the object is checked to really reflect the change (a marker string).

Invocations are direct `nvfresh nvcc ... -MD -MT obj -MF dep` runs like CMake's, outputs piped.
The last cases drive CMake (Ninja and Unix Makefiles) with nvfresh injected through
CMAKE_PROJECT_INCLUDE: touching every header, and a git branch switch and back, run no nvcc.
"""
import json
import os
import pty
import random
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import cmake_detection
import harness

# These tests judge the skip and the record (compiled vs skipped); the object cache would serve
# some of these compiles (correctly) and has its own tests (test_cache.py).
os.environ["NVFRESH_CACHE"] = "0"

NVCC = harness.require_nvcc()
NVFRESH = harness.nvfresh_bin()
ARCH = "-arch=sm_80"
NVCC_RUN_EVENTS = ("compiled", "raced", "failed", "not-recorded")
DAY_NS = 86_400 * 1_000_000_000

# The TU every case starts from. Markers end up as host strings in the object, so that a test can
# see which content the object was built from. Each feature is off unless its macro/file is there.
SOURCE = r"""
#include "common.h"
#include "cfg.h"
#if __has_include("optional.h")
#include "optional.h"
#endif
#ifndef OPTIONAL_MARK
#define OPTIONAL_MARK "OPTIONAL_none"
#endif
#ifndef FORCED_MARK
#define FORCED_MARK "FORCED_none"
#endif
#define NVF_STR_(x) #x
#define NVF_STR(x) NVF_STR_(x)
#ifndef OPTFLAG
#define OPTFLAG none
#endif
#ifndef ENVFLAG
#define ENVFLAG none
#endif
#ifndef CCBINFLAG
#define CCBINFLAG none
#endif
__global__ void kernel(int* p) { *p = COMMON_VALUE; }
extern "C" const char* mark(int i)
{
  static const char* const marks[] = {
    COMMON_MARK, CFG_MARK, OPTIONAL_MARK, FORCED_MARK,
    "OPT_" NVF_STR(OPTFLAG), "ENV_" NVF_STR(ENVFLAG), "CCBIN_" NVF_STR(CCBINFLAG),
  };
  return marks[i];
}
"""
WARNING_LINE = "__global__ void warns(int* p) { int unused_variable = 3; *p = 2; }\n"


def header(name, mark, value=1):
    return f"#pragma once\n#define {name}_MARK \"{name}_{mark}\"\n#define {name}_VALUE {value}\n"


def events(directory):
    """The compile events of a record root (events.log: time, kind, cause, duration, object,
    detail), as (kind, object, detail) tuples, oldest first; passthroughs left out."""
    log = Path(directory) / ".nvfresh" / "events.log"
    if not log.exists():
        return []
    out = []
    for line in log.read_bytes().decode(errors="replace").splitlines():
        fields = line.split("\t")
        if len(fields) == 6 and fields[1] != "passthrough":
            out.append((fields[1], fields[4], fields[5]))
    return out


def stats_json(directory):
    result = harness.run([NVFRESH, "stats", "-C", str(directory), "--json"], check=True)
    return json.loads(result.stdout)


def stat_count(stats, kind):
    return stats["kinds"].get(kind, {}).get("count", 0)


class Tu:
    """One translation unit in a fresh directory, compiled the way CMake compiles it."""

    def __init__(self, warning=False):
        self.dir = harness.make_workdir("nvfresh-skip-")
        (self.dir / ".nvfresh").mkdir()  # the record root: this directory, whatever is above it
        harness.write(self.dir / "src.cu", SOURCE + (WARNING_LINE if warning else ""))
        harness.write(self.dir / "inc" / "common.h", header("COMMON", "one"))
        harness.write(self.dir / "inc2" / "cfg.h", header("CFG", "inc2"))
        (self.dir / "inc1").mkdir()
        self.extra = []
        self.env = {}

    @property
    def obj(self):
        return self.dir / "obj.o"

    @property
    def dep(self):
        return self.dir / "obj.o.d"

    def args(self):
        return [ARCH, "-Iinc", "-Iinc1", "-Iinc2"] + self.extra + [
            "-MD", "-MT", "obj.o", "-MF", "obj.o.d", "-x", "cu", "-c", "src.cu", "-o", "obj.o"]

    def run(self, env=None):
        """Runs nvfresh once, right after the test wrote its files (no pause: a file saved a
        moment before the compile must not count as changed during it); returns (result, the
        events it appended)."""
        before = len(events(self.dir))
        merged = dict(self.env)
        merged.update(env or {})
        result = harness.run([NVFRESH, NVCC] + self.args(), cwd=self.dir, env=merged)
        new = events(self.dir)[before:]
        return result, new

    def plain(self, env=None):
        merged = dict(self.env)
        merged.update(env or {})
        return harness.run([NVCC] + self.args(), cwd=self.dir, env=merged)

    def record_file(self):
        records = list((self.dir / ".nvfresh" / "records").glob("*.rec"))
        assert len(records) == 1, records
        return records[0]


class SkipCase(harness.unittest.TestCase):
    def setUp(self):
        self.tu = Tu()

    def nvfresh(self, env=None):
        result, new = self.tu.run(env)
        self.assertEqual(result.returncode, 0, result.stderr.decode(errors="replace"))
        self.assertEqual(len(new), 1, f"one event per nvfresh run: {new}")
        return result, new[0]

    def assert_compiled(self, env=None, marker=None, gone=None):
        result, (event, _, reason) = self.nvfresh(env)
        self.assertEqual(event, "compiled", f"nvcc must run here; nvfresh said {event}: {reason}")
        data = self.tu.obj.read_bytes()
        if marker is not None:
            self.assertTrue(marker.encode() in data, f"the object does not show {marker}")
        if gone is not None:
            self.assertFalse(gone.encode() in data, f"the object still shows {gone}")
        return result

    def assert_skipped(self, env=None):
        result, (event, _, reason) = self.nvfresh(env)
        self.assertEqual(event, "skipped", f"expected a skip; nvfresh said {event}: {reason}")
        return result

    def change_keep_mtime(self, path, old, new):
        """Replaces old with new (same length) in path and puts the old mtime back (touch -r)."""
        self.assertEqual(len(old), len(new))
        path = Path(path)
        st = os.stat(path)
        text = path.read_text()
        self.assertIn(old, text)
        path.write_text(text.replace(old, new))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        self.assertEqual(os.stat(path).st_mtime_ns, st.st_mtime_ns)
        self.assertEqual(os.stat(path).st_size, st.st_size)


class TouchedButUnchanged(SkipCase):
    def setUp(self):
        self.tu = Tu(warning=True)

    def test_touched_header_is_skipped_with_identical_object_depfile_and_output(self):
        plain = self.tu.plain()
        self.tu.obj.unlink()
        self.tu.dep.unlink()
        first, (event, _, _) = self.nvfresh()
        self.assertEqual(event, "compiled")
        self.assertIn(b"unused_variable", first.stdout + first.stderr, "the TU must warn")
        self.assertEqual((first.stdout, first.stderr), (plain.stdout, plain.stderr))
        obj = self.tu.obj.read_bytes()
        dep = self.tu.dep.read_bytes()
        self.tu.dep.unlink()  # ninja reads the depfile and deletes it
        harness.bump_mtime(self.tu.dir / "inc" / "common.h", 5)
        second = self.assert_skipped()
        self.assertEqual(self.tu.obj.read_bytes(), obj, "a skip must not rewrite the object")
        self.assertEqual(self.tu.dep.read_bytes(), dep, "the depfile must be re-created as it was")
        self.assertEqual(second.stdout, first.stdout, "stdout replayed byte for byte")
        self.assertEqual(second.stderr, first.stderr, "stderr replayed byte for byte")
        self.assertGreaterEqual(os.stat(self.tu.obj).st_mtime_ns,
                                os.stat(self.tu.dir / "inc" / "common.h").st_mtime_ns - 6 * 10**9)
        stats = stats_json(self.tu.dir)
        self.assertEqual(stat_count(stats, "compiled"), 1)
        self.assertEqual(stat_count(stats, "skipped"), 1)

    def test_untouched_rerun_is_skipped(self):
        self.nvfresh()
        self.assert_skipped()


class ContentChangedMtimeKept(SkipCase):
    """Each kind of input changed in content, its mtime put back: nvcc must run."""

    def test_header(self):
        self.assert_compiled(marker="COMMON_one")
        self.change_keep_mtime(self.tu.dir / "inc" / "common.h", "COMMON_one", "COMMON_two")
        self.assert_compiled(marker="COMMON_two", gone="COMMON_one")

    def test_forced_include(self):
        harness.write(self.tu.dir / "forced.h", '#define FORCED_MARK "FORCED_one"\n')
        self.tu.extra = ["-include", "forced.h"]
        self.assert_compiled(marker="FORCED_one")
        self.change_keep_mtime(self.tu.dir / "forced.h", "FORCED_one", "FORCED_two")
        self.assert_compiled(marker="FORCED_two", gone="FORCED_one")

    def test_options_file(self):
        harness.write(self.tu.dir / "opts.rsp", "-DOPTFLAG=one\n")
        self.tu.extra = ["--options-file", "opts.rsp"]
        self.assert_compiled(marker="OPT_one")
        self.change_keep_mtime(self.tu.dir / "opts.rsp", "OPTFLAG=one", "OPTFLAG=two")
        self.assert_compiled(marker="OPT_two", gone="OPT_one")

    def test_toolchain_file_host_compiler_wrapper(self):
        real = shutil.which("g++")
        self.assertIsNotNone(real, "the test needs g++")
        wrapper = harness.write(self.tu.dir / "hostcc" / "g++",
                                f'#!/bin/sh\nexec {real} -DCCBINFLAG=one "$@"\n')
        wrapper.chmod(0o755)
        self.tu.extra = ["-ccbin", str(wrapper)]
        self.assert_compiled(marker="CCBIN_one")
        self.assert_skipped()
        self.change_keep_mtime(wrapper, "CCBINFLAG=one", "CCBINFLAG=two")
        self.assert_compiled(marker="CCBIN_two", gone="CCBIN_one")

    def test_env_append_flags(self):
        self.assert_compiled(env={"NVCC_APPEND_FLAGS": "-DENVFLAG=one"}, marker="ENV_one")
        self.assert_skipped(env={"NVCC_APPEND_FLAGS": "-DENVFLAG=one"})
        self.assert_compiled(env={"NVCC_APPEND_FLAGS": "-DENVFLAG=two"}, marker="ENV_two",
                             gone="ENV_one")
        self.assert_compiled(marker="ENV_none", gone="ENV_two")  # unset again

    def test_env_prepend_flags(self):
        self.assert_compiled(env={"NVCC_PREPEND_FLAGS": "-DENVFLAG=one"}, marker="ENV_one")
        self.assert_compiled(env={"NVCC_PREPEND_FLAGS": "-DENVFLAG=two"}, marker="ENV_two",
                             gone="ENV_one")

    def write_host_compiler_wrappers(self, directory, flag):
        for name in ("gcc", "g++"):  # nvcc looks for gcc on PATH
            wrapper = harness.write(directory / name,
                                    f'#!/bin/sh\nexec {shutil.which(name)} -DCCBINFLAG={flag} "$@"\n')
            wrapper.chmod(0o755)

    def test_host_compiler_found_on_a_different_path(self):
        # nvcc runs the gcc it finds on PATH: a new directory in front can hold another gcc.
        self.assert_compiled(marker="CCBIN_none")
        self.write_host_compiler_wrappers(self.tu.dir / "pathcc", "path")
        path = f"{self.tu.dir / 'pathcc'}:{os.environ['PATH']}"
        self.assert_compiled(env={"PATH": path}, marker="CCBIN_path", gone="CCBIN_none")
        self.assert_skipped(env={"PATH": path})
        check = harness.run([NVFRESH, "check", "-C", str(self.tu.dir)])  # check's PATH: gcc elsewhere
        self.assertEqual(check.returncode, 1, check.stdout.decode())
        self.assertIn(f"gcc on PATH is now {shutil.which('gcc')}", check.stdout.decode())

    def test_path_gains_a_directory_without_a_compiler(self):
        # Activating a Python venv or conda prepends a directory; gcc and as resolve as before.
        self.assert_compiled(marker="CCBIN_none")
        venv = self.tu.dir / "venv" / "bin"
        python = harness.write(venv / "python3", "#!/bin/sh\n")
        python.chmod(0o755)
        path = f"{venv}:{os.environ['PATH']}:/opt/nvfresh-test/missing/bin"
        self.assert_skipped(env={"PATH": path})
        check = harness.run([NVFRESH, "check", "-C", str(self.tu.dir)], env={"PATH": path})
        self.assertEqual(check.returncode, 0, check.stdout.decode())


class Probes(SkipCase):
    def test_new_header_shadows_one_in_a_later_include_dir(self):
        self.assert_compiled(marker="CFG_inc2")
        self.assert_skipped()
        harness.write(self.tu.dir / "inc1" / "cfg.h", header("CFG", "inc1"))
        self.assert_compiled(marker="CFG_inc1", gone="CFG_inc2")

    def test_new_host_compiler_in_a_path_directory_searched_before(self):
        (self.tu.dir / "pathcc").mkdir()
        path = f"{self.tu.dir / 'pathcc'}:{os.environ['PATH']}"
        self.tu.env = {"PATH": path}
        self.assert_compiled(marker="CCBIN_none")
        self.assert_skipped()
        ContentChangedMtimeKept.write_host_compiler_wrappers(self, self.tu.dir / "pathcc", "probe")
        self.assert_compiled(marker="CCBIN_probe", gone="CCBIN_none")

    def test_include_directory_that_did_not_exist(self):
        # gcc drops a missing -I directory at startup and never looks for files in it.
        (self.tu.dir / "inc1").rmdir()
        self.assert_compiled(marker="CFG_inc2")
        self.assert_skipped()
        harness.write(self.tu.dir / "inc1" / "cfg.h", header("CFG", "inc1"))
        self.assert_compiled(marker="CFG_inc1", gone="CFG_inc2")

    def test_has_include_turns_true(self):
        self.assert_compiled(marker="OPTIONAL_none")
        self.assert_skipped()
        harness.write(self.tu.dir / "inc2" / "optional.h", '#define OPTIONAL_MARK "OPTIONAL_here"\n')
        self.assert_compiled(marker="OPTIONAL_here", gone="OPTIONAL_none")


class ProbesProvenByDirectories(SkipCase):
    """The same probes with include directories older than the compile's second, so that the
    record stamps them and a skip checks each directory once instead of each probe (issue 12).
    Every case first shows that the directory did vouch (a probe_dir line), then changes it."""

    def setUp(self):
        self.tu = Tu()
        # A directory changed in the compile's second proves nothing: start in the next second.
        time.sleep(1.05 - time.time() % 1.0)

    def stamped_dirs(self):
        text = harness.read_record_text(self.tu.record_file())
        return {line.split("\t")[-1] for line in text.splitlines() if line.startswith("probe_dir\t")}

    def compile_with_stamps(self, marker, *dirs):
        self.assert_compiled(marker=marker)
        stamped = self.stamped_dirs()
        for d in dirs:
            # The trace names real paths; the test works in a symlinked directory.
            self.assertIn(os.path.realpath(self.tu.dir / d), stamped, f"{d} should vouch for its probes")
        self.assert_skipped()

    def test_new_header_shadows_one_in_a_later_include_dir(self):
        self.compile_with_stamps("CFG_inc2", "inc1")
        harness.write(self.tu.dir / "inc1" / "cfg.h", header("CFG", "inc1"))
        self.assert_compiled(marker="CFG_inc1", gone="CFG_inc2")

    def test_has_include_turns_true(self):
        self.compile_with_stamps("OPTIONAL_none", "inc", "inc1", "inc2")
        harness.write(self.tu.dir / "inc2" / "optional.h", '#define OPTIONAL_MARK "OPTIONAL_here"\n')
        self.assert_compiled(marker="OPTIONAL_here", gone="OPTIONAL_none")

    def test_unshadowing_a_header_in_an_earlier_include_dir_is_removed(self):
        harness.write(self.tu.dir / "inc1" / "cfg.h", header("CFG", "inc1"))
        time.sleep(1.05 - time.time() % 1.0)
        self.compile_with_stamps("CFG_inc1", "inc")
        (self.tu.dir / "inc1" / "cfg.h").unlink()
        self.assert_compiled(marker="CFG_inc2", gone="CFG_inc1")
        self.assert_skipped()

    def test_header_created_in_the_second_the_record_was_written(self):
        self.assert_compiled(marker="CFG_inc2")
        harness.write(self.tu.dir / "inc1" / "cfg.h", header("CFG", "inc1"))  # no pause
        self.assert_compiled(marker="CFG_inc1", gone="CFG_inc2")

    def test_new_header_with_its_directory_mtime_put_back(self):
        self.compile_with_stamps("CFG_inc2", "inc1")
        inc1 = self.tu.dir / "inc1"
        st = os.stat(inc1)
        harness.write(inc1 / "cfg.h", header("CFG", "inc1"))
        os.utime(inc1, ns=(st.st_atime_ns, st.st_mtime_ns))  # the ctime still moves
        self.assert_compiled(marker="CFG_inc1", gone="CFG_inc2")

    def test_include_directory_replaced_by_one_holding_the_header(self):
        self.compile_with_stamps("CFG_inc2", "inc1")
        harness.write(self.tu.dir / "other" / "cfg.h", header("CFG", "inc1"))
        (self.tu.dir / "inc1").rename(self.tu.dir / "inc1.old")
        (self.tu.dir / "other").rename(self.tu.dir / "inc1")
        self.assert_compiled(marker="CFG_inc1", gone="CFG_inc2")

    def test_unrelated_file_in_a_probe_directory_still_skips(self):
        self.compile_with_stamps("CFG_inc2", "inc1")
        harness.write(self.tu.dir / "inc1" / "unrelated.h", "\n")
        self.assert_skipped()


class Symlinks(SkipCase):
    """Content reached through a symlink: retargeting it changes the content the compile reads."""

    def test_header_symlink_retargeted(self):
        h = self.tu.dir / "inc" / "common.h"
        h.rename(self.tu.dir / "inc" / "common_one.h")
        harness.write(self.tu.dir / "inc" / "common_two.h", header("COMMON", "two"))
        h.symlink_to("common_one.h")
        self.assert_compiled(marker="COMMON_one")
        self.assert_skipped()
        h.unlink()
        h.symlink_to("common_two.h")
        self.assert_compiled(marker="COMMON_two", gone="COMMON_one")

    def test_include_directory_symlink_retargeted(self):
        (self.tu.dir / "inc").rename(self.tu.dir / "inc_one")
        harness.write(self.tu.dir / "inc_two" / "common.h", header("COMMON", "two"))
        (self.tu.dir / "inc").symlink_to("inc_one")
        self.assert_compiled(marker="COMMON_one")
        self.assert_skipped()
        (self.tu.dir / "inc").unlink()
        (self.tu.dir / "inc").symlink_to("inc_two")
        self.assert_compiled(marker="COMMON_two", gone="COMMON_one")


class ObjectTamperedWith(SkipCase):
    def test_object_modified_by_someone_else(self):
        self.assert_compiled(marker="COMMON_one")
        data = self.tu.obj.read_bytes()
        st = os.stat(self.tu.obj)
        self.tu.obj.write_bytes(data.replace(b"COMMON_one", b"COMMON_bad"))
        os.utime(self.tu.obj, ns=(st.st_atime_ns, st.st_mtime_ns))
        self.assert_compiled(marker="COMMON_one", gone="COMMON_bad")

    def test_object_deleted(self):
        self.assert_compiled()
        self.tu.obj.unlink()
        self.assert_compiled(marker="COMMON_one")
        self.assertTrue(self.tu.obj.exists())


class BadRecords(SkipCase):
    """A record that cannot vouch for the object: compiled, exactly nvcc's output, no crash."""

    def check_bad_record(self, damage):
        self.assert_compiled()
        damage(self.tu.record_file())
        os.utime(self.tu.dir / "inc" / "common.h")  # touch
        result = self.assert_compiled(marker="COMMON_one")
        self.assertEqual(result.stdout, b"", "no extra output")
        self.assertEqual(result.stderr, b"", "no extra output")
        self.assert_skipped()  # and the new record works

    def test_corrupt(self):
        def flip(path):
            data = bytearray(path.read_bytes())
            data[len(data) // 2] ^= 0x01
            path.write_bytes(bytes(data))
        self.check_bad_record(flip)

    def test_truncated(self):
        self.check_bad_record(lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]))

    def test_older_format(self):
        def older(path):
            first, rest = harness.read_record_text(path).split("\n", 1)
            self.assertTrue(first.startswith("nvfresh-record\t"), first)
            harness.write_record_text(path, "nvfresh-record\t0\n" + rest)
        self.check_bad_record(older)

    def test_corrupt_text_inside_an_intact_frame(self):
        def edit(path):
            text = harness.read_record_text(path)
            harness.write_record_text(path, text.replace("\ntimes\t", "\ntimes\t9", 1))
        self.check_bad_record(edit)

    def test_empty(self):
        self.check_bad_record(lambda p: p.write_bytes(b""))

    def test_missing(self):
        self.check_bad_record(lambda p: p.unlink())


class ClockJumps(SkipCase):
    def set_mtime(self, path, mtime_ns):
        os.utime(path, ns=(mtime_ns, mtime_ns))

    def test_changed_content_with_mtime_far_in_the_past(self):
        self.assert_compiled(marker="COMMON_one")
        h = self.tu.dir / "inc" / "common.h"
        h.write_text(header("COMMON", "two"))
        self.set_mtime(h, 1_000_000_000 * 1_000_000_000)  # 2001
        self.assert_compiled(marker="COMMON_two", gone="COMMON_one")
        self.assert_skipped()

    def test_changed_content_with_mtime_in_the_future(self):
        self.assert_compiled(marker="COMMON_one")
        h = self.tu.dir / "inc" / "common.h"
        h.write_text(header("COMMON", "two"))
        self.set_mtime(h, time.time_ns() + 30 * DAY_NS)
        self.assert_compiled(marker="COMMON_two", gone="COMMON_one")
        self.assert_skipped()  # a future mtime alone is no reason to compile again

    def test_unchanged_content_with_mtime_in_the_future_is_skipped(self):
        self.assert_compiled(marker="COMMON_one")
        h = self.tu.dir / "inc" / "common.h"
        self.set_mtime(h, time.time_ns() + 30 * DAY_NS)
        self.assert_skipped()
        self.assert_skipped()
        self.change_keep_mtime(h, "COMMON_one", "COMMON_two")
        self.assert_compiled(marker="COMMON_two", gone="COMMON_one")

    def test_source_mtime_back_to_the_epoch(self):
        self.assert_compiled(marker="COMMON_one")
        self.set_mtime(self.tu.dir / "src.cu", 0)
        self.assert_skipped()


class Terminal(SkipCase):
    """Output to a terminal goes through a pseudo-terminal: the compiler still sees a terminal (gcc
    and cudafe++ colour their messages), the bytes are nvcc's own, and they can be replayed."""

    def setUp(self):
        self.tu = Tu(warning=True)
        self.tu.extra = ["-Xcompiler", "-Wall"]

    def run_on_pty(self, compiler_prefix, stderr_to_pipe=False, expect_status=0, term="xterm-256color"):
        master, slave = pty.openpty()
        env = dict(os.environ, TERM=term)  # a terminal has a type; gcc colours none without
        proc = subprocess.Popen(compiler_prefix + [NVCC] + self.tu.args(), cwd=self.tu.dir, env=env,
                                stdin=subprocess.DEVNULL, stdout=slave,
                                stderr=subprocess.PIPE if stderr_to_pipe else slave)
        os.close(slave)
        def read_errors():
            with proc.stderr:
                self.piped_err = proc.stderr.read()
        errors = threading.Thread(target=read_errors) if stderr_to_pipe else None
        if errors:
            errors.start()
        seen = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the other side is closed
                break
            if not chunk:
                break
            seen += chunk
        os.close(master)
        if errors:
            errors.join()
        self.assertEqual(proc.wait(), expect_status)
        return seen

    def test_terminal_output_is_nvccs_own_and_is_replayed_on_a_terminal(self):
        plain = self.run_on_pty([])
        self.assertIn(b"unused_variable", plain, "nvcc's warning reached the terminal")
        self.assertIn(b"\x1b[", plain, "on a terminal the compiler colours its messages")
        through = self.run_on_pty([NVFRESH])
        self.assertEqual(through, plain, "what reaches the terminal is exactly what plain nvcc prints")
        self.assertEqual(events(self.tu.dir)[-1][0], "compiled")
        harness.bump_mtime(self.tu.dir / "inc" / "common.h")
        replayed = self.run_on_pty([NVFRESH])
        self.assertEqual(events(self.tu.dir)[-1][0], "skipped")
        self.assertEqual(replayed, plain, "the replay is byte for byte what the terminal got")

    def test_a_failing_compile_on_a_terminal(self):
        harness.write(self.tu.dir / "src.cu", SOURCE + "int broken() { return undeclared_name; }\n")
        plain = self.run_on_pty([], expect_status=2)
        self.assertIn(b"undeclared_name", plain)
        self.assertEqual(self.run_on_pty([NVFRESH], expect_status=2), plain)

    def test_another_terminal_type_compiles_then_skips(self):
        self.run_on_pty([NVFRESH])
        self.assertEqual(events(self.tu.dir)[-1][0], "compiled")
        plain_dumb = self.run_on_pty([], term="dumb")
        self.assertIn(b"unused_variable", plain_dumb)
        self.assertNotIn(b"\x1b[", plain_dumb, "on a dumb terminal the compiler colours nothing")
        dumb = self.run_on_pty([NVFRESH], term="dumb")
        event, _, reason = events(self.tu.dir)[-1]
        self.assertEqual(event, "compiled", "colours recorded for xterm must not be replayed on a dumb terminal")
        self.assertIn("TERM=xterm-256color then, TERM=dumb now", reason)
        self.assertEqual(dumb, plain_dumb)
        harness.bump_mtime(self.tu.dir / "inc" / "common.h")
        self.assertEqual(self.run_on_pty([NVFRESH], term="dumb"), plain_dumb)
        self.assertEqual(events(self.tu.dir)[-1][0], "skipped")

    def test_a_silent_compile_skips_on_a_terminal_and_on_a_pipe_alike(self):
        self.tu = Tu(warning=False)
        self.assertEqual(self.run_on_pty([NVFRESH]), b"")
        self.assertEqual(events(self.tu.dir)[-1][0], "compiled")
        harness.bump_mtime(self.tu.dir / "inc" / "common.h")
        piped = self.assert_skipped()  # nothing was printed: nothing to print differently
        self.assertEqual((piped.stdout, piped.stderr), (b"", b""))
        harness.bump_mtime(self.tu.dir / "inc" / "common.h")
        self.assertEqual(self.run_on_pty([NVFRESH], term="dumb"), b"")
        self.assertEqual(events(self.tu.dir)[-1][0], "skipped")

    def test_a_pipe_after_a_terminal_compiles_then_skips(self):
        self.run_on_pty([NVFRESH])
        piped = self.assert_compiled()  # no colours on a pipe: nvcc must print it itself
        self.assertIn(b"unused_variable", piped.stdout + piped.stderr)
        self.assertNotIn(b"\x1b[", piped.stdout + piped.stderr)
        replay = self.assert_skipped()
        self.assertEqual((replay.stdout, replay.stderr), (piped.stdout, piped.stderr))

    def test_stdout_on_a_terminal_and_stderr_on_a_pipe(self):
        plain_out = self.run_on_pty([], stderr_to_pipe=True)
        plain_err = self.piped_err
        out = self.run_on_pty([NVFRESH], stderr_to_pipe=True)
        self.assertEqual((out, self.piped_err), (plain_out, plain_err))
        harness.bump_mtime(self.tu.dir / "inc" / "common.h")
        out = self.run_on_pty([NVFRESH], stderr_to_pipe=True)
        self.assertEqual(events(self.tu.dir)[-1][0], "skipped")
        self.assertEqual((out, self.piped_err), (plain_out, plain_err))


class ChangesDuringTheCheck(SkipCase):
    """A large header rewritten by a background thread while nvfresh hashes it.

    Not deterministic, so a bounded loop asserting the invariant on every iteration: whatever
    nvfresh did while the header changed under it, once the header is stable again and differs
    from what the object was built from, the next run compiles and the object shows the new
    content; a skip during the race leaves the object older than the header (the build tool will
    ask again).
    """
    ITERATIONS = 6
    FILLER_LINES = 60_000  # ~4 MiB: hashing it takes long enough to be overlapped

    def big_header(self, mark):
        filler = "// " + "x" * 64 + "\n"
        return f'#pragma once\n#define COMMON_MARK "COMMON_{mark}"\n#define COMMON_VALUE 1\n' + \
            filler * self.FILLER_LINES

    def test_header_rewritten_while_nvfresh_checks_it(self):
        h = self.tu.dir / "inc" / "common.h"
        contents = {m: self.big_header(m).encode() for m in ("AAA", "BBB")}
        h.write_bytes(contents["AAA"])
        self.assert_compiled(marker="COMMON_AAA")
        recorded, other = "AAA", "BBB"
        rng = random.Random(4)
        outcomes = []
        for iteration in range(self.ITERATIONS):
            stop = threading.Event()
            # Negative: the writer starts first and nvfresh meets a header already in flux;
            # positive: nvfresh starts first and the header begins to change during its check.
            lead = rng.uniform(-0.03, 0.03)

            def writer():
                time.sleep(max(lead, 0.0))
                flip = [other, recorded]
                i = 0
                while True:  # in place, same size; at least once, and always ending on `other`
                    with open(h, "r+b") as f:
                        f.write(contents[flip[i % 2]])
                    i += 1
                    if stop.is_set() and i % 2 == 1:
                        break
            thread = threading.Thread(target=writer)
            thread.start()
            time.sleep(max(-lead, 0.0))
            result, new = self.tu.run()
            stop.set()
            thread.join()
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(len(new), 1)
            race_event = new[0][0]
            outcomes.append(f"{race_event} ({new[0][2][:60]})")
            if race_event == "skipped":
                self.assertLess(os.stat(self.tu.obj).st_mtime_ns, os.stat(h).st_mtime_ns,
                                "after a skip the header must look newer than the object")
            # The header is stable now and holds `other`.
            result, (event, _, reason) = self.nvfresh()
            data = self.tu.obj.read_bytes()
            self.assertTrue(f"COMMON_{other}".encode() in data,
                            f"iteration {iteration}: stale object after '{race_event}' "
                            f"({new[0][2]}) then '{event}' ({reason})")
            self.assertFalse(f"COMMON_{recorded}".encode() in data)
            if race_event == "skipped":
                self.assertEqual(event, "compiled", f"iteration {iteration}: {reason}")
            recorded, other = other, recorded
        print("\noutcomes while the header changed:\n  " + "\n  ".join(outcomes), file=sys.stderr)


def require_build_tools():
    missing = [n for n in ("cmake", "ninja", "make", "git") if shutil.which(n) is None]
    if missing:
        print(f"SKIPPED CMake cases: {missing} not found", file=sys.stderr)
        return False
    return True


PROJECT_CMAKE = """cmake_minimum_required(VERSION 3.20)
project(skipdemo LANGUAGES CUDA)
set(CMAKE_CUDA_ARCHITECTURES 80)
add_library(kernels STATIC a.cu b.cu c.cu)
target_include_directories(kernels PRIVATE include)
"""


class CMakeLevel(harness.unittest.TestCase):
    GENERATORS = ("Ninja", "Unix Makefiles")

    def setUp(self):
        if not require_build_tools():
            self.skipTest("cmake/ninja/make/git missing")
        self.root = harness.make_workdir("nvfresh-skip-cmake-")
        src = self.root / "src"
        harness.write(src / "CMakeLists.txt", PROJECT_CMAKE)
        harness.write(src / "include" / "shared.h", header("SHARED", "one"))
        harness.write(src / "include" / "tile.h", '#pragma once\n#include "shared.h"\n#define TILE 4\n')
        for name in "abc":
            harness.write(src / f"{name}.cu",
                          f'#include "tile.h"\n__global__ void k_{name}(int* p) {{ *p = SHARED_VALUE * TILE; }}\n'
                          f'extern "C" const char* mark_{name}() {{ return SHARED_MARK; }}\n')
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
        self.git = lambda *a: harness.run(git + list(a), cwd=src, check=True)
        self.git("init", "-q")
        self.git("add", ".")
        self.git("commit", "-q", "-m", "base")
        self.git("checkout", "-q", "-b", "other")
        harness.write(src / "include" / "shared.h", header("SHARED", "two"))
        self.git("commit", "-q", "-am", "other")
        self.git("checkout", "-q", "main")
        self.src = src

    def configure(self, generator):
        build = self.root / ("build-" + generator.split()[0].lower())
        cmake_detection.seeded_configure(self.src, build, [
            "-S", str(self.src), "-B", str(build), "-G", generator,
            f"-DCMAKE_PROJECT_INCLUDE={harness.nvfresh_cmake()}",
            f"-DNVFRESH_EXECUTABLE={NVFRESH}", f"-DCMAKE_CUDA_COMPILER={NVCC}"])
        return build

    def build(self, build):
        return harness.run(["cmake", "--build", str(build), "-j2"], check=True)

    def nvcc_runs(self, build):
        stats = stats_json(build)
        return sum(stat_count(stats, e) for e in NVCC_RUN_EVENTS), stat_count(stats, "skipped")

    def test_touch_every_header_and_branch_switch_run_no_nvcc(self):
        for generator in self.GENERATORS:
            with self.subTest(generator=generator):
                build = self.configure(generator)
                self.build(build)
                self.assertEqual(self.nvcc_runs(build), (3, 0))
                for h in (self.src / "include").iterdir():
                    os.utime(h)  # touch: now
                out = self.build(build).stdout
                self.assertIn(b"Building CUDA object", out, "the build tool must re-run the compiles")
                self.assertEqual(self.nvcc_runs(build), (3, 3), "touched headers: all skipped")
                self.git("checkout", "-q", "other")
                time.sleep(0.01)
                self.git("checkout", "-q", "main")
                out = self.build(build).stdout
                self.assertIn(b"Building CUDA object", out)
                self.assertEqual(self.nvcc_runs(build), (3, 6), "branch switch and back: no nvcc")
                for name in "abc":
                    obj = next(build.rglob(f"{name}.cu.o"))
                    self.assertIn(b"SHARED_one", obj.read_bytes())
                # and a real change on the other branch compiles all three
                self.git("checkout", "-q", "other")
                self.build(build)
                self.assertEqual(self.nvcc_runs(build), (6, 6))
                self.git("checkout", "-q", "main")


if __name__ == "__main__":
    harness.main()
