"""Results a reader can verify (issue 41): CI signs what it uploads (NVFRESH_REMOTE_SIGNING_KEY),
a reader with CI's public key (NVFRESH_REMOTE_TRUSTED_KEYS) serves only what CI signed. Real nvcc,
CMake and Ninja against a real BuildGrid on 127.0.0.1, every machine with its own HOME and cache dir
building at one shared path (test_remote_soundness.SharedPathCase); the keys are made with the
openssl commands doc/manual.md gives.

The attacks are issue 41's, made through REAPI (reapi_tamper.py): a copied result, a relinked
manifest and a consistent forgery by a colleague who may write the server but has no CI key. Each is
refused by a reader with CI's key; the forgery is still served to a reader without one.
"""
import hashlib
import shutil
import subprocess

import harness
from project import Target, marked_source, markers
from test_cache import cache_stats, events, kinds
from test_remote_soundness import TamperingCase

UNTRUSTED_LINE = "no trusted key signed"


def make_key_pair(directory, name):
    """(private key file, public key file, the key's short id) by the commands the manual gives."""
    private, public = directory / f"{name}.pem", directory / f"{name}.pub"
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(private)],
                   check=True, capture_output=True)
    subprocess.run(["openssl", "pkey", "-in", str(private), "-pubout", "-out", str(public)],
                   check=True, capture_output=True)
    der = subprocess.run(["openssl", "pkey", "-in", str(private), "-pubout", "-outform", "DER"],
                         check=True, capture_output=True).stdout
    return private, public, hashlib.sha256(der[-32:]).hexdigest()[:16]


class SignedResults(TamperingCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        keys = cls.work / "keys"
        keys.mkdir(exist_ok=True)
        cls.ci_key, cls.ci_public, cls.ci_id = make_key_pair(keys, "ci")
        cls.m_key, cls.m_public, cls.m_id = make_key_pair(keys, "colleague")

    def ci(self):
        return self.machine("ci", NVFRESH_REMOTE_SIGNING_KEY=str(self.ci_key))

    def reader(self, name, **extra):
        """A laptop with CI's public key, read-only as in the documented team set-up."""
        return self.machine(name, NVFRESH_REMOTE_TRUSTED_KEYS=str(self.ci_public),
                            NVFRESH_REMOTE_READ_ONLY="1", **extra)

    def build_logged(self, source, env):
        """A fresh build dir at the shared path: the tree, {object: kind} and the build's output."""
        shutil.rmtree(self.root / "build", ignore_errors=True)
        tree = self.tree(source, "build", env=env)
        before = len(events(tree.build_dir))
        output = tree.build().output
        return tree, kinds(tree.build_dir, before), output

    def assert_refused(self, source, env, why):
        """The reader compiles VALUE 1 itself; one line names the untrusted result and why."""
        self.set_value(source, "1")
        tree, built, output = self.build_logged(source, env)
        self.assertEqual(built, {"k.cu.o": "compiled"})
        self.assertEqual(self.value_of(tree), {f"{self.tag}-1"})
        self.assertEqual(output.count(UNTRUSTED_LINE), 1, output)
        self.assertIn(why, output)
        stats = cache_stats(env)
        self.assertEqual((stats["remote_hits"], stats["remote_errors"]), (0, 0))
        self.assertGreaterEqual(stats["remote_untrusted"], 1)
        self.assert_same_as_uncached(tree, "k.cu.o", env=env)

    def test_an_entry_ci_signed_is_served(self):
        source = self.sources()
        self.build_value(source, "1", self.ci())
        ci_result = self.result_actions()["1"]
        self.assertIn("nvfresh.signature", ci_result["outputs"])
        # Two trusted keys (a key being replaced): either one's signature is served.
        both = f"{self.m_public}:{self.ci_public}"
        reader = self.machine("reader", NVFRESH_REMOTE_TRUSTED_KEYS=both)
        tree, built, output = self.build_logged(source, reader)
        self.assertEqual((built, self.value_of(tree)), ({"k.cu.o": "served"}, {f"{self.tag}-1"}))
        self.assertNotIn(UNTRUSTED_LINE, output)
        stats = cache_stats(reader)
        self.assertEqual((stats["remote_hits"], stats["remote_untrusted"]), (1, 0))
        self.assert_same_as_uncached(tree, "k.cu.o", env=reader)

    def test_a_copied_result_is_refused(self):
        # CI's own signed result of another Action (VALUE 666) copied onto the result Action of
        # VALUE 1: signed by CI, but for another Action.
        source = self.sources()
        self.build_value(source, "666", self.ci())
        self.build_value(source, "1", self.ci())
        actions = self.result_actions()
        self.tamper("copy", actions["666"]["action"], actions["1"]["action"])
        self.assert_refused(source, self.reader("b"), f"its signature by key {self.ci_id} does "
                            "not match it")

    def test_a_relinked_manifest_is_refused(self):
        # B holds VALUE 666 in its local cache; CI's signed manifest, which names both input sets,
        # is rewritten so that VALUE 1's input set names 666's result key.
        source = self.sources()
        b = self.machine("b", NVFRESH_REMOTE_TRUSTED_KEYS=str(self.ci_public))
        self.build_value(source, "666", b)  # uploaded (unsigned): its result key is on the server
        self.build_value(source, "1", self.ci())
        actions = self.result_actions()
        manifest = self.manifest_action(actions["1"]["environment"]["NVFRESH_MANIFEST_KEY"])
        self.assertIn("nvfresh.signature", manifest["outputs"])
        text, relinked = self.root / "manifest", self.root / "manifest.relinked"
        self.tamper("read", manifest["outputs"]["nvfresh.manifest"], text)
        harness.run([harness.tool_path("remote_entry_tool"), "relink", text, relinked,
                     actions["1"]["environment"]["NVFRESH_RESULT_KEY"],
                     actions["666"]["environment"]["NVFRESH_RESULT_KEY"]], check=True)
        self.tamper("replace", manifest["action"], "nvfresh.manifest", relinked)
        self.assert_refused(source, b, f"its signature by key {self.ci_id} does not match it")
        self.assertEqual(cache_stats(b)["remote_refused"], 0)

    def test_a_consistent_forgery_is_refused(self):
        # The colleague's object and entry in CI's signed result, every checksum recomputed, and
        # the signature re-made with the colleague's own key: consistent, and served to a reader
        # without CI's key; refused by one with it.
        source = self.sources()
        ci = self.forge_over_ci(source, self.ci())

        tree, built = self.build_at_the_shared_path(source, self.machine("trusting"))
        self.assertEqual((built, self.value_of(tree)), ({"k.cu.o": "served"}, {f"{self.tag}-666"}))
        self.assert_refused(source, self.reader("b"), f"its signature by key {self.ci_id} does "
                            "not match it")

        # Signed again with the colleague's key: a signature, of a key the reader does not trust.
        self.tamper("resign", ci["action"], self.m_key)
        self.assert_refused(source, self.reader("c"),
                            f"signed by key {self.m_id}, which is not trusted")

        # What signing does not guard: whoever holds CI's key signs what they like (a stolen key
        # is replaced and the old public key taken off the laptops; doc/manual.md).
        self.tamper("resign", ci["action"], self.ci_key)
        tree, built = self.build_at_the_shared_path(source, self.reader("d"))
        self.assertEqual((built, self.value_of(tree)), ({"k.cu.o": "served"}, {f"{self.tag}-666"}))

    def test_unsigned_entries_are_counted_and_named_once_per_build(self):
        source = self.two_kernels()
        self.assertEqual(self.build(self.fresh_tree(source, self.machine("laptop"))),
                         {"a.cu.o": "compiled", "b.cu.o": "compiled"})  # uploaded, unsigned
        reader = self.reader("reader")
        tree = self.fresh_tree(source, reader)
        before = len(events(tree.build_dir))
        output = tree.build().output
        self.assertEqual(kinds(tree.build_dir, before), {"a.cu.o": "compiled", "b.cu.o": "compiled"})
        self.assertEqual(output.count(UNTRUSTED_LINE), 1, output)
        self.assertIn("the first: not signed", output)
        # Each TU's manifest, and its cicc and ptxas steps (asked after the object missed).
        stats = cache_stats(reader)
        self.assertEqual((stats["remote_hits"], stats["remote_errors"]), (0, 0))
        self.assertGreaterEqual(stats["remote_untrusted"], 2)
        self.assertIn(f"untrusted {stats['remote_untrusted']},",
                      harness.nvfresh("cache", "stats", env=reader).stdout.decode())

    def test_a_colleagues_signature_is_counted_and_named(self):
        source = self.sources()
        self.build_value(source, "1", self.machine("m", NVFRESH_REMOTE_SIGNING_KEY=str(self.m_key)))
        self.assertIn("nvfresh.signature", self.result_actions()["1"]["outputs"])
        self.assert_refused(source, self.reader("b"),
                            f"signed by key {self.m_id}, which is not trusted")

    def test_a_key_file_that_is_no_key_says_what_to_do_and_the_build_goes_on(self):
        source = self.sources()
        not_a_key = self.root / "not-a-key.pub"
        harness.write(not_a_key, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5 laptop\n")
        writer = self.machine("w", NVFRESH_REMOTE_SIGNING_KEY=str(not_a_key))
        tree, built, output = self.build_logged(source, writer)
        self.assertEqual(built, {"k.cu.o": "compiled"})
        self.assertEqual(output.count("openssl genpkey -algorithm ed25519"), 1, output)
        self.assertIn(f"the signing key {not_a_key} (NVFRESH_REMOTE_SIGNING_KEY) is not an "
                      "ed25519 private key", output)
        self.assertEqual(cache_stats(writer)["remote_uploads"], 0)

        reader = self.machine("r", NVFRESH_REMOTE_TRUSTED_KEYS=f"{self.ci_public}:{not_a_key}")
        tree, built, output = self.build_logged(source, reader)
        self.assertEqual(built, {"k.cu.o": "compiled"})
        self.assertEqual(output.count("-pubout"), 1, output)
        self.assertIn(f"the trusted key {not_a_key} (NVFRESH_REMOTE_TRUSTED_KEYS) is not an "
                      "ed25519 public key", output)
        self.assertEqual(cache_stats(reader)["remote_hits"], 0)
        self.assertGreaterEqual(cache_stats(reader)["remote_errors"], 1)
        self.assertNotIn(str(self.ci_key), output)


if __name__ == "__main__":
    harness.main()
