#!/usr/bin/env python3
"""Writes the seed corpora (corpus/<target>/): for fuzz_engine and
fuzz_matcher, one small program per op kind, in the encoding each target
decodes.  Run it again after changing an encoding:
    python3 test/fuzz/make_corpus.py"""
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))
DATA, CHUNK, ACK, PROBE, PROBE_REPLY, PUT, BUSY = range(1, 8)


def u16(v):
    return struct.pack("<H", v & 0xFFFF)


def u32(v):
    return struct.pack("<I", v & 0xFFFFFFFF)


def send(node, cls, size):  # cls 0 tiny, 1 ~command MTU, 2 few segments, 3 many
    return bytes([node]) + bytes([cls]) + u16(size)


def put(node, offset, length, tag=3):
    return bytes([2 | node << 4]) + u16(offset) + u16(length) + bytes([tag])


def fault(kind, endpoint, data_channel=False, at=0):  # kind: 0 drop 1 dup 2 reorder 3 delay
    return bytes([3 + kind, endpoint | (2 if data_channel else 0) | at << 2])


RELEASE = bytes([7])


def tick(n):  # (n + 1) * 10 us
    return bytes([8, n])


def wait(n):  # (n + 1) * 10 ms
    return bytes([9, n])


def rounds(k):  # k + 1 rounds of both nodes
    return bytes([10 | k << 4])


def alone(node, wait_10ms=0):
    return bytes([11 | node << 4, wait_10ms])


def forge(frm, ptype, seq_delta=0, ack_delta=0, flags=0, msg_delta=3, msg_len=0, offset_segs=0,
          payload=0, sack=b"", key_form=2, put_offset=0, mode=0, channel_data=False):
    """A datagram from node `frm`; mode 0 valid MAC, 1 bad MAC, 2 stranger, 3 wrong key."""
    if mode == 0:
        op = 12 | frm
    else:
        op = 15 | frm << 4 | (mode - 1) << 5
    b = bytes([op, 0, (ptype - 1) | (0x80 if channel_data else 0), flags, 7])
    b += bytes([seq_delta & 0xFF])
    if ptype == PROBE_REPLY:
        b += bytes([0])
    b += bytes([ack_delta & 0xFF, 0, 0]) + u16(5) + bytes([msg_delta])
    b += bytes([0]) + u16(msg_len) + bytes([offset_segs])  # len_form 0: msg_len as given
    b += bytes([0])  # tx stamp delta
    if ptype == PUT:
        b += bytes([key_form]) + u16(put_offset)
    if ptype == ACK:
        b += bytes([len(sack) // 8]) + sack
    else:
        b += u16(payload) + bytes([0x41])
    if mode:
        b += bytes([5])
    return b


# The first byte: auth (bits 0-1: header, full, none, header), congestion
# control (bits 2-3: none, aimd, timely, swift), probe strategy (bits 4-5),
# rto_mode fixed (bit 6).
DEFAULT = bytes([0])
AIMD_FULL = bytes([1 | 1 << 2])
SWIFT_NONE_ADAPTIVE = bytes([2 | 3 << 2 | 3 << 4])
TIMELY_FIXED_RTO = bytes([2 << 2 | 1 << 4 | 1 << 6])

seeds = {
    "eager_both_ways": send(0, 0, 40) + send(1, 1, 700) + rounds(7) + rounds(7),
    "multi_segment": send(0, 3, 12000) + rounds(7) + tick(9) + rounds(7),
    "command_and_data": send(0, 0, 10) + send(0, 2, 5000) + send(1, 0, 20) + send(1, 2, 8000) + rounds(7),
    "puts": put(0, 100, 5000) + put(1, 0, 300, 9) + rounds(7) + rounds(7),
    "drop_then_rto": send(0, 2, 4000) + fault(0, 1, True) + rounds(3) + wait(3) + rounds(7),
    "dup_reorder_delay": send(0, 3, 9000) + fault(1, 1, True) + fault(2, 1, True, 1) + fault(3, 1, True)
    + rounds(7) + RELEASE + rounds(7),
    "delayed_ack": send(0, 0, 8) + alone(0) + alone(1) + tick(20) + alone(1) + alone(0),
    "peer_timeout": send(0, 1, 300) + b"".join(alone(0, 255) for _ in range(8)) + rounds(3),
    "probes": wait(50) + rounds(3) + wait(200) + rounds(3),
    "forged_data": send(0, 0, 30) + forge(0, DATA, payload=64) + forge(0, DATA, seq_delta=2, payload=9) + rounds(7),
    "forged_ack_sack": send(1, 2, 6000) + alone(1) + forge(0, ACK, ack_delta=1, flags=1,
                                                         sack=u32(0x5) + u32(0)) + rounds(7),
    "forged_chunk": send(0, 2, 6999) + alone(0) + forge(0, CHUNK, msg_delta=2, msg_len=7000, offset_segs=1, payload=500)
    + rounds(7),
    "forged_put": put(0, 0, 100) + forge(0, PUT, msg_len=200, payload=200, put_offset=16) + rounds(7),
    "forged_probe_reply": wait(100) + alone(1) + forge(0, PROBE_REPLY) + forge(0, PROBE, payload=16) + rounds(3),
    "forged_busy": send(1, 0, 30) + alone(1) + forge(0, BUSY, ack_delta=1, flags=1) + rounds(7),
    "bad_mac_stranger_key": send(0, 0, 30) + forge(0, DATA, payload=20, mode=1) + forge(0, DATA, payload=20, mode=2)
    + forge(0, DATA, payload=20, mode=3) + rounds(7),
}

settings = {"multi_segment": AIMD_FULL, "drop_then_rto": TIMELY_FIXED_RTO, "probes": SWIFT_NONE_ADAPTIVE,
            "forged_ack_sack": AIMD_FULL}
engine_seeds = {name: settings.get(name, DEFAULT) + program for name, program in seeds.items()}


# fuzz_matcher: 4-byte ops [op, a, b, c]; a picks the communicator (a % 3)
# and an arrival's peer (a / 3 % 3); b, c the source/tag (0x80: wildcard),
# or c the sequence delta (int8 % 6) of an arrival.
def arrival(peer, comm, tag, delta=0):
    return bytes([0, comm + 3 * peer, (tag + 2) % 8, delta & 0xFF])


def receive(comm, src, tag):  # src/tag None: any
    return bytes([1, comm, 0x80 if src is None else src, 0x80 if tag is None else (tag + 2) % 8])


def probe(comm, src, tag):
    return bytes([2]) + receive(comm, src, tag)[1:]


def cancel(which):
    return bytes([3, 0, which, 0])


matcher_seeds = {
    "in_order": arrival(0, 0, 1) + arrival(0, 0, 2) + receive(0, 0, 1) + receive(0, 0, 2),
    "posted_first": receive(1, None, None) + receive(1, 1, 3) + arrival(1, 1, 3) + arrival(1, 1, 3),
    "held_then_released": arrival(2, 0, 0, 2) + arrival(2, 0, 0, 1) + arrival(2, 0, 0) + receive(0, 2, 0),
    "behind_is_duplicate": arrival(0, 0, 0) + arrival(0, 0, 0, -1) + arrival(0, 0, 0, -5),
    "internal_tags": arrival(0, 2, -2) + receive(2, None, None) + probe(2, 0, -2) + receive(2, 0, -2),
    "probe_cancel": receive(0, 1, 4) + probe(0, None, None) + cancel(0) + arrival(1, 0, 4) + probe(0, 1, 4),
}

corpora = {"fuzz_engine": engine_seeds, "fuzz_matcher": matcher_seeds}
for target, corpus in corpora.items():
    out = os.path.join(here, "corpus", target)
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        os.remove(os.path.join(out, name))
    for name, data in corpus.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print(f"{len(corpus)} seeds in {out}")
