#!/usr/bin/env python3
"""Writes the seed corpora (corpus/<target>/): for fuzz_engine,
fuzz_matcher and fuzz_exchange, one small program per op kind, in the
encoding each target decodes.  Run it again after changing an encoding:
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



# fuzz_exchange: two setting bytes, then ops.  s0: nodes 2 + s0 % 3, policy
# (s0 >> 2) % 5, max_concurrent 1 + bit 5, segment (bits 6-7: max, 700,
# 1500, 4096); s1: segments_ahead 1 + bits 0-1, grants (bits 2-3: auto, all,
# 1, 2), eager limit (bits 4-5: 0, 64, 1024, 8000), eager_total 256 (bit 6).
def xsettings(nodes, policy=0, concurrent=1, segment=2, ahead=1, grants=0, eager=1, small_total=False):
    return bytes([(nodes - 2) | policy << 2 | (concurrent - 1) << 5 | segment << 6,
                  (ahead - 1) | grants << 2 | eager << 4 | (0x40 if small_total else 0)])


def block(size, room=None):
    """One pair's block: 0, 1-200 (one byte), or up to 9000 (two); room: the
    receiver's, shorter or longer by 1-8 than the block (or 0)."""
    if size == 0:
        b, rest = 0, b""
    elif size <= 200:
        b, rest = 1, bytes([size - 1])
    else:
        b, rest = 2, u16(size - 1)
    if room is not None and room != size:
        d = abs(room - size) if room else 1
        b |= 0x80 | (0x40 if room > size else 0) | ((d - 1) & 7) << 2
    return bytes([b]) + rest


def call(*blocks):  # one block per ordered pair (i, j), i != j, i major
    return bytes([0]) + b"".join(blocks)


def begin(node):
    return bytes([1 | node << 4])


def xrounds(k):  # k + 1 rounds of everyone
    return bytes([3 | k << 4])


def xfault(kind, endpoint, data_channel=False, at=0):  # 0 drop 1 dup 2 reorder 3 delay
    return bytes([4 + kind, endpoint | (0x80 if data_channel else 0), at])


def xwait(n):  # (n % 64 + 1) * 10 ms
    return bytes([10, n])


def xalone(node):
    return bytes([11 | node << 4])


def control(frm_to, ctype=1, seq_delta=1, key_delta=0, len_delta=0, fill=7):
    """An RTR (1), TRUNC (2) or RTR_BLOCK (3) from the pair byte's node (from
    = b % n, to = from + 1 + (b >> 2) % (n - 1)), its fields near the live
    call's: seq = the receiver's next call + seq_delta - 1."""
    return bytes([12, frm_to, ctype - 1, seq_delta, key_delta, len_delta, fill])


def xput(frm_to, offset=0, length=100, fill=9):
    return bytes([14, frm_to, 0, offset]) + u16(length - 1) + bytes([fill])


def all_begin(n):
    return b"".join(begin(i) for i in range(n))


exchange_seeds = {
    "two_eager": xsettings(2) + call(block(40), block(100)) + all_begin(2) + xrounds(7),
    "two_segments": xsettings(2, segment=1, ahead=2) + call(block(5000), block(3000)) + all_begin(2)
    + xrounds(7) + xrounds(7),
    "three_mixed": xsettings(3, policy=1, concurrent=2, eager=2) + call(block(0), block(9000), block(7), block(0),
                                                                      block(2500), block(180)) + all_begin(3)
    + xrounds(7),
    "four_paced": xsettings(4, policy=4, grants=2, eager=0) + call(*[block(1500 + 700 * k) for k in range(12)])
    + begin(3) + xrounds(3) + begin(0) + begin(2) + begin(1) + xrounds(7),
    "truncations": xsettings(3) + call(block(100, 90), block(4000, 4003), block(0, 5), block(10),
                                       block(2000, 0), block(20)) + all_begin(3) + xrounds(7),
    "faults": xsettings(2, segment=1) + call(block(6000), block(6000)) + all_begin(2) + xrounds(1)
    + xfault(0, 1, True) + xfault(1, 0, True) + xfault(2, 1) + xfault(3, 0, True) + xrounds(7) + bytes([8])
    + xwait(5) + xrounds(7),
    "two_calls": xsettings(2, small_total=True) + call(block(300), block(0)) + call(block(2000), block(50))
    + begin(0) + xrounds(3) + begin(0) + begin(1) + xrounds(7) + begin(1) + xrounds(7),
    "peer_timeout": xsettings(2) + call(block(3000), block(3000)) + begin(0) + b"".join(
        xwait(63) + xalone(0) for _ in range(3)),
    "forged_rtr": xsettings(2) + call(block(3000), block(20)) + begin(1) + control(1, 1) + control(1, 2)
    + control(1, 3, fill=3) + begin(0) + xrounds(7),
    "forged_early": xsettings(3) + control(0, 1, seq_delta=2) + control(1, 3, seq_delta=1) + call(
        *[block(64)] * 6) + all_begin(3) + xrounds(7),
    "forged_put": xsettings(2, eager=0) + call(block(3000), block(3000)) + all_begin(2) + xrounds(0)
    + xput(0, 0, 100) + xput(1, 200, 3000) + xrounds(7),
}

corpora = {"fuzz_engine": engine_seeds, "fuzz_matcher": matcher_seeds, "fuzz_exchange": exchange_seeds}
for target, corpus in corpora.items():
    out = os.path.join(here, "corpus", target)
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        os.remove(os.path.join(out, name))
    for name, data in corpus.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print(f"{len(corpus)} seeds in {out}")
