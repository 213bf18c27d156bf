#!/usr/bin/env python3
"""Fails when an #include in lib/ or launcher/ points upward (or sideways) in nvfresh's layers.

Each folder of lib/ has a level; a file may include headers of its own folder and of folders with a
lower level, never of its own level or above. The order below is the architecture, lowest first:
generic code at the bottom, the orchestrator and the subcommands at the top. A new folder must be
given a level here (the check fails on a folder it does not know).

Inside a folder the modules (x.hpp with x.cpp) must be ordered too: a module that includes another
of its folder sits above it, so no include may lead back, directly or through other modules, to the
module it came from (an include cycle: object_cache.hpp including remote_cache.hpp while
remote_cache.cpp includes object_cache.hpp). Each cycle is named once, by the modules on it.

Usage: scripts/check_layering.py [repo root]     exit 0 clean, 1 upward includes found
"""
import re
import sys
from pathlib import Path

LEVELS = {
    "util": 0,       # generic: files, processes, hashing, text fields; knows nothing about nvcc
    "outcome": 1,
    "protocol": 1,   # the launcher's contract with nvfresh-remote (JSON, no gRPC): both sides link it    # the named outcome model every other layer reports in
    "nvcc": 2,       # nvcc's command line, its option table, its version
    "trace": 2,      # the LD_PRELOAD tracer and its reader
    "digest": 2,     # normalized digests of objects, fatbins, cubins, PTX
    "config": 2,     # NVFRESH_* settings and the config file
    "reapi": 2,      # the remote cache's REAPI client (gRPC), linked into nvfresh-remote only
    "record": 3,     # what nvfresh stores per build tree: records, link records, events, signature
    "freshness": 4,  # one record compared with the disk
    "proof": 5,      # a whole tree judged: objects, build graph, linked artifacts
    "repro": 5,      # compiling one TU many times under perturbation
    "cache": 5,      # the content-addressed object cache
    "space": 5,      # disk space: build trees, footprints, full file systems
    "step": 6,       # the step cache: cicc and ptxas runs keyed, served or run and stored
    "compile": 7,    # one compile end to end (the orchestrator)
    "report": 7,     # `nvfresh report`: the records, artifacts and events gathered into one view
    "doctor": 8,     # the setup checks of `nvfresh doctor` (they run a compile)
    "commands": 9,   # the subcommands
    "launcher": 10,  # main()
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def module_of(path):
    """A module of a folder: x.hpp and x.cpp (and x.c, x.h) are one."""
    return path.with_suffix("").name


def cycles_in(graph):
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def arrows_back_up(includes_by_file, root):
    """One line per include cycle among the modules of one folder."""
    graphs = {}  # folder -> module -> modules of the folder it includes
    for path, (folder, included) in includes_by_file.items():
        graph = graphs.setdefault(folder, {})
        node = graph.setdefault(module_of(path), set())
        for name in included:
            parts = name.split("/")
            if len(parts) == 2 and parts[0] == folder:
                target = Path(parts[1]).with_suffix("").name
                if target != module_of(path):
                    node.add(target)
    problems = []
    for folder in sorted(graphs):
        graph = graphs[folder]
        for component in cycles_in(graph):
            members = set(component)
            edges = sorted(f"{a} -> {b}" for a in component for b in sorted(graph[a]) if b in members)
            problems.append(f"{folder}/: an arrow back up inside the folder: the modules "
                            f"{', '.join(component)} include each other ({'; '.join(edges)})")
    return problems


def folder_of(path, root):
    relative = path.relative_to(root)
    if relative.parts[0] == "launcher":
        return "launcher"
    return relative.parts[1] if len(relative.parts) > 2 else None


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])
    problems = []
    includes_by_file = {}
    sources = [p for d in ("lib", "launcher") for p in (root / d).rglob("*")
               if p.suffix in (".cpp", ".hpp", ".c", ".h")]
    for path in sorted(sources):
        folder = folder_of(path, root)
        if folder not in LEVELS:
            problems.append(f"{path.relative_to(root)}: folder '{folder}' has no level in {__file__}")
            continue
        includes = INCLUDE.findall(path.read_text(errors="replace"))
        if folder != "launcher":
            includes_by_file[path] = (folder, includes)
        for included in includes:
            target = included.split("/")[0] if "/" in included else None
            if target is None:
                problems.append(f"{path.relative_to(root)}: includes \"{included}\" without its folder")
            elif target not in LEVELS:
                problems.append(f"{path.relative_to(root)}: includes \"{included}\", folder '{target}' has no level")
            elif target != folder and LEVELS[target] >= LEVELS[folder]:
                problems.append(f"{path.relative_to(root)}: includes \"{included}\": {folder} (level "
                                f"{LEVELS[folder]}) may not include {target} (level {LEVELS[target]})")
    problems += arrows_back_up(includes_by_file, root)
    for problem in problems:
        print(f"check_layering: {problem}", file=sys.stderr)
    if not problems:
        print(f"check_layering: {len(sources)} files, no upward include, no include cycle inside a "
              "folder")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
