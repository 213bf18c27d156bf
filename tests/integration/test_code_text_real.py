"""code_text (lib/cache/code_text.hpp) on real headers, checked against GCC's own comment removal.

For every header of CUTLASS (include/: the nvidia-cutlass wheel that scripts/install_cutlass.sh
installs) and of the CUDA toolkit's include/ (CCCL's cub, thrust and libcu++ among them):
`g++ -fpreprocessed -E`, which takes out comments and nothing else and keeps every line, gives the
same text for the header and for its code text. So the code text took out comments only (no code,
no line) and left every token on its line and column. A header the lexer does not judge is
compared by its bytes (sound, and a miss); most must be judged.
"""
import os
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import harness

HEADER_SUFFIXES = (".h", ".hpp", ".cuh", ".inl", ".hxx")


def headers_under(root):
    return sorted(p for p in Path(root).rglob("*") if p.suffix in HEADER_SUFFIXES and p.is_file()
                  and not p.is_symlink())


def gcc_without_comments(text):
    """What GCC's preprocessor makes of `text` when told it is preprocessed already: comments out."""
    result = subprocess.run(["g++", "-x", "c++", "-fpreprocessed", "-E", "-w", "-"], input=text,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return result.returncode, result.stdout


class CodeTextAgainstGcc(harness.unittest.TestCase):

    def check_headers(self, headers, at_least_judged):
        tool = harness.tool_path("code_text_tool")
        with tempfile.TemporaryDirectory(prefix="nvfresh-code-text-") as out:
            listing = harness.run([str(tool), out] + [str(h) for h in headers], check=True)
            judged = [int(line.split()[0]) for line in listing.stdout.decode().splitlines()
                      if line.endswith(" judged")]

            def differs(n):
                original = headers[n].read_bytes()
                code = (Path(out) / str(n)).read_bytes()
                if gcc_without_comments(original) != gcc_without_comments(code):
                    return str(headers[n])
                return None

            with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
                differing = [path for path in pool.map(differs, judged) if path]
        self.assertEqual(differing, [], "code_text took out more than comments")
        self.assertGreaterEqual(len(judged) / len(headers), at_least_judged,
                                f"{len(judged)} of {len(headers)} headers judged")

    def test_cutlass_headers(self):
        cutlass = harness.install_cutlass()
        headers = headers_under(cutlass / "include")
        self.assertGreater(len(headers), 500)
        self.check_headers(headers, 0.9)

    def test_cuda_toolkit_headers(self):
        nvcc = harness.require_nvcc()
        include = harness.nvcc_include_dir(nvcc)
        headers = headers_under(include)
        self.assertGreater(len(headers), 100)
        self.check_headers(headers, 0.9)


if __name__ == "__main__":
    harness.main()
