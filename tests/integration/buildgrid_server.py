"""A real BuildGrid server on 127.0.0.1 for the remote cache's tests and bench/remote_cache.py
(stdlib only): BuildGrid 0.4.4 from PyPI in <repo>/.venv-buildgrid (scripts/install_test_tools.sh),
CAS + ByteStream + ActionCache on disk storage, started on a free port and stopped by its PID.
"""
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

SOURCE_DIR = Path(os.environ.get("NVFRESH_SOURCE_DIR") or Path(__file__).resolve().parents[2])
BGD = SOURCE_DIR / ".venv-buildgrid" / "bin" / "bgd"

CONFIG = """\
server:
  - !channel
    address: "127.0.0.1:{port}"
    insecure-mode: true
storages:
  - !disk-storage &cas
    path: {storage}
caches:
  - !lru-action-cache &ac
    storage: *cas
    max-cached-refs: 100000
    allow-updates: true
    cache-failed-actions: false
instances:
  - name: ""
    services:
      - !cas
        storage: *cas
      - !bytestream
        storage: *cas
      - !action-cache
        cache: *ac
"""
# What BuildGrid 0.4.4 answers in Capabilities (max_batch_total_size_bytes): a larger blob must go
# through ByteStream.
BATCH_LIMIT = 4193280


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


class BuildGridServer:
    """`bgd server start` on a free loopback port, with disk storage under `work`."""

    def __init__(self, work):
        self.port = free_port()
        self.dir = Path(work) / f"bgd-{self.port}"
        self.dir.mkdir(parents=True)
        (self.dir / "bgd.yml").write_text(CONFIG.format(port=self.port, storage=self.dir / "cas"))
        self.log = open(self.dir / "bgd.log", "wb")
        self.process = subprocess.Popen([str(BGD), "server", "start", "bgd.yml"], cwd=self.dir,
                                        stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        while not port_open(self.port):  # no time limit: a server that dies ends the wait
            if self.process.poll() is not None:
                raise AssertionError(f"bgd exited with {self.process.returncode}:\n"
                                     f"{(self.dir / 'bgd.log').read_text(errors='replace')}")
            time.sleep(0.1)
        self.url = f"grpc://127.0.0.1:{self.port}"

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait()
        self.log.close()
