"""The launcher's contract with nvfresh-remote (lib/protocol/remote_protocol.hpp), from the helper's
side: a request of another protocol version is refused with one line and exit 3 (which the
launcher counts as a remote failure: tests/unit/cache/test_remote_cache.cpp), and a request missing
a member names it.
"""
import json
import re
import time
import unittest
import uuid
from pathlib import Path

import harness

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
        """(exit status, stderr lines, seconds) of one helper run on `request`."""
        file = self.work / f"request-{uuid.uuid4().hex}.json"
        file.write_text(json.dumps(request))
        start = time.monotonic()
        result = harness.run([str(HELPER), verb, str(file)])
        lines = result.stderr.decode(errors="replace").splitlines()
        return result.returncode, lines, time.monotonic() - start


class Requests(HelperCase):
    def test_a_request_of_another_version_is_refused_with_one_line(self):
        get = base(get=action("s"), out_dir=str(self.work))
        for version in (VERSION + 1, None):
            request = dict(get)
            if version is None:  # an nvfresh from before the version
                del request["protocol_version"]
            else:
                request["protocol_version"] = version
            status, lines, _ = self.helper("get", request)
            self.assertEqual(status, WRONG_VERSION, lines)
            self.assertEqual(len(lines), 1, lines)
            self.assertIn(f"protocol version {version or 0}, this nvfresh-remote speaks version "
                          f"{VERSION}", lines[0])

    def test_a_missing_member_is_named(self):
        get = base(get=action("s"), out_dir=str(self.work))
        del get["get"]["salt"]
        status, lines, _ = self.helper("get", get)
        self.assertEqual((status, lines), (2, ["nvfresh-remote: request.get.salt is missing"]))

    def test_a_request_for_the_other_verb_is_refused(self):
        status, lines, _ = self.helper("put", base(get=action("s"), out_dir=str(self.work)))
        self.assertEqual((status, lines), (2, ["nvfresh-remote: the request is for get, not put"]))


if __name__ == "__main__":
    harness.main()
