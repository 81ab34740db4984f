#!/usr/bin/env python3
"""Writes a damaged copy of a plan file, one kind of damage per mode.

usage: corrupt_plan.py <in.plan> <out.plan> <mode>

Modes follow docs/plan-format.md's header layout (64 bytes, little-endian):
  magic      the first byte changed
  version    format major version 3 (header CRC recomputed: a well-formed
             plan of a version this reader does not know)
  header     one byte of the file-size field changed (CRC left stale)
  truncate   the file cut to half its length
  tiny       the first 30 bytes only
  trailing   100 bytes appended
  weights    one byte in the middle of the first section flipped
  metadata   one byte of the metadata flipped
  target     header and metadata retargeted to sm_90 (CRCs recomputed)
"""
import struct
import sys

import numpy as np  # noqa: F401  (keeps the helper's deps those of the suite)


def crc32c(data, crc=0):
    table = crc32c.table
    if table is None:
        table = []
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            table.append(c)
        crc32c.table = table
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = (crc >> 8) ^ table[(crc ^ b) & 0xFF]
    return crc ^ 0xFFFFFFFF


crc32c.table = None

HEADER = struct.Struct("<8sIIQQQII12sI")  # magic..target, header crc


def main():
    src, dst, mode = sys.argv[1:4]
    data = bytearray(open(src, "rb").read())
    (magic, major, minor, file_size, meta_off, meta_size, meta_crc, tp, target,
     _) = HEADER.unpack_from(data, 0)

    def rewrite_header(**kw):
        fields = dict(magic=magic, major=major, minor=minor, file_size=file_size,
                      meta_off=meta_off, meta_size=meta_size, meta_crc=meta_crc, tp=tp,
                      target=target)
        fields.update(kw)
        head = HEADER.pack(fields["magic"], fields["major"], fields["minor"],
                           fields["file_size"], fields["meta_off"], fields["meta_size"],
                           fields["meta_crc"], fields["tp"], fields["target"], 0)[:60]
        data[0:64] = head + struct.pack("<I", crc32c(head))

    if mode == "magic":
        data[0] ^= 0xFF
    elif mode == "version":
        rewrite_header(major=3)
    elif mode == "header":
        data[16] ^= 0x01
    elif mode == "truncate":
        data = data[: len(data) // 2]
    elif mode == "tiny":
        data = data[:30]
    elif mode == "trailing":
        data += b"\0" * 100
    elif mode == "weights":
        data[4096 + 1000] ^= 0x10
    elif mode == "metadata":
        data[meta_off + meta_size // 2] ^= 0x10
    elif mode == "target":
        meta = bytes(data[meta_off:meta_off + meta_size])
        old, new = b"\x12\x03cpu", b"\x12\x05sm_90"
        assert meta.count(old) >= 1
        meta = meta.replace(old, new, 1)
        data = data[:meta_off] + meta
        rewrite_header(file_size=len(data), meta_size=len(meta), meta_crc=crc32c(meta),
                       target=b"sm_90".ljust(12, b"\0"))
    else:
        sys.exit(f"unknown mode {mode}")
    open(dst, "wb").write(bytes(data))


if __name__ == "__main__":
    main()
