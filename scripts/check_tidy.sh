#!/usr/bin/env bash
# Fails when clang-tidy 14 (Debian 12) finds anything in nvfresh's own code: every C++ file of lib/
# and launcher/ (and the lib/ headers they include) with the repository's .clang-tidy, and the two
# C preload libraries (lib/trace/nvfresh_trace.c, lib/repro/nvfresh_heap_noise.c) with the C list
# below. Warnings are errors. It reads the compile commands a CMake build exports.
# Usage: scripts/check_tidy.sh [build dir with compile_commands.json, default <repo>/build] [FILE...]
#   FILE...  only these files of lib/ and launcher/ (a header stands for the .cpp of the same name);
#            the quick test stage passes the files a change touched
# Runs on every core (CI: 2) through run-clang-tidy.
#
# The tidy cache. clang-tidy on every file takes about 12 minutes of CI's 2 cores, so, as ccache
# does for compiles, a file whose run was clean is not run again while nothing its verdict depends
# on has changed. One empty marker file per clean key, in
#   ${NVFRESH_TIDY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nvfresh-tidy}/v1/<2 hex>/<62 hex>
# (NVFRESH_TIDY_CACHE=off: no cache, every file runs). A hit refreshes its marker's mtime; a marker
# unused for 30 days goes, and at most 20000 stay (the least recently used go first). Only clean
# verdicts are stored: a file with any warning runs, and is reported, every time.
#
# Why a hit is sound. A file's key (SHA-256 of tagged, length-prefixed fields) covers everything
# that can change what clang-tidy says about it:
#   - clang-tidy: its --version text and the bytes of its binary and of every shared library it
#     loads (ldd), of the runner (run-clang-tidy picks clang-tidy's flags), of this script (it
#     picks the rest: any edit here starts the cache afresh), and of the files clang's driver
#     reads to tell the distribution (/etc/os-release, ...);
#   - the configuration: the -config string passed here (the C list, or none for C++) and the bytes
#     of every .clang-tidy clang-tidy can read for the file and for each file it includes (each
#     directory upward, up to the first .clang-tidy that does not mention InheritParentConfig);
#   - every compile command compile_commands.json holds for the file (clang-tidy runs each), and
#     the environment variables clang's driver reads (CPATH, ...);
#   - every file the translation unit includes, by name and by bytes. The list is clang's own
#     dependency output (-M, system headers included) for the command's own flags, produced by the
#     clang of clang-tidy's LLVM (the same driver, resource dir and GCC installation; the
#     command's compiler name is kept as argv[0], so the driver mode is the same too) with
#     -D__clang_analyzer__, which clang-tidy defines. Not g++'s list: under clang, Boost includes
#     config/compiler/clang.hpp instead of gcc.hpp, and libstdc++ pulls in <ranges>, <span>,
#     <variant> and more where g++ does not. Raw bytes, not preprocessed text: NOLINT comments are
#     in the bytes, and so is every #ifdef __clang__ branch. The list is taken again on every run,
#     so a new header that now shadows another (earlier in the include path) changes the key.
# Paths: in commands and file names, the build directory's and the repository's paths become
# @BUILD@ and @REPO@, so that a fresh clone elsewhere (CI) hits. (-Werror is in the command,
# though: CI builds with NVFRESH_WERROR=ON, a developer's build/ without, so they share no keys.)
# Where a file sits matters to a verdict in one way only (beside __FILE__, below):
# HeaderFilterRegex is matched against the absolute path of each header (a clone under /var/lib/
# would match /(lib|launcher)/ for every file of build/ too). So the key also records, for each
# file, whether the header filter matches its real path. When the filter cannot be read simply
# (one plain `HeaderFilterRegex: '<regex>'` line, plain regex characters), paths are kept as they
# are: no hit across clones, still sound.
# Races: keys are taken before clang-tidy runs. A file is marked clean only when (1) clang-tidy
# exited 0 for it and printed nothing but "N warnings generated." (run-clang-tidy calls a small
# wrapper that keeps each file's exit status and output), (2) its key, taken again after the run,
# is the same, and (3) no file in its key changed (mtime or ctime) since 1 s before the keys were
# started (the kernel's file clock is coarse). compile_commands.json is held by its commands, which
# are in the key, taken before and after, not by its mtime: every configure rewrites it, and
# test.sh's tidy stage configures (scripts/build.sh) just before the keys are taken, so holding its
# mtime kept the cache from ever storing a verdict there.
# Left out, knowingly: a file that __has_include() finds but that is not included (-M does not
# list it); the text of __FILE__, which differs between clones (no enabled check reads it); a
# header created and removed again while clang-tidy runs; the CUDA installation clang's driver
# looks at (it only matters to CUDA sources, and none is checked). Without the clang of
# clang-tidy's LLVM (Debian: package clang-14), the cache is off.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$repo/build}
shift || true
run_clang_tidy=${RUN_CLANG_TIDY:-run-clang-tidy}
clang_tidy=${CLANG_TIDY:-clang-tidy}

# The C files are C11 against libc only, loaded into every process of a compile. Left out beside
# the C++ list's exclusions: checks that misread C (a character constant is an int in C, so
# `char c = ok ? letter : 'R'` "narrows"; lines are assembled by length and written with write(2),
# never as C strings; getauxval returns its pointer as an unsigned long; _GNU_SOURCE is how glibc
# is asked for its extensions).
c_config='{Checks: "-*,bugprone-*,clang-analyzer-*,misc-*,performance-*,-bugprone-easily-swappable-parameters,-misc-no-recursion,-clang-analyzer-security.insecureAPI.*,-bugprone-narrowing-conversions,-bugprone-not-null-terminated-result,-performance-no-int-to-ptr", WarningsAsErrors: "*", CheckOptions: [{key: bugprone-reserved-identifier.AllowedIdentifiers, value: _GNU_SOURCE}]}'

version=$("$clang_tidy" --version 2>/dev/null || true)
if [[ "$version" != *"version 14."* ]]; then
  echo "check_tidy: needs clang-tidy 14 (Debian 12's clang-tidy package); found: ${version:-none}" >&2
  exit 1
fi
if [ ! -f "$build/compile_commands.json" ]; then
  echo "check_tidy: no $build/compile_commands.json; configure the build first (scripts/build.sh)" >&2
  exit 1
fi

# The tidy cache's keys and markers (the comment at the top says what a key covers and why).
#   keys STATE_DIR   computes the keys of the files the regexes select, in parallel; writes the
#                    regexes of the files to run and the keys of those files; prints
#                    "<from cache> <to run> <seconds>"
#   mark STATE_DIR   after the run: marks clean the files that ran clean and whose keys held
# Settings come from the environment (NVFRESH_TIDY_*), set below.
IFS= read -r -d '' k_tidy_cache_py <<'PY' || true
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import time

K_FORMAT = "nvfresh tidy cache key, format 1"
K_DRIVER_ENV = ("CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH",
                "OBJCPLUS_INCLUDE_PATH", "CCC_OVERRIDE_OPTIONS", "COMPILER_PATH")
K_DISTRO_FILES = ("/etc/os-release", "/usr/lib/os-release", "/etc/lsb-release",
                  "/etc/debian_version")
K_NEW_MARGIN_S = 1.0
K_MARKER_AGE_S = 30 * 24 * 3600
K_MAX_MARKERS = 20000
K_DEPS_TARGET = "nvfresh-tidy-deps"
K_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# What a clean clang-tidy run may print (the last two only without -quiet).
K_BENIGN = re.compile(r"|\d+ warnings? generated\.|Suppressed \d+ warnings? \(.*\)\."
                      r"|Use -header-filter=.* to display errors from all non-system headers\..*")
K_PLAIN_REGEX = re.compile(r"[A-Za-z0-9/_.|()*+?^$\[\]-]+")
# Options that name the output or ask for dependency output: replaced by -M -MF - for the listing.
K_DROP_WITH_VALUE = ("-o", "-MF", "-MT", "-MQ")
K_DROP = ("-c", "-M", "-MM", "-MD", "-MMD", "-MP", "-MG")


class KeyHash:
    """SHA-256 over tagged, length-prefixed fields: no two field lists hash alike by accident."""

    def __init__(self):
        self.hash = hashlib.sha256()

    def add(self, tag, value):
        data = value.encode("utf-8", "surrogateescape") if isinstance(value, str) else value
        self.hash.update(b"%s\0%d\0" % (tag.encode(), len(data)) + data)

    def hexdigest(self):
        return self.hash.hexdigest()


class Files:
    """Digests and stats of files, each version (device, inode, size, mtime, ctime) read once."""

    def __init__(self):
        self.digests = {}

    def digest(self, path):
        st = os.stat(path)
        version = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        digest = self.digests.get(version)
        if digest is None:
            sha = hashlib.sha256()
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    sha.update(chunk)
            digest = self.digests[version] = sha.hexdigest()
        return digest


class Paths:
    """Writes the build directory's and the repository's paths as @BUILD@ and @REPO@ ('@': '@@')."""

    def __init__(self, repo, build, normalize):
        forms = []
        for tag, path in (("@BUILD@", build), ("@REPO@", repo)):
            forms += [(form, tag) for form in {os.path.abspath(path), os.path.realpath(path)}]
        forms.sort(key=lambda form: -len(form[0]))
        self.tags = dict(forms) if normalize else {}
        alternatives = [re.escape(form) + "(?![^/])" for form in self.tags] + ["@"]
        self.pattern = re.compile("|".join(alternatives))

    def __call__(self, text):
        return self.pattern.sub(lambda m: self.tags.get(m.group(0), "@@"), text)


def read_text(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace")


def header_filter(config_texts):
    """The HeaderFilterRegex that applies (a compiled regex, or "" for none), or None if unclear."""
    for text in config_texts:
        mentions = text.count("HeaderFilterRegex")
        if mentions == 0:
            continue
        line = re.search(r"^HeaderFilterRegex:[ \t]*(\S+)[ \t]*$", text, re.MULTILINE)
        if mentions != 1 or line is None:
            return None
        value = line.group(1)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        return re.compile(value) if K_PLAIN_REGEX.fullmatch(value) else None
    return ""


def parse_make_deps(text):
    """The prerequisites in clang's -M output (' ' and '#' escaped with a backslash, '$' as '$$')."""
    text = text.replace("\\\n", " ")
    if not text.startswith(K_DEPS_TARGET + ":"):
        raise ValueError("unexpected dependency output: " + text[:200])
    words = re.split(r"(?<!\\)\s+", text[len(K_DEPS_TARGET) + 1:])
    return [re.sub(r"\\([ #])", r"\1", word).replace("$$", "$") for word in words if word]


class Keyer:
    def __init__(self, settings):
        self.s = settings
        self.files = Files()
        self.configs = {}
        self.database = {}
        with open(os.path.join(settings["build"], "compile_commands.json"), "rb") as f:
            for entry in json.load(f):  # each file named as run-clang-tidy names it
                file = entry["file"]
                if not os.path.isabs(file):
                    file = os.path.normpath(os.path.join(entry["directory"], file))
                self.database.setdefault(file, []).append(entry)
        self.tool_paths, self.tool_digest = self.tool_identity()

    def tool_identity(self):
        key, paths = KeyHash(), []
        key.add("format", K_FORMAT)
        key.add("version", self.s["version"])
        libraries = subprocess.run(["ldd", self.s["clang_tidy"]], capture_output=True,
                                   text=True).stdout
        paths += [self.s["clang_tidy"], self.s["clang"], self.s["runner"]]
        paths += re.findall(r"=> (/\S+)", libraries)
        paths += [path for path in K_DISTRO_FILES if os.path.exists(path)]
        for path in paths:
            key.add("tool", path)
            key.add("bytes", self.files.digest(path))
        key.add("script", self.files.digest(self.s["script"]))  # bytes only: it is in the clone
        paths.append(self.s["script"])
        for name in K_DRIVER_ENV:
            if name in os.environ:
                key.add("env " + name, os.environ[name])
        return paths, key.hexdigest()

    def config_chain(self, directory):
        """The .clang-tidy files clang-tidy may read for a file in directory, nearest first."""
        chain = self.configs.get(directory)
        if chain is None:
            chain = []
            path = os.path.join(directory, ".clang-tidy")
            inherits = True
            if os.path.lexists(path):
                chain.append(path)
                try:
                    inherits = "InheritParentConfig" in read_text(path)
                except OSError:
                    pass
            parent = os.path.dirname(directory)
            if inherits and parent != directory:
                chain += self.config_chain(parent)
            self.configs[directory] = chain
        return chain

    def list_deps(self, entry):
        args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
        compiler, kept, i = args[0], [], 1
        while i < len(args):
            if args[i] in K_DROP_WITH_VALUE:
                i += 2
                continue
            if args[i] not in K_DROP and not args[i].startswith(K_DROP_WITH_VALUE[1:]):
                kept.append(args[i])
            i += 1
        # clang-tidy's driver takes the command's compiler for itself: its directory, its name
        install_dir = ["-ccc-install-dir", os.path.dirname(compiler)] if os.path.isabs(compiler) else []
        command = [compiler] + install_dir + kept + ["-D__clang_analyzer__", "-w", "-M", "-MT",
                                                     K_DEPS_TARGET, "-MF", "-"]
        done = subprocess.run(command, executable=self.s["clang"], cwd=entry["directory"],
                              capture_output=True, text=True, errors="surrogateescape")
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip()[-400:] or "clang -M failed")
        deps = parse_make_deps(done.stdout)
        if not deps:
            raise RuntimeError("clang -M listed no file")
        return args, [os.path.join(entry["directory"], dep) for dep in deps]  # as clang spells them

    def key(self, file, mode):
        """The key of one file and the paths it covers; raises when a key cannot be made."""
        entries = self.database[file]
        commands, deps = [], {}
        for entry in entries:
            args, listed = self.list_deps(entry)
            commands.append([entry["directory"], args, entry.get("output", "")])
            deps.update(dict.fromkeys(listed))
        configs = {}
        for directory in dict.fromkeys(os.path.dirname(path) for path in [file, *deps]):
            configs.update(dict.fromkeys(self.config_chain(directory)))
        config_texts = [read_text(path) for path in self.config_chain(os.path.dirname(file))]
        filter_regex = header_filter(config_texts) if mode == "cpp" else ""
        paths = Paths(self.s["repo"], self.s["build"], filter_regex is not None)
        key = KeyHash()
        key.add("tool", self.tool_digest)
        key.add("mode", mode)
        key.add("config", self.s["c_config"] if mode == "c" else "")
        key.add("paths", "normalized" if filter_regex is not None else "as they are")
        key.add("file", paths(file))
        for directory, args, output in commands:
            args = [paths(arg) for arg in args]
            key.add("command", json.dumps([paths(directory), args, paths(output)]))
        for path in configs:
            key.add("clang-tidy config", paths(path))
            key.add("bytes", self.files.digest(path))
        for dep in deps:
            key.add("dep", paths(dep))
            key.add("header filter", "1" if filter_regex and filter_regex.search(dep) else "0")
            key.add("bytes", self.files.digest(dep))
        return key.hexdigest(), [*configs, *deps]


def marker_path(cache, key):
    return os.path.join(cache, key[:2], key[2:])


def settings_from_env(state_dir):
    env = os.environ
    return {"repo": env["NVFRESH_TIDY_REPO"], "build": env["NVFRESH_TIDY_BUILD"],
            "cache": os.path.join(env["NVFRESH_TIDY_CACHE_DIR"], "v1"),
            "version": env["NVFRESH_TIDY_VERSION"], "clang_tidy": env["NVFRESH_TIDY_BINARY"],
            "clang": env["NVFRESH_TIDY_CLANG"], "runner": env["NVFRESH_TIDY_RUNNER"],
            "script": env["NVFRESH_TIDY_SCRIPT"],
            "c_config": env["NVFRESH_TIDY_C_CONFIG"], "jobs": int(env["NVFRESH_TIDY_JOBS"]),
            "regexes": {"cpp": env["NVFRESH_TIDY_CPP_REGEX"], "c": env["NVFRESH_TIDY_C_REGEX"]},
            "state": state_dir}


def keys_in_parallel(keyer, wanted):
    """{file: (key, paths) or an exception} for each (file, mode) of wanted."""
    def one(file, mode):
        try:
            return keyer.key(file, mode)
        except Exception as error:  # no key: the file runs, and is not marked
            return error
    with concurrent.futures.ThreadPoolExecutor(max_workers=keyer.s["jobs"]) as pool:
        futures = {file: pool.submit(one, file, mode) for file, mode in wanted}
        return {file: future.result() for file, future in futures.items()}


def command_keys(state_dir):
    started = time.time()
    settings = settings_from_env(state_dir)
    keyer = Keyer(settings)
    wanted = []
    for mode, regex in settings["regexes"].items():
        selects = re.compile(regex)
        wanted += [(file, mode) for file in sorted(keyer.database) if selects.search(file)]
    keys = keys_in_parallel(keyer, wanted)
    to_run = {"cpp": [], "c": []}
    state = {"started": started, "tools": keyer.tool_paths, "files": {}}
    for file, mode in wanted:
        result = keys[file]
        if isinstance(result, Exception):
            print(f"check_tidy: no tidy cache key for {file}: {result}", file=sys.stderr)
        else:
            marker = marker_path(settings["cache"], result[0])
            if os.path.exists(marker):
                try:
                    os.utime(marker)
                except OSError:
                    pass
                continue
            state["files"][file] = {"mode": mode, "key": result[0]}
        to_run[mode].append(file)
    for mode, files in to_run.items():
        regex = "^(" + "|".join(re.escape(file) for file in files) + ")$" if files else "^$"
        with open(os.path.join(state_dir, mode + "_regex"), "w") as f:
            f.write(regex)
    with open(os.path.join(state_dir, "state.json"), "w") as f:
        json.dump(state, f)
    runs = len(to_run["cpp"]) + len(to_run["c"])
    print(len(wanted) - runs, runs, "%.1f" % (time.time() - started))


def read_records(records_dir):
    """{file: (exit status, output)} from the clang-tidy wrapper; a file run twice is left out."""
    records, seen = {}, set()
    for name in os.listdir(records_dir):
        if not name.endswith(".status"):
            continue
        base = os.path.join(records_dir, name[:-len(".status")])
        status, file = read_text(base + ".status").split("\n")[:2]
        output = read_text(base + ".stdout") + "\n" + read_text(base + ".stderr")
        if file in seen:
            records.pop(file, None)
        else:
            records[file] = (int(status), output)
        seen.add(file)
    return records


def ran_clean(record):
    if record is None or record[0] != 0:
        return False
    return all(K_BENIGN.fullmatch(K_ANSI.sub("", line).strip()) for line in record[1].splitlines())


def prune(cache):
    now, markers = time.time(), []
    for shard in os.scandir(cache):
        if not shard.is_dir(follow_symlinks=False):
            continue
        for marker in os.scandir(shard.path):
            try:
                used = marker.stat(follow_symlinks=False).st_mtime
                if now - used > K_MARKER_AGE_S:
                    os.unlink(marker.path)
                else:
                    markers.append((used, marker.path))
            except OSError:
                pass
    markers.sort()
    for _, path in markers[:max(0, len(markers) - K_MAX_MARKERS)]:
        try:
            os.unlink(path)
        except OSError:
            pass


def command_mark(state_dir, records_dir):
    settings = settings_from_env(state_dir)
    with open(os.path.join(state_dir, "state.json")) as f:
        state = json.load(f)
    records = read_records(records_dir)
    clean = {file: run for file, run in state["files"].items() if ran_clean(records.get(file))}
    if not clean:
        return
    keyer = Keyer(settings)
    again = keys_in_parallel(keyer, [(file, run["mode"]) for file, run in clean.items()])
    threshold, unchanged = state["started"] - K_NEW_MARGIN_S, {}

    def held(path):
        if path not in unchanged:
            try:
                st = os.stat(path)
                unchanged[path] = max(st.st_mtime, st.st_ctime) < threshold
            except OSError:
                unchanged[path] = False
        return unchanged[path]

    changed = 0
    tools_held = all(held(path) for path in state["tools"])
    for file, run in clean.items():
        result = again[file]
        if (not tools_held or isinstance(result, Exception) or result[0] != run["key"]
                or not all(held(path) for path in result[1])):
            changed += 1
            continue
        marker = marker_path(settings["cache"], run["key"])
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        open(marker, "a").close()
    if changed:
        print(f"check_tidy: the clean verdicts of {changed} files are not stored in the tidy cache: "
              "a file they read changed during the run (or in the second before it)")
    prune(settings["cache"])


if __name__ == "__main__":
    if sys.argv[1] == "keys":
        command_keys(sys.argv[2])
    else:
        command_mark(sys.argv[2], sys.argv[3])
PY

# The clang-tidy that run-clang-tidy calls while the cache is on: the real one, whose exit status
# and output it also keeps per file (a file name is the last argument) for the marking.
IFS= read -r -d '' k_tidy_wrapper <<'SH' || true
#!/usr/bin/env bash
record=$(mktemp "$NVFRESH_TIDY_RECORDS/run.XXXXXX")
"$NVFRESH_TIDY_BINARY" "$@" >"$record.stdout" 2>"$record.stderr"
status=$?
cat "$record.stdout"
cat "$record.stderr" >&2
printf '%s\n%s\n' "$status" "${!#}" >"$record.status"
exit $status
SH

# The file regexes: every file, or the ones named (as absolute paths, headers as their .cpp).
quote_regex() { printf '%s' "$1" | sed 's/[.[\*^$()+?{|]/\\&/g'; }
cpp_regex="^$repo/(lib|launcher)/.*\\.cpp\$"
c_regex="^$repo/lib/.*\\.c\$"
files=$(grep -cE "\"file\": \"$repo/(lib|launcher)/.*\\.(cpp|c)\"" "$build/compile_commands.json" || true)
if (($#)); then
  cpp_named=() c_named=()
  for file in "$@"; do
    file=$(realpath -m "$file")
    [[ "$file" == *.hpp ]] && file="${file%.hpp}.cpp"
    [[ "$file" == "$repo"/lib/* || "$file" == "$repo"/launcher/* ]] && [ -f "$file" ] || continue
    case "$file" in
    *.cpp) cpp_named+=("$(quote_regex "$file")") ;;
    *.c) c_named+=("$(quote_regex "$file")") ;;
    esac
  done
  files=$((${#cpp_named[@]} + ${#c_named[@]}))
  cpp_regex='^$' c_regex='^$'  # matches no file: that run checks nothing
  ((${#cpp_named[@]})) && cpp_regex="^($(IFS='|'; echo "${cpp_named[*]}"))\$"
  ((${#c_named[@]})) && c_regex="^($(IFS='|'; echo "${c_named[*]}"))\$"
  if ((files == 0)); then
    echo "check_tidy: none of the named files is a C/C++ file of lib/ or launcher/: nothing to check"
    exit 0
  fi
fi

jobs=$(nproc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=$work/log
binary=$(command -v "$clang_tidy")
runs_binary=$binary  # what run-clang-tidy calls: with the cache on, the wrapper below

# The tidy cache: which files hold a clean verdict already; the rest run.
cache=${NVFRESH_TIDY_CACHE:-}
if [ -z "$cache" ]; then
  if [ -n "${XDG_CACHE_HOME:-}" ]; then
    cache=$XDG_CACHE_HOME/nvfresh-tidy
  elif [ -n "${HOME:-}" ]; then
    cache=$HOME/.cache/nvfresh-tidy
  else
    cache=off
  fi
fi
real_binary=$(realpath "$binary")
clang=$(dirname "$real_binary")/clang
if [ "$cache" != off ] && [ ! -x "$clang" ]; then
  echo "check_tidy: tidy cache off: no $clang (clang-tidy's LLVM's clang lists what files include)" >&2
  cache=off
fi
if [ "$cache" != off ] && ! mkdir -p "$cache/v1" 2>/dev/null; then
  echo "check_tidy: tidy cache off: cannot create $cache/v1" >&2
  cache=off
fi
if [ "$cache" != off ]; then
  export NVFRESH_TIDY_REPO=$repo NVFRESH_TIDY_BUILD=$build NVFRESH_TIDY_CACHE_DIR=$cache
  export NVFRESH_TIDY_VERSION=$version NVFRESH_TIDY_BINARY=$real_binary NVFRESH_TIDY_CLANG=$clang
  NVFRESH_TIDY_RUNNER=$(realpath -m "$(command -v "$run_clang_tidy" || echo "$run_clang_tidy")")
  NVFRESH_TIDY_SCRIPT=$(realpath "$0")
  export NVFRESH_TIDY_RUNNER NVFRESH_TIDY_SCRIPT NVFRESH_TIDY_C_CONFIG=$c_config
  export NVFRESH_TIDY_JOBS=$jobs
  export NVFRESH_TIDY_CPP_REGEX=$cpp_regex NVFRESH_TIDY_C_REGEX=$c_regex
  export NVFRESH_TIDY_RECORDS=$work/records
  mkdir -p "$work/state" "$work/records" "$work/bin"
  if python3 -c "$k_tidy_cache_py" keys "$work/state" >"$work/keys"; then
    read -r from_cache to_run key_seconds <"$work/keys"
    cpp_regex=$(<"$work/state/cpp_regex")
    c_regex=$(<"$work/state/c_regex")
    printf '%s\n' "$k_tidy_wrapper" >"$work/bin/clang-tidy"
    chmod +x "$work/bin/clang-tidy"
    runs_binary=$work/bin/clang-tidy
    echo "check_tidy: tidy cache $cache: $from_cache files clean from earlier runs, $to_run to run" \
      "(keys in $key_seconds s)"
  else
    echo "check_tidy: tidy cache off: computing the keys failed (above)" >&2
    cache=off
  fi
fi

status=0
: >"$log"
if [ "$cpp_regex" != '^$' ]; then
  "$run_clang_tidy" -clang-tidy-binary "$runs_binary" -p "$build" -j "$jobs" -quiet \
    "$cpp_regex" >"$log" 2>&1 || status=1
fi
if [ "$c_regex" != '^$' ]; then
  "$run_clang_tidy" -clang-tidy-binary "$runs_binary" -p "$build" -j "$jobs" -quiet \
    -config="$c_config" "$c_regex" >>"$log" 2>&1 || status=1
fi
if [ "$cache" != off ] && ((to_run > 0)); then
  python3 -c "$k_tidy_cache_py" mark "$work/state" "$work/records" ||
    echo "check_tidy: storing the clean verdicts in the tidy cache failed (above)" >&2
fi

if ((status != 0)) || grep -qE '(warning|error): ' "$log"; then
  # (the wrapper's path shown as the clang-tidy it runs, as without the cache)
  shown=$(printf '%s' "$binary" | sed 's/[#&\\]/\\&/g')
  sed -r -e 's/\x1b\[[0-9;]*m//g' -e "s#$work/bin/clang-tidy#$shown#" "$log" | grep -vE '^(clang-tidy|Enabled checks|Running clang-tidy|[0-9]+ warnings? (and [0-9]+ errors? )?generated|Suppressed|Use -header-filter)' >&2
  echo "check_tidy: clang-tidy found the problems above in $files files; fix them (or, for a check that is wrong for this code, leave it out in .clang-tidy and say why there)" >&2
  exit 1
fi
if [ "$cache" != off ]; then
  echo "check_tidy: $files files of lib/ and launcher/ clean ($from_cache from the tidy cache, $to_run run)"
else
  echo "check_tidy: $files files of lib/ and launcher/ clean"
fi
