"""A REAPI v2 cache server that fails on purpose, for the remote cache's error paths.

Run with the Python of BuildGrid's venv (it has grpcio, and BuildGrid's generated messages of the
same REAPI protos that nvfresh builds from; nothing is generated here): gRPC generic handlers serve
Capabilities, ActionCache, CAS and ByteStream from memory, and every call first goes through the
fault of the server:
    exhausted     every call answers RESOURCE_EXHAUSTED
    unavailable   every call answers UNAVAILABLE
    slow          every call waits until the client gives up (its deadline), then answers
    dies          the process exits on the first call, before it answers: a server killed while
                  it serves
    full          a working cache that refuses every blob it is sent: RESOURCE_EXHAUSTED for
                  each blob of BatchUpdateBlobs (a status per blob, as servers answer) and for
                  ByteStream.Write
    truncate      a working cache whose ByteStream.Read sends the first half of the blob, then OK;
                  Capabilities says a batch limit that sends every blob through ByteStream
    huge          a working cache whose results claim their first output is 5 GiB, more than
                  nvfresh ever writes (the client must refuse it before reading)
    stall         a working cache whose results claim their first output is 1 GiB, and whose
                  ByteStream.Read of it sends nothing until the client gives up
    hold          a working cache whose UpdateActionResult waits until the file
                  PORT_FILE.release exists (the test releases it), noting each call it holds by
                  creating PORT_FILE.held
    delay         a working cache that answers every call right, but DELAY_SECONDS after it came:
                  slow, yet within every call's deadline (5 s)

Every call is noted as it comes, one line with its method's name ("GetActionResult"), in
PORT_FILE.calls.

Usage: fake_reapi.py FAULT PORT_FILE
Listens on a free port of 127.0.0.1 and writes it to PORT_FILE (renamed into place); runs until
it is killed.
"""
import os
import sys
import threading
import time
from concurrent import futures

import grpc
from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2 as re
from buildgrid._protos.google.bytestream import bytestream_pb2 as bs
from buildgrid._protos.google.rpc import code_pb2

FAULTS = ("exhausted", "unavailable", "slow", "dies", "full", "truncate", "huge", "stall", "hold",
          "delay")
DELAY_SECONDS = 1.5
CLAIMED_SIZES = {"huge": 5 << 30, "stall": 1 << 30}  # what the first output of a result claims
# nvfresh's client keeps 64 KiB of a batch for framing: a limit this small leaves no room for any
# blob in a batch, so each goes through ByteStream.
TINY_BATCH_LIMIT = (64 << 10) + 1


class Store:
    def __init__(self):
        self.lock = threading.Lock()
        self.blobs = {}    # hash: bytes
        self.results = {}  # action hash: ActionResult

    def put(self, digest, data):
        with self.lock:
            self.blobs[digest.hash] = data

    def get(self, digest):
        with self.lock:
            return self.blobs.get(digest.hash)


class FakeServer:
    def __init__(self, fault, port_file):
        self.fault = fault
        self.port_file = port_file
        self.store = Store()
        self.calls_lock = threading.Lock()

    def note(self, method):
        with self.calls_lock, open(self.port_file + ".calls", "a") as calls:
            calls.write(f"{method}\n")

    def inject(self, context):
        if self.fault == "exhausted":
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "fake_reapi: out of quota")
        if self.fault == "unavailable":
            context.abort(grpc.StatusCode.UNAVAILABLE, "fake_reapi: going away")
        if self.fault == "dies":
            os._exit(3)
        if self.fault == "slow":
            while context.is_active():  # the client's deadline ends it
                time.sleep(0.05)
        if self.fault == "delay":
            time.sleep(DELAY_SECONDS)

    # Capabilities
    def get_capabilities(self, request, context):
        capabilities = re.ServerCapabilities()
        cache = capabilities.cache_capabilities
        cache.digest_functions.append(re.DigestFunction.SHA256)
        cache.max_batch_total_size_bytes = TINY_BATCH_LIMIT if self.fault == "truncate" else 0
        return capabilities

    # ActionCache
    def get_action_result(self, request, context):
        with self.store.lock:
            result = self.store.results.get(request.action_digest.hash)
        if result is None:
            context.abort(grpc.StatusCode.NOT_FOUND, "no such action")
        if self.fault in CLAIMED_SIZES and result.output_files:
            claimed = re.ActionResult()
            claimed.CopyFrom(result)
            claimed.output_files[0].digest.size_bytes = CLAIMED_SIZES[self.fault]
            return claimed
        return result

    def update_action_result(self, request, context):
        if self.fault == "hold":
            with open(self.port_file + ".held", "a"):
                pass
            while not os.path.exists(self.port_file + ".release"):  # the test's release ends it
                time.sleep(0.05)
        with self.store.lock:
            self.store.results[request.action_digest.hash] = request.action_result
        return request.action_result

    # ContentAddressableStorage
    def find_missing_blobs(self, request, context):
        response = re.FindMissingBlobsResponse()
        for digest in request.blob_digests:
            if self.store.get(digest) is None:
                response.missing_blob_digests.append(digest)
        return response

    def batch_update_blobs(self, request, context):
        response = re.BatchUpdateBlobsResponse()
        for item in request.requests:
            answer = response.responses.add(digest=item.digest)
            if self.fault == "full":
                answer.status.code = code_pb2.RESOURCE_EXHAUSTED
                answer.status.message = "fake_reapi: the CAS is full"
                continue
            self.store.put(item.digest, item.data)
            answer.status.code = code_pb2.OK
        return response

    def batch_read_blobs(self, request, context):
        response = re.BatchReadBlobsResponse()
        for digest in request.digests:
            data = self.store.get(digest)
            answer = response.responses.add(digest=digest)
            answer.status.code = code_pb2.OK if data is not None else code_pb2.NOT_FOUND
            answer.data = data or b""
        return response

    # ByteStream: resource names "[instance/]blobs/<hash>/<size>" and
    # "[instance/]uploads/<uuid>/blobs/<hash>/<size>"
    @staticmethod
    def digest_of(resource):
        parts = resource.split("/")
        at = parts.index("blobs")
        return re.Digest(hash=parts[at + 1], size_bytes=int(parts[at + 2]))

    def read(self, request, context):
        data = self.store.get(self.digest_of(request.resource_name))
        if data is None:
            context.abort(grpc.StatusCode.NOT_FOUND, "no such blob")
        if self.fault == "truncate":
            data = data[:len(data) // 2]
        if self.fault == "stall":
            while context.is_active():  # the client's giving up ends it
                time.sleep(0.05)
            return
        yield bs.ReadResponse(data=data)

    def write(self, requests, context):
        if self.fault == "full":
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "fake_reapi: the CAS is full")
        resource, data = None, b""
        for request in requests:
            resource = resource or request.resource_name
            data += request.data
        digest = self.digest_of(resource)
        self.store.put(digest, data)
        return bs.WriteResponse(committed_size=len(data))


def handlers(server):
    """The generic handlers of every service, each call going through the fault first."""
    def method_name(method):
        return "".join(word.capitalize() for word in method.__name__.split("_"))

    def guarded(method):
        def call(request, context):
            server.note(method_name(method))
            server.inject(context)
            return method(request, context)
        return call

    def unary(method, request_type, response_type):
        return grpc.unary_unary_rpc_method_handler(
            guarded(method), request_deserializer=request_type.FromString,
            response_serializer=response_type.SerializeToString)

    def guarded_stream(method):
        def call(request, context):
            server.note(method_name(method))
            server.inject(context)
            yield from method(request, context)
        return call

    services = {
        "build.bazel.remote.execution.v2.Capabilities": {
            "GetCapabilities": unary(server.get_capabilities, re.GetCapabilitiesRequest,
                                     re.ServerCapabilities)},
        "build.bazel.remote.execution.v2.ActionCache": {
            "GetActionResult": unary(server.get_action_result, re.GetActionResultRequest,
                                     re.ActionResult),
            "UpdateActionResult": unary(server.update_action_result, re.UpdateActionResultRequest,
                                        re.ActionResult)},
        "build.bazel.remote.execution.v2.ContentAddressableStorage": {
            "FindMissingBlobs": unary(server.find_missing_blobs, re.FindMissingBlobsRequest,
                                      re.FindMissingBlobsResponse),
            "BatchUpdateBlobs": unary(server.batch_update_blobs, re.BatchUpdateBlobsRequest,
                                      re.BatchUpdateBlobsResponse),
            "BatchReadBlobs": unary(server.batch_read_blobs, re.BatchReadBlobsRequest,
                                    re.BatchReadBlobsResponse)},
        "google.bytestream.ByteStream": {
            "Read": grpc.unary_stream_rpc_method_handler(
                guarded_stream(server.read), request_deserializer=bs.ReadRequest.FromString,
                response_serializer=bs.ReadResponse.SerializeToString),
            "Write": grpc.stream_unary_rpc_method_handler(
                guarded(server.write), request_deserializer=bs.WriteRequest.FromString,
                response_serializer=bs.WriteResponse.SerializeToString)},
    }
    return [grpc.method_handlers_generic_handler(name, methods)
            for name, methods in services.items()]


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in FAULTS:
        sys.exit(f"usage: fake_reapi.py {{{','.join(FAULTS)}}} PORT_FILE")
    fault, port_file = sys.argv[1], sys.argv[2]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8),
                         handlers=handlers(FakeServer(fault, port_file)))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    with open(port_file + ".tmp", "w") as out:
        out.write(f"{port}\n")
    os.rename(port_file + ".tmp", port_file)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
