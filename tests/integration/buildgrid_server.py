"""Real BuildGrid servers on 127.0.0.1 for the remote cache's tests and bench/remote_cache.py
(stdlib only): BuildGrid 0.4.4 from PyPI in <repo>/.venv-buildgrid (scripts/install_test_tools.sh),
started on free ports and stopped by their PIDs.
    BuildGridServer  CAS + ByteStream on disk storage, the ActionCache in the server's memory
                     (lru-action-cache: enough for a test, forgotten when it stops)
    TeamServer       the documented team set-up (doc/examples/buildgrid-team): Redis holding a
                     persistent ActionCache, CI's endpoint that writes and the laptops' that only
                     reads, on one disk storage
"""
import base64
import hashlib
import hmac
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

SOURCE_DIR = Path(os.environ.get("NVFRESH_SOURCE_DIR") or Path(__file__).resolve().parents[2])
BGD = SOURCE_DIR / ".venv-buildgrid" / "bin" / "bgd"
# The documented team set-up (doc/manual.md): Redis, CI's BuildGrid and the laptops' BuildGrid.
TEAM_DIR = SOURCE_DIR / "doc" / "examples" / "buildgrid-team"
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"

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


class ServerProcess:
    """A server program started in `dir` with its output in `log_name`, waited for until `port`
    accepts connections; stopped by its PID (SIGTERM to its process group)."""

    def __init__(self, command, dir, log_name, port):
        self.command, self.log_path, self.port = command, Path(dir) / log_name, port
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen(command, cwd=dir, stdout=self.log,
                                        stderr=subprocess.STDOUT, start_new_session=True)

    def wait_until_ready(self):
        while not port_open(self.port):  # no time limit: a server that dies ends the wait
            if self.process.poll() is not None:
                raise AssertionError(f"{self.command[0]} exited with {self.process.returncode}:\n"
                                     f"{self.log_path.read_text(errors='replace')}")
            time.sleep(0.1)
        return self

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait()
        self.log.close()


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
        self.server = ServerProcess([str(BGD), "server", "start", "bgd.yml"], self.dir, "bgd.log",
                                    self.port).wait_until_ready()
        self.url = f"{'grpcs' if tls else 'grpc'}://127.0.0.1:{self.port}"

    def stop(self):
        self.server.stop()


def free_ports(count):
    """`count` distinct free loopback ports."""
    ports = set()
    while len(ports) < count:
        ports.add(free_port())
    return sorted(ports)


def rewritten(text, name, replacements):
    """`text` (the shipped file `name`) with each (old, new) replaced. Each `old` must occur exactly
    once: a shipped file changed where this rewrite does not look fails here, instead of the test
    running a configuration other than the one documented."""
    for old, new in replacements:
        if text.count(old) != 1:
            raise AssertionError(f"{old!r} occurs {text.count(old)} times in {TEAM_DIR / name}, "
                                 "not once: update the rewrite in buildgrid_server.TeamServer")
        text = text.replace(old, new)
    return text


class TeamServer:
    """doc/examples/buildgrid-team exactly as shipped, but for its ports (free loopback ones) and
    its paths (under `work`): Redis (redis.conf) holding the action cache, CI's BuildGrid
    (writer.yml, `writer_url`) and the laptops' (reader.yml, `reader_url`), both on one disk
    storage. stop() then start() is a restart of all three with the same files."""

    def __init__(self, work):
        self.redis_port, self.writer_port, self.reader_port = free_ports(3)
        self.dir = Path(work) / f"bgd-team-{self.writer_port}"
        (self.dir / "redis").mkdir(parents=True)
        data = "/var/lib/bgd-team/"
        self.cas = self.dir / "cas"
        self.write("redis.conf", [("\nport 6379\n", f"\nport {self.redis_port}\n"),
                                  (f"\ndir {data}redis\n", f"\ndir {self.dir / 'redis'}\n")])
        for name, shipped, port in (("writer.yml", 50052, self.writer_port),
                                    ("reader.yml", 50051, self.reader_port)):
            self.write(name, [(f'address: "0.0.0.0:{shipped}"', f'address: "127.0.0.1:{port}"'),
                              ("port: 6379\n", f"port: {self.redis_port}\n"),
                              (f"path: {data}cas\n", f"path: {self.cas}\n")])
        self.writer_url = f"grpc://127.0.0.1:{self.writer_port}"
        self.reader_url = f"grpc://127.0.0.1:{self.reader_port}"
        self.servers = []
        self.start()

    def write(self, name, replacements):
        text = (TEAM_DIR / name).read_text()
        (self.dir / name).write_text(rewritten(text, name, replacements))

    def start(self):
        self.servers = [ServerProcess([REDIS_SERVER, "redis.conf"], self.dir, "redis.log",
                                      self.redis_port).wait_until_ready()]
        bgds = [ServerProcess([str(BGD), "server", "start", name], self.dir, log, port)
                for name, log, port in (("writer.yml", "writer.log", self.writer_port),
                                        ("reader.yml", "reader.log", self.reader_port))]
        self.servers += [bgd.wait_until_ready() for bgd in bgds]

    def stop(self):
        for server in reversed(self.servers):
            server.stop()
        self.servers = []
