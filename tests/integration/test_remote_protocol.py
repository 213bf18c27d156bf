"""The launcher's contract with nvfresh-remote (lib/protocol/remote_protocol.hpp), from the helper's
side: a request of another protocol version is refused with one line and exit 3 (which the
launcher counts as a remote failure: tests/unit/cache/test_remote_cache.cpp), a request missing a
member names it, and a result that claims an output larger than nvfresh ever writes, or whose bytes
never come, ends within the call deadline with one line, whatever size the server claims
(fake_reapi.py's huge and stall faults, run by the Python of BuildGrid's venv).
"""
import concurrent.futures
import json
import os
import re
import socket
import subprocess
import unittest
import uuid
from pathlib import Path

import harness
from test_remote_faults import PYTHON, FakeServer

HELPER = harness.build_dir() / "bin" / "nvfresh-remote"
CODEC = harness.source_dir() / "lib" / "protocol" / "remote_protocol.hpp"
VERSION = int(re.search(r"k_helper_protocol_version = (\d+);", CODEC.read_text()).group(1))
WRONG_VERSION = 3


def action(salt):
    return {"salt": salt, "arguments": ["/bin/true", "k.c"], "environment": {"A": "1"},
            "working_directory": "", "output_paths": ["k.o"], "input_files": {},
            "input_blobs": {"k.c": "int k;"}}


def base(url="grpc://127.0.0.1:1", **extra):
    return {"protocol_version": VERSION, "remote": url, "instance": "", "call_deadline_ms": 1000,
            "connect_deadline_ms": 1000, "digest_cache": "", **extra}


class HelperCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not HELPER.exists():
            harness.fail_under_ci_else_skip(
                f"{HELPER} is not built (-DNVFRESH_REMOTE_CACHE=OFF?): the helper's protocol tests "
                "did NOT run")

    def setUp(self):
        self.work = Path(harness.make_workdir("nvfresh-protocol-"))

    def helper(self, verb, request):
        """(exit status, stderr lines) of one helper run on `request`."""
        file = self.work / f"request-{uuid.uuid4().hex}.json"
        file.write_text(json.dumps(request))
        result = harness.run([str(HELPER), verb, str(file)])
        return result.returncode, result.stderr.decode(errors="replace").splitlines()


class Requests(HelperCase):
    def test_a_request_of_another_version_is_refused_with_one_line(self):
        get = base(get=action("s"), out_dir=str(self.work))
        for version in (VERSION + 1, None):
            request = dict(get)
            if version is None:  # an nvfresh from before the version
                del request["protocol_version"]
            else:
                request["protocol_version"] = version
            status, lines = self.helper("get", request)
            self.assertEqual(status, WRONG_VERSION, lines)
            self.assertEqual(len(lines), 1, lines)
            self.assertIn(f"protocol version {version or 0}, this nvfresh-remote speaks version "
                          f"{VERSION}", lines[0])

    def test_a_missing_member_is_named(self):
        get = base(get=action("s"), out_dir=str(self.work))
        del get["get"]["salt"]
        status, lines = self.helper("get", get)
        self.assertEqual((status, lines), (2, ["nvfresh-remote: request.get.salt is missing"]))

    def test_a_request_for_the_other_verb_is_refused(self):
        status, lines = self.helper("put", base(get=action("s"), out_dir=str(self.work)))
        self.assertEqual((status, lines), (2, ["nvfresh-remote: the request is for get, not put"]))


class Serve(HelperCase):
    """`nvfresh-remote serve` (lib/protocol/helper_socket.hpp): the launcher's listening socket as
    descriptor 3, a pipe as stdin; each call answered as the one-shot helper answers it."""

    def setUp(self):
        super().setUp()
        self.name = f"nvfresh-test-{os.getpid()}-{uuid.uuid4().hex}"
        listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listening.bind("\0" + self.name)
        listening.listen(8)
        lifeline_read, self.lifeline = os.pipe()

        def descriptors():
            os.dup2(lifeline_read, 0)
            os.dup2(listening.fileno(), 3)

        self.helper_process = subprocess.Popen([str(HELPER), "serve"], preexec_fn=descriptors,
                                               pass_fds=(3,))
        listening.close()  # only the helper holds it: calls after its end are refused
        os.close(lifeline_read)
        self.addCleanup(self.end_helper)

    def end_helper(self):
        if self.lifeline is not None:
            os.close(self.lifeline)
            self.lifeline = None
        return self.helper_process.wait()

    def call(self, verb, request):
        """(status, stderr lines) of one call on the socket."""
        tag = uuid.uuid4().hex
        files = {name: self.work / f"{tag}.{name}" for name in ("request", "stdout", "stderr")}
        files["request"].write_text(json.dumps(request))
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect("\0" + self.name)
            client.sendall((json.dumps({"verb": verb, **{k: str(v) for k, v in files.items()}})
                            + "\n").encode())
            answer = client.makefile().readline()
        return int(answer), files["stderr"].read_text().splitlines()

    def test_calls_are_answered_as_the_one_shot_helper_answers_them(self):
        wrong = base(get=action("s"), out_dir=str(self.work), protocol_version=VERSION + 1)
        status, lines = self.call("get", wrong)
        self.assertEqual((status, len(lines)), (WRONG_VERSION, 1), lines)
        self.assertEqual((status, lines), self.helper("get", wrong))
        other_verb = base(get=action("s"), out_dir=str(self.work))
        self.assertEqual(self.call("put", other_verb),
                         (2, ["nvfresh-remote: the request is for get, not put"]))
        # No server on port 1: an error of the remote, in one line, from each.
        status, lines = self.call("get", other_verb)
        self.assertEqual((status, len(lines)), (2, 1), lines)

    def test_calls_at_once_are_each_answered_and_stdin_s_end_ends_it(self):
        request = base(get=action("s"), out_dir=str(self.work), protocol_version=VERSION + 1)
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            answers = list(pool.map(lambda _: self.call("get", request)[0], range(8)))
        self.assertEqual(answers, [WRONG_VERSION] * 8)
        self.assertEqual(self.end_helper(), 0)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            with self.assertRaises(ConnectionRefusedError):
                client.connect("\0" + self.name)

    def test_a_call_that_breaks_the_contract_is_status_2(self):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect("\0" + self.name)
            client.sendall(b'{"verb": "get"}\n')
            self.assertEqual(client.makefile().readline(), "2\n")


class ClaimedSizes(HelperCase):
    """A result whose output the server claims to be larger than it sends."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if not PYTHON.exists():
            harness.fail_under_ci_else_skip(
                f"BuildGrid's venv is not installed ({PYTHON}): run scripts/install_test_tools.sh; "
                "the helper's claimed-size tests did NOT run")

    def stored_then_fetched(self, fault):
        """Uploads one result to a fake server with `fault`, then fetches it: (status, lines, s)."""
        server = FakeServer(self.work, fault)
        self.addCleanup(server.stop)
        files = {name: self.work / name for name in ("object", "stdout", "stderr")}
        for name, path in files.items():
            path.write_bytes(f"{name} of {self.id()}\n".encode())
        spec = action(f"test/{uuid.uuid4().hex}")
        put = base(server.url, put=[{"action": spec, "outputs": {"k.o": str(files["object"])},
                                     "stdout": str(files["stdout"]),
                                     "stderr": str(files["stderr"])}])
        status, lines = self.helper("put", put)
        self.assertEqual(status, 0, lines)
        out = self.work / "out"
        out.mkdir()
        result = self.helper("get", base(server.url, get=spec, out_dir=str(out)))
        self.assertFalse((out / "result.json").exists())
        return result

    def test_an_output_larger_than_nvfresh_writes_is_refused_before_reading(self):
        status, lines = self.stored_then_fetched("huge")
        self.assertEqual(status, 2, lines)
        self.assertEqual(len(lines), 1, lines)
        self.assertIn(f"a blob of {5 << 30} bytes, more than nvfresh ever writes", lines[0])

    def test_a_stalled_read_ends_at_the_call_deadline_whatever_size_is_claimed(self):
        # Before, the read's deadline grew with the claimed size: 1 s x (1 + 1 GiB / 8 MiB) = 129 s,
        # ending in DEADLINE_EXCEEDED. The guard's words say it ended the read: no data for one
        # call deadline (no wall-clock limit here; the words are the proof).
        status, lines = self.stored_then_fetched("stall")
        self.assertEqual(status, 2, lines)
        self.assertEqual(lines, ["nvfresh-remote: ByteStream.Read: no data for 1000 ms"])


if __name__ == "__main__":
    harness.main()
