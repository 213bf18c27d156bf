"""A real BuildGrid server on 127.0.0.1 for the remote cache's tests and bench/remote_cache.py
(stdlib only): BuildGrid 0.4.4 from PyPI in <repo>/.venv-buildgrid (scripts/install_test_tools.sh),
CAS + ByteStream + ActionCache on disk storage, started on a free port and stopped by its PID.
"""
import base64
import hashlib
import hmac
import json
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
{channel}
{authorization}
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


INSECURE_CHANNEL = "    insecure-mode: true"
TLS_CHANNEL = """\
    insecure-mode: false
    credentials:
      tls-server-key: {key}
      tls-server-cert: {cert}
      tls-client-certs: {client_certs}"""
# BuildGrid's JWT authorization: every call must carry "authorization: Bearer <JWT>", the JWT
# signed with HMAC-SHA-256 by the secret in the file (jwt_token() makes one).
JWT_AUTHORIZATION = """\
authorization:
  method: jwt
  secret: {secret}
  algorithm: hs256"""


def jwt_token(secret, subject="ci", lifetime=3600):
    """A JWT (HS256) BuildGrid's JWT authorization accepts: {sub, exp}, signed with `secret`."""
    def part(data):
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
    header = part(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = part(json.dumps({"sub": subject, "exp": int(time.time()) + lifetime}).encode())
    signature = hmac.new(secret.encode(), f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{part(signature)}"


class BuildGridServer:
    """`bgd server start` on a free loopback port, with disk storage under `work`.

    jwt_secret: calls must carry a JWT signed with it (jwt_token). tls: {"key", "cert",
    "client_certs"} PEM files: TLS (grpcs://), a client certificate signed by client_certs
    required."""

    def __init__(self, work, jwt_secret=None, tls=None):
        self.port = free_port()
        self.dir = Path(work) / f"bgd-{self.port}"
        self.dir.mkdir(parents=True)
        authorization = ""
        if jwt_secret is not None:
            (self.dir / "jwt.secret").write_text(jwt_secret)
            authorization = JWT_AUTHORIZATION.format(secret=self.dir / "jwt.secret")
        channel = TLS_CHANNEL.format(**tls) if tls else INSECURE_CHANNEL
        (self.dir / "bgd.yml").write_text(CONFIG.format(port=self.port, storage=self.dir / "cas",
                                                        channel=channel,
                                                        authorization=authorization))
        self.log = open(self.dir / "bgd.log", "wb")
        self.process = subprocess.Popen([str(BGD), "server", "start", "bgd.yml"], cwd=self.dir,
                                        stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        while not port_open(self.port):  # no time limit: a server that dies ends the wait
            if self.process.poll() is not None:
                raise AssertionError(f"bgd exited with {self.process.returncode}:\n"
                                     f"{(self.dir / 'bgd.log').read_text(errors='replace')}")
            time.sleep(0.1)
        self.url = f"{'grpcs' if tls else 'grpc'}://127.0.0.1:{self.port}"

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait()
        self.log.close()
