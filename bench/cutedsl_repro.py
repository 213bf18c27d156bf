#!/usr/bin/env python3
"""Runs `nvfresh repro --artifact` on the CuTe DSL's Blackwell FMHA compile (issue 15), for each DSL version.

For each version (default 4.7.1 and 4.8.1) it installs `nvidia-cutlass-dsl[cu13]==<version>` into its
own venv (<repo>/.venv-cutedsl-<version>, gitignored; reused when there), writes a compile script,
and runs two experiments, both compile-only (fake tensors, sm_100a, no GPU needed):

  across processes  one full cute.compile per run; `nvfresh repro` as it comes (run count from
                    --detect/--confidence, ASLR control, heap noise, private directories and caches)
                    digests the *.ptx and *.cubin the DSL keeps in the run's working directory
  in one process    each run captures the MLIR module once and re-runs it through the DSL's pass
                    pipeline K times with nvfresh.repro.repeat (heap noise between the repeats), each
                    repeat dumping PTX and cubin into its nvfresh-sample-<i>/ directory

and prints both verdicts per version, the runs and samples needed, and the time per run and sample.

The FMHA example is CUTLASS's examples/python/CuTeDSL/cute/blackwell/kernel/attention/fmha (fmha.py
and helpers/fmha_helpers.py); give the examples/python/CuTeDSL directory of a CUTLASS v4.7.x checkout
with --examples. No Debian or PyPI package carries it: the nvidia-cutlass wheel (4.2.0.0, no sdist)
has only examples/python/CuTeDSL/cute/ffi and notebooks, and the DSL wheels (nvidia-cutlass-dsl,
-libs-base, -libs-core, -libs-cu12, -libs-cu13) and nvidia-cutlass-operators have no examples. One
way: git clone --branch v4.7.0 --depth 1 https://github.com/NVIDIA/cutlass, then
--examples cutlass/examples/python/CuTeDSL.

  nice -n 19 python3 bench/cutedsl_repro.py --examples /path/to/cutlass/examples/python/CuTeDSL

Python: 3.13 (what the measurements in shared/notes/cutedsl-nondeterminism.md used) from pyenv or
PATH, else python3.11 or python3 (the DSL supports 3.10 to 3.14); --python picks one.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The compile script each run executes. It stubs torch (the example imports it for its run() only),
# builds the FMHA kernel as the report did (causal window mask, head dim 128, fp16 in, fp32
# accumulators) and compiles it for sm_100a with fake tensors.
COMPILE_SCRIPT = r'''
import os, re, sys, types

os.environ.setdefault("CUTE_DSL_ARCH", "sm_100a")
os.environ["CUDA_VISIBLE_DEVICES"] = ""
EXAMPLES = os.environ["CUTLASS_EXAMPLES"]
FMHA_DIR = os.path.join(EXAMPLES, "cute/blackwell/kernel/attention/fmha")


class _Stub:
    def __init__(self, name="torch"): self._n = name
    def __getattr__(self, a):
        if a.startswith("__") and a.endswith("__"):
            raise AttributeError(a)
        return _Stub(self._n + "." + a)
    def __call__(self, *a, **k): return _Stub(self._n + "()")
    def __getitem__(self, k): return _Stub(self._n + "[]")
    def __hash__(self): return hash(self._n)
    def __eq__(self, o): return isinstance(o, _Stub) and o._n == self._n
    def __bool__(self): return False


class _StubModule(types.ModuleType):
    def __getattr__(self, a):
        if a.startswith("__") and a.endswith("__"):
            raise AttributeError(a)
        return _Stub("torch." + a)


for name in ("torch", "torch.cuda", "torch.utils", "torch.utils.dlpack"):
    module = _StubModule(name)
    module.__path__ = []
    sys.modules.setdefault(name, module)
sys.path[:0] = [FMHA_DIR, EXAMPLES]


def build_and_compile(extra_options=""):
    import cutlass.cute as cute
    from cutlass.cute.typing import Int32, Float32, Float16
    from helpers import fmha_helpers
    import fmha

    kernel = fmha.BlackwellFusedMultiHeadAttentionForward(
        Float32, Float32, (128, 128), 128, False, fmha_helpers.MaskEnum.WINDOW_MASK_INFERENCE, False, False)

    def fake():
        shape = tuple(cute.sym_int() for _ in range(4)) + (128,)
        stride = tuple(cute.sym_int64(divisibility=8) for _ in range(4)) + (1,)
        return cute.runtime.make_fake_tensor(Float16, shape, stride, assumed_align=32)

    q, k, v, o = fake(), fake(), fake(), fake()
    return cute.compile(kernel, q, k, v, o, tuple(Int32(1) for _ in range(8)), None, None, None, None,
                        Float32(1.0), Float32(1.0), Float32(1.0), None, None, Int32(0), None, None,
                        cute.runtime.make_fake_stream(), False,
                        options="--gpu-arch=sm_100a --opt-level=2 " + extra_options)


def capture_pipeline():
    """The MLIR module and pass pipeline cute.compile hands the compiler, captured once."""
    import cutlass.base_dsl.compiler as compiler
    captured = []
    original = compiler.Compiler.compile

    def capture(self, module, pipeline, *args, **kwargs):
        if not captured:
            captured.append((module.operation.get_asm(print_generic_op_form=True), pipeline))
        return original(self, module, pipeline, *args, **kwargs)

    compiler.Compiler.compile = capture
    build_and_compile()
    compiler.Compiler.compile = original
    text, pipeline = captured[0]
    return text, re.sub(r"\s*dump-ptx-path='[^']*'", "", pipeline).strip()


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--samples":
        import nvfresh.repro
        from cutlass._mlir import ir, passmanager
        text, pipeline = capture_pipeline()

        def compile_once(directory):
            stem = os.path.join(str(directory), "kernel")
            with ir.Context() as context:
                context.enable_multithreading(False)
                module = ir.Module.parse(text)
                passmanager.PassManager.parse(
                    pipeline[:-2] + f" dump-ptx-path='{stem}' dump-cubin-path='{stem}'" + "})").run(module.operation)

        nvfresh.repro.repeat(compile_once, samples=int(sys.argv[2]))
    else:
        build_and_compile("--keep-ptx --keep-cubin --dump-dir=" + os.getcwd())


main()
'''


def find_python(choice):
    if choice:
        return choice
    candidates = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.13*/bin/python3.13")))
    candidates += [shutil.which(name) for name in ("python3.13", "python3.11", "python3")]
    return next(c for c in candidates if c)


def ensure_venv(python, version, root):
    venv = root / f".venv-cutedsl-{version}"
    interpreter = venv / "bin" / "python"
    if interpreter.exists() and subprocess.run([interpreter, "-c", "import cutlass"], capture_output=True).returncode == 0:
        return interpreter, 0.0
    start = time.monotonic()
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    subprocess.run([interpreter, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    f"nvidia-cutlass-dsl[cu13]=={version}"], check=True)
    return interpreter, time.monotonic() - start


def nvvm_release(report):
    """The compiler's release line from variant 1's PTX header ("release 13.3, V13.3.27")."""
    for ptx in Path(report["variants"][0]["kept"]).rglob("*.ptx") if report.get("variants") else []:
        for line in ptx.read_text(errors="replace").splitlines()[:12]:
            if "Cuda compilation tools" in line:
                return line.split("tools,", 1)[-1].strip()
    return "?"


def run_repro(args, label, command, out, env, runs):
    repro = [args.nvfresh, "repro", "-j", str(args.jobs), "--out", str(out), "--json", "--artifact", "*.ptx",
             "--artifact", "*.cubin"]
    repro += ["-n", str(runs)] if runs else ["--detect", str(args.detect), "--confidence", str(args.confidence)]
    start = time.monotonic()
    result = subprocess.run(repro + ["--", *command], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    elapsed = time.monotonic() - start  # reported only when repro gave no report
    (out.parent / f"{out.name}.stderr").write_text(result.stderr)
    if not result.stdout.strip().startswith("{"):
        return {"label": label, "error": result.stderr.strip()[-2000:], "seconds": elapsed}
    report = json.loads(result.stdout)
    report.update(label=label)
    return report


def short(path):
    """The DSL's artifact names are about 200 characters: keep their end (".sm_100a.ptx")."""
    return path if len(path) <= 24 else "..." + path[-20:]


def summarize(version, report, samples):
    if "error" in report:
        return f"{version:<7} {report['label']:<17} ERROR: {report['error']}"
    runs = report["runs"]
    failed = sum(1 for r in runs if r["failed"])
    variants = report["variants"]
    seconds = sorted(r["seconds"] for r in runs) or [0.0]
    per_run = sum(seconds) / len(seconds)
    median = seconds[len(seconds) // 2]
    line = (f"{version:<7} {report['label']:<17} runs {len(runs)} ({failed} failed)"
            + (f" x {samples} samples" if samples else "") + f": {len(variants)} variant{'s' if len(variants) != 1 else ''}")
    if len(variants) > 1:
        for variant in variants[1:]:
            where = (f"{len(variant['samples'])} samples in runs {variant['runs']}" if samples
                     else f"runs {variant['runs']}")
            line += f"\n{'':<26}variant {variant['variant']}: {where}"
            for artifact in variant.get("artifacts", []):
                for component in artifact.get("comparison", {}).get("components", []):
                    if component["status"] == "same":
                        continue
                    detail = ""
                    if component.get("ptx_changed_lines"):
                        detail = f": {component['ptx_changed_lines']} changed lines, register numbers factored out"
                    kernels = component.get("kernels", [])
                    if kernels and kernels[0].get("a") and kernels[0].get("b"):
                        a, b = kernels[0]["a"], kernels[0]["b"]
                        detail += f"; kernel instructions {a['instructions']} -> {b['instructions']}"
                        if a.get("registers") is not None:
                            detail += f", registers {a['registers']} -> {b['registers']}"
                    line += f"\n{'':<28}{short(artifact['path'])} ({component['key']}) differs{detail}"
    elif report.get("ruled_out"):
        line += f"\n{'':<26}{report['ruled_out']}"
    timing = (f"{median:.1f} s per run (median; mean {per_run:.1f}, {seconds[0]:.1f} to {seconds[-1]:.1f})"
              + (f", {median / samples:.2f} s per sample" if samples else ""))
    line += f"\n{'':<26}{timing}; wall {report['wall_seconds'] / 60:.1f} min at -j {report['jobs']}; exit {report['exit_code']}"
    line += f"; PTX from {nvvm_release(report)}"
    return line


def print_summary(directory, args):
    for version in args.versions:
        for name, label, samples in (("cross", "across processes", 0), ("in-process", "in one process", args.samples)):
            path = directory / f"{version}-{name}" / "report.json"
            if path.is_file():
                report = json.loads(path.read_text())
                report["label"] = label
                print(summarize(version, report, samples))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", help="examples/python/CuTeDSL of a CUTLASS v4.7.x checkout (required to run)")
    parser.add_argument("--versions", nargs="+", default=["4.7.1", "4.8.1"])
    parser.add_argument("--runs", type=int, help="cross-process runs (default: from --detect/--confidence)")
    parser.add_argument("--detect", type=float, default=0.05)
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--in-process-runs", type=int, default=2)
    parser.add_argument("--samples", type=int, default=60, help="repeats per in-process run (the note: >= 60)")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--python", help="the interpreter for the venvs (default: 3.13, else 3.11)")
    parser.add_argument("--nvfresh", default=str(ROOT / "build" / "bin" / "nvfresh"))
    parser.add_argument("--skip", choices=["cross", "in-process"], action="append", default=[])
    parser.add_argument("--out", help="keep the reports and variants here (default: a temporary directory, removed)")
    parser.add_argument("--summarize", metavar="DIR", help="print the summary of an earlier run's --out DIR and stop")
    args = parser.parse_args()
    if args.summarize:
        return print_summary(Path(args.summarize), args)
    if not args.examples:
        parser.error("--examples DIR is required (see --help for where to get it)")
    examples = Path(args.examples).resolve()
    if not (examples / "cute/blackwell/kernel/attention/fmha/fmha.py").is_file():
        sys.exit(f"cutedsl_repro: {examples} has no cute/blackwell/kernel/attention/fmha/fmha.py; give the "
                 "examples/python/CuTeDSL directory of a CUTLASS v4.7.x checkout (see --help)")
    python = find_python(args.python)
    work = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="nvfresh-cutedsl-"))
    work.mkdir(parents=True, exist_ok=True)
    script = work / "compile_fmha.py"
    script.write_text(COMPILE_SCRIPT)
    env = dict(os.environ, CUTLASS_EXAMPLES=str(examples), PYTHONPATH=str(ROOT / "python"))
    print(f"python {subprocess.run([python, '--version'], capture_output=True, text=True).stdout.strip()}; "
          f"examples {examples}; nvfresh {args.nvfresh}", flush=True)
    lines = []
    for version in args.versions:
        interpreter, install_seconds = ensure_venv(python, version, ROOT)
        print(f"{version}: venv {interpreter.parent.parent} ({'installed in %.0f s' % install_seconds if install_seconds else 'present'})",
              flush=True)
        if "cross" not in args.skip:
            report = run_repro(args, "across processes", [str(interpreter), str(script)], work / f"{version}-cross", env, args.runs)
            lines.append(summarize(version, report, 0))
            print(lines[-1], flush=True)
        if "in-process" not in args.skip:
            report = run_repro(args, "in one process", [str(interpreter), str(script), "--samples", str(args.samples)],
                               work / f"{version}-in-process", env, args.in_process_runs)
            lines.append(summarize(version, report, args.samples))
            print(lines[-1], flush=True)
    print("\nsummary\n" + "\n".join(lines))
    if args.out:
        print(f"kept: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
