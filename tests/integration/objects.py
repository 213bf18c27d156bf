"""Reading compiled objects for the tests (stdlib only): an ELF section and the fatbin's entries.

Device code is compared per fatbin entry (kind, arch) so that what differs between any two compiles
of the same source (the host object's tmpxft stem, DESIGN.md) plays no part.
"""
import struct
from pathlib import Path

import harness


def elf_section(data, wanted):
    """The bytes of one section of a 64-bit little-endian ELF file."""
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "not an ELF64 LE object"
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]
    for name_offset, _, _, _, offset, size, *_ in headers:
        end = data.index(b"\0", names_at + name_offset)
        if data[names_at + name_offset:end].decode() == wanted:
            return data[offset:offset + size]
    raise AssertionError(f"no {wanted} section")


def fatbin_entries(object_path):
    """{(kind, arch): payload bytes} of the object's .nv_fatbin; kind "elf" (cubin) or "ptx".

    Layout (DESIGN.md): fatbin header (magic 0xBA55ED50, version u16, header size u16, size u64),
    then entries: kind u16 at +0 (1 PTX, 2 ELF), header size u32 at +4, payload size u64 at +8,
    arch u32 at +28. Compressed payloads are kept as they are (the compressors are deterministic).
    """
    section = elf_section(Path(object_path).read_bytes(), ".nv_fatbin")
    entries, position = {}, 0
    while position + 16 <= len(section):
        magic, _, header_size, size = struct.unpack_from("<IHHQ", section, position)
        if magic != 0xBA55ED50:
            break
        entry, end = position + header_size, position + header_size + size
        while entry < end:
            kind, = struct.unpack_from("<H", section, entry)
            entry_header, = struct.unpack_from("<I", section, entry + 4)
            payload_size, = struct.unpack_from("<Q", section, entry + 8)
            arch, = struct.unpack_from("<I", section, entry + 28)
            name = {1: "ptx", 2: "elf"}.get(kind, str(kind))
            entries[(name, arch)] = section[entry + entry_header:entry + entry_header + payload_size]
            entry += entry_header + payload_size
        position = end
    return entries


def read_record(path):
    """A record's inputs as {path: (role, hash, [passes])}, its history events, and its key lines."""
    inputs, history, fields_of = {}, [], {}
    for line in harness.read_record_text(path).splitlines():
        fields = line.split("\t")
        if fields[0] == "input":
            role, digest, _, _, _, _, passes, name = fields[1:9]
            inputs[name] = (role, digest, passes.split(","))
        elif fields[0] == "history":
            history.append(fields[2])
        else:
            fields_of.setdefault(fields[0], fields[1:])
    return inputs, history, fields_of
