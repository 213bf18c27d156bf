"""Who may use a remote cache: a real BuildGrid (0.4.4, <repo>/.venv-buildgrid) that demands
credentials, real nvcc, CMake and Ninja (issue 41, "Who may write, and how a reader knows").

- TokenRequired: BuildGrid's JWT authorization (HS256, a secret file): every call must carry
  "authorization: Bearer <JWT>". The right token from NVFRESH_REMOTE_TOKEN_FILE uploads, and from
  NVFRESH_REMOTE_TOKEN another machine is served; a wrong or missing token is one line, a local
  compile and the right object. The token, and a password put in the URL (refused with one line),
  appear nowhere: not in the build's output, the debug log, the cache dir, the build tree (records)
  or TMPDIR (the helper's request files), zstd-compressed files decompressed first.
- WhatAnUploadNames: every blob a writer uploaded, read back from BuildGrid's storage, names
  neither the writer's HOME, nor its build dir, nor its PATH; a reader is still served, and its
  `cache verify` runs no command of the writer's.
- ClientCertificates: BuildGrid on TLS requiring a client certificate signed by a CA made here with
  `openssl`: with NVFRESH_REMOTE_TLS_CA, _CLIENT_CERT and _CLIENT_KEY one machine uploads and another
  is served; without a certificate, and with grpcs:// to a plaintext server (a failed handshake),
  the build says one nvfresh line and none of gRPC's own log.
"""
import subprocess
from pathlib import Path

import os

import harness
from buildgrid_server import BuildGridServer, jwt_token
from project import Target, marked_source, markers
from test_cache import NVFRESH, cache_stats
from test_remote_cache import RemoteCase, kinds_of, require_buildgrid

SECRET = "nvfresh-test-secret-of-32-bytes-at-least"  # PyJWT warns below 32 bytes
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def make_pki(directory):
    """A CA, and a server (127.0.0.1) and a client certificate it signed: {name: path}."""
    directory.mkdir(parents=True, exist_ok=True)
    files = {}

    def openssl(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", str(directory / "ca.key"), "-out",
            str(directory / "ca.pem"), "-days", "2", "-subj", "/CN=nvfresh-test-ca")
    files["ca"] = directory / "ca.pem"
    for who in ("server", "client"):
        (directory / f"{who}.ext").write_text("subjectAltName=IP:127.0.0.1\n")
        openssl("req", *ec, "-keyout", str(directory / f"{who}.key"), "-out",
                str(directory / f"{who}.csr"), "-subj", f"/CN={who}")
        openssl("x509", "-req", "-in", str(directory / f"{who}.csr"), "-CA", str(files["ca"]),
                "-CAkey", str(directory / "ca.key"), "-CAcreateserial", "-days", "2",
                "-out", str(directory / f"{who}.pem"), "-extfile", str(directory / f"{who}.ext"))
        files[f"{who}_cert"] = directory / f"{who}.pem"
        files[f"{who}_key"] = directory / f"{who}.key"
    return files


def nvfresh_lines(output):
    return [line for line in output.splitlines() if line.startswith("nvfresh:")]


class CredentialCase(RemoteCase):
    @classmethod
    def setUpClass(cls):
        require_buildgrid("remote credentials")
        super(RemoteCase, cls).setUpClass()  # the server of this class, not RemoteCase's
        cls.pki = make_pki(cls.work / "pki")
        cls.server = BuildGridServer(cls.work, **cls.server_args())

    @classmethod
    def server_args(cls):
        return {}

    def machine(self, name, **extra):
        """Its cache dir, its own TMPDIR (the helper's scratch files) and debug log."""
        tmp = self.root / f"tmp-{name}"
        tmp.mkdir(exist_ok=True)
        return super().machine(name, TMPDIR=str(tmp),
                               NVFRESH_LOG_FILE=str(self.root / f"log-{name}.txt"), **extra)

    def one_kernel(self, letter):
        case = f"// {self.id()}"
        files = {f"{letter}.cu": marked_source([case], [(letter, f'"{letter}1"', "host,dev")])}
        return self.project([Target(f"k{letter}", f"{letter}.cu")], files)

    def assert_nowhere(self, secret, output, env):
        """`secret` is in neither the build's output nor any file the build left."""
        self.assertNotIn(secret, output)
        places = [self.root / "build", Path(env["NVFRESH_CACHE_DIR"]), Path(env["TMPDIR"]),
                  Path(env["NVFRESH_LOG_FILE"])]
        for place in places:
            files = [place] if place.is_file() else [p for p in place.rglob("*") if p.is_file()]
            for path in files:
                data = path.read_bytes()
                self.assertNotIn(secret.encode(), data, path)
                if data.startswith(ZSTD_MAGIC):
                    plain = subprocess.run(["zstd", "-dcq", str(path)], capture_output=True).stdout
                    self.assertNotIn(secret.encode(), plain, path)

    def assert_one_line_local_compile(self, name, env, *needles):
        """A build that the remote refuses: one nvfresh line, compiled locally, the right object."""
        source = self.one_kernel(name)
        tree = self.fresh_tree(source, env)
        output = self.build_output(tree, env)
        lines = nvfresh_lines(output)
        self.assertEqual(len(lines), 1, output)
        for needle in needles:
            self.assertIn(needle, lines[0])
        self.assertEqual(kinds_of(tree), {f"{name}.cu.o": "compiled"})
        self.assertEqual(markers(tree.object(f"{name}.cu.o"))[name], {f"{name}1"})
        self.assert_same_as_uncached(tree, f"{name}.cu.o", env=env)
        stats = cache_stats(env)
        self.assertEqual((stats["remote_uploads"], stats["remote_hits"]), (0, 0))
        self.assertGreaterEqual(stats["remote_errors"], 1)
        return output


class TokenRequired(CredentialCase):
    @classmethod
    def server_args(cls):
        return {"jwt_secret": SECRET}

    def test_the_right_token_uploads_and_serves(self):
        token = jwt_token(SECRET)
        token_file = self.root / "token"
        token_file.write_text(token + "\n")
        source = self.one_kernel("t")
        a = self.machine("a", NVFRESH_REMOTE_TOKEN_FILE=str(token_file))
        tree = self.fresh_tree(source, a)
        output = self.build_output(tree, a)
        self.assertEqual(nvfresh_lines(output), [], output)
        self.assertEqual(kinds_of(tree), {"t.cu.o": "compiled"})
        self.assertEqual((cache_stats(a)["remote_uploads"], cache_stats(a)["remote_errors"]), (1, 0))
        self.assert_nowhere(token, output, a)

        b = self.machine("b", NVFRESH_REMOTE_TOKEN=token)
        tree = self.fresh_tree(source, b)
        output = self.build_output(tree, b)
        self.assertEqual(kinds_of(tree), {"t.cu.o": "served"})
        self.assertEqual(cache_stats(b)["remote_hits"], 1)
        self.assert_same_as_uncached(tree, "t.cu.o", env=b)
        self.assert_nowhere(token, output, b)

    def test_a_wrong_token_is_one_line_and_a_local_compile(self):
        wrong = jwt_token("another-secret-of-at-least-32-bytes!!")
        env = self.machine("wrong", NVFRESH_REMOTE_TOKEN=wrong)
        output = self.assert_one_line_local_compile("w", env, "refused nvfresh's credentials",
                                                    "UNAUTHENTICATED")
        self.assert_nowhere(wrong, output, env)

    def test_no_token_is_one_line_and_a_local_compile(self):
        self.assert_one_line_local_compile("n", self.machine("none"), "UNAUTHENTICATED",
                                           "NVFRESH_REMOTE_TOKEN_FILE")

    def test_a_password_in_the_url_is_refused_and_never_shown(self):
        url = self.server.url.replace("grpc://", "grpc://alice:s3cr3t-pw@")
        env = self.machine("url", NVFRESH_REMOTE=url)
        output = self.assert_one_line_local_compile("u", env, "NVFRESH_REMOTE_TOKEN_FILE",
                                                    self.server.url)
        self.assert_nowhere("s3cr3t-pw", output, env)
        self.assert_nowhere("alice:", output, env)


class ClientCertificates(CredentialCase):
    @classmethod
    def server_args(cls):
        return {"tls": {"key": cls.pki["server_key"], "cert": cls.pki["server_cert"],
                        "client_certs": cls.pki["ca"]}}

    def tls_machine(self, name, with_certificate=True):
        extra = {"NVFRESH_REMOTE_TLS_CA": str(self.pki["ca"])}
        if with_certificate:
            extra.update(NVFRESH_REMOTE_TLS_CLIENT_CERT=str(self.pki["client_cert"]),
                         NVFRESH_REMOTE_TLS_CLIENT_KEY=str(self.pki["client_key"]))
        return self.machine(name, **extra)

    def test_a_client_certificate_uploads_and_serves(self):
        self.assertTrue(self.server.url.startswith("grpcs://"))
        source = self.one_kernel("c")
        a = self.tls_machine("a")
        tree = self.fresh_tree(source, a)
        output = self.build_output(tree, a)
        self.assertEqual(nvfresh_lines(output), [], output)
        self.assertEqual(cache_stats(a)["remote_uploads"], 1)
        b = self.tls_machine("b")
        tree = self.fresh_tree(source, b)
        self.assertEqual(self.build(tree), {"c.cu.o": "served"})
        self.assertEqual(cache_stats(b)["remote_hits"], 1)

    def test_no_client_certificate_is_one_line(self):
        output = self.assert_one_line_local_compile("x", self.tls_machine("nocert", False),
                                                    self.server.url)
        self.assertNotIn("ssl_transport_security", output)

    def test_a_failed_handshake_is_one_nvfresh_line(self):
        plain = BuildGridServer(self.root)  # no TLS: the handshake fails
        try:
            env = self.tls_machine("plain")
            env["NVFRESH_REMOTE"] = plain.url.replace("grpc://", "grpcs://")
            output = self.assert_one_line_local_compile("h", env, "TLS handshake failed")
            lines = [line for line in output.splitlines() if line.strip()]
            self.assertTrue(all(line.startswith(("[", "nvfresh:")) for line in lines),
                            f"a line that is neither the build's nor nvfresh's:\n{output}")
        finally:
            plain.stop()


class WhatAnUploadNames(RemoteCase):
    def test_no_home_build_dir_or_path_of_the_writer(self):
        home = self.root / "writer-home-7f3a"
        home.mkdir()
        source = self.one_kernel()
        # A PATH of the writer's own: its last directory comes after gcc's, so no lookup probes
        # it, and only a copy of PATH itself could carry it.
        path = f"{os.environ['PATH']}:{self.root / 'writer-path-7f3a'}"
        writer = self.machine("writer", HOME=str(home), PATH=path)
        tree = self.tree(source, "build-of-the-writer-7f3a", env=writer)
        self.assertEqual(self.build(tree), {"p.cu.o": "compiled"})
        self.assertEqual(cache_stats(writer)["remote_uploads"], 1)
        uploaded = [p for p in (self.server.dir / "cas").rglob("*") if p.is_file()]
        self.assertGreater(len(uploaded), 3)
        # By the names of the dirs: the tests run in a symlinked dir, which the paths may resolve.
        searched = {"HOME": home.name, "build dir": tree.build_dir.name, "PATH": path,
                    "PATH's last directory": "writer-path-7f3a"}
        for path in uploaded:
            data = path.read_bytes()
            for what, text in searched.items():
                self.assertNotIn(text.encode(), data, f"the writer's {what} in an uploaded blob")

        reader = self.machine("reader")
        tree = self.fresh_tree(source, reader)
        self.assertEqual(self.build(tree), {"p.cu.o": "served"})
        self.assert_same_as_uncached(tree, "p.cu.o", env=reader)
        verify = harness.run([NVFRESH, "cache", "verify"], env=reader).stdout.decode()
        self.assertIn("fetched from the remote, it keeps no command", verify)

    def one_kernel(self):
        files = {"p.cu": marked_source([f"// {self.id()}"], [("p", '"p1"', "host,dev")])}
        return self.project([Target("kp", "p.cu")], files)


if __name__ == "__main__":
    harness.main()
