// Reassembly of messages that arrive cut into chunks, in any order.  Each
// chunk's sequence number was already checked new by the RecvWindow; a
// message is complete when each of its bytes arrived exactly once
// (coverage.h): a chunk over bytes already there is refused, not counted.
//
// What one peer may hold is bounded by our receive window W, which no legal
// sender can outrun.  Its chunked messages are cut one after another (msg
// ids rising with sequence numbers), and every chunk it cut but we lack is
// at or after the cumulative point `next`, every chunk we took is before
// next + W:
//
//   seq:  ...all arrived | next                                  next + W
//                        | x  M1  x  M2  M2  x  M2  x  M3  .  .  .  |
//                          ^missing chunks, each before an arrived one
//
// so at most W/2 + 1 messages are partly there (each but the last lacks a
// chunk before an arrived chunk of the next) and at most W + 1 spans are
// open in all (each hole inside a message lacks a chunk before an arrived
// one of its own).  A chunk beyond either bound is refused.
//
// And once an arrived chunk of a message is before `next`, every message
// cut before it must be whole: one that is not never will be (its sender
// does not follow the protocol), and is abandoned, its buffer freed.
#pragma once
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "util/copy_bytes.h"
#include "util/coverage.h"
#include "util/pool.h"
#include "util/seq.h"

namespace rttcc {

class Reassembly {
public:
    struct Message {
        uint32_t msg_id;    // sender's id of the message
        uint32_t len;       // whole length
        uint8_t tag;        // caller's tag
        uint8_t *buf;       // from the engine's BufferPool
        Coverage covered;   // bytes arrived so far
    };
    struct Chunk {
        seq_t seq;            // its segment's sequence number
        uint32_t msg_id;      // its message's id, length and tag
        uint32_t len;
        uint8_t tag;
        uint32_t offset;      // where its bytes go in the message
        uint32_t n;           // how many (offset + n <= len: check_header)
        const uint8_t *data;  // the bytes (add() only)
    };
    enum class Fit {
        kYes,       // add() takes it
        kMismatch,  // its length or tag differ from its message's other chunks
        kOverlap,   // its bytes overlap bytes of its message already there
        kSettled,   // its message must be whole already (a later one's chunk is before next)
        kFull,      // no room: a bound above, or no buffer under reassembly_max_mb
    };

    explicit Reassembly(uint32_t window) : max_messages_(window / 2 + 1), max_spans_(window + 1) {}

    // Is this chunk, not yet accepted with the RecvWindow at `next`, for add()?
    Fit fit(const BufferPool &buffers, const Chunk &c, seq_t next) const {
        return settled(c.msg_id, next) ? Fit::kSettled : room(buffers, c);
    }

    // Adds a chunk that fits, once accepted (`next` is past it now); any
    // other is left alone.  Returns its message when this chunk made it
    // whole (the caller takes it, delivers it, frees its buffer), else nullptr.
    // *abandoned: messages this chunk proved will never be whole (freed).
    // *no_memory: the chunk opened a message and no buffer could be had
    // for it (the process is out of memory): the chunk is lost.
    Message *add(BufferPool &buffers, const Chunk &c, seq_t next, uint32_t *abandoned, bool *no_memory) {
        *abandoned = 0;
        *no_memory = false;
        if (room(buffers, c) != Fit::kYes) return nullptr;
        Message *m = find(c.msg_id);
        if (!m && !(m = open(buffers, c))) {
            *no_memory = true;
            return nullptr;
        }
        spans_ += m->covered.add(c.offset, c.n);
        copy_bytes(m->buf + c.offset, c.data, c.n);
        const bool whole = m->covered.whole(m->len);
        if (!latest_seen_ || seq_gt(c.msg_id, latest_id_)) {
            latest_seen_ = true;
            latest_id_ = c.msg_id;
            latest_seq_ = c.seq;
        } else if (c.msg_id == latest_id_ && seq_lt(c.seq, latest_seq_)) {
            latest_seq_ = c.seq;
        }
        *abandoned = abandon_settled(buffers, next);
        return whole ? find(c.msg_id) : nullptr;
    }

    // A whole message taken out: its slot is free, its buffer the caller's
    // (back to the BufferPool once delivered).  So the peer's end (clear())
    // cannot free the buffer while a client reads it with the lock released.
    struct Whole {
        uint8_t *buf;
        uint32_t len;
        uint8_t tag;
    };
    Whole take(Message *m) {
        const Whole w{m->buf, m->len, m->tag};
        m->buf = nullptr;
        drop_slot(static_cast<size_t>(m - slots_.data()));
        return w;
    }

    void clear(BufferPool &buffers) {
        while (active_) drop(buffers, active_ - 1);
        latest_seen_ = false;
    }

    size_t active() const { return active_; }
    size_t spans() const { return spans_; }
    size_t memory() const {
        size_t bytes = slots_.capacity() * sizeof(Message);
        for (const Message &m : slots_) bytes += m.covered.memory();
        return bytes;
    }

    Message *find(uint32_t msg_id) {
        return const_cast<Message *>(static_cast<const Reassembly *>(this)->find(msg_id));
    }
    const Message *find(uint32_t msg_id) const {
        for (size_t i = 0; i < active_; ++i)
            if (slots_[i].msg_id == msg_id) return &slots_[i];
        return nullptr;
    }

private:
    // fit() but for kSettled.
    Fit room(const BufferPool &buffers, const Chunk &c) const {
        const Message *m = find(c.msg_id);
        if (!m) return active_ < max_messages_ && spans_ < max_spans_ && buffers.can_get(c.len) ? Fit::kYes : Fit::kFull;
        if (m->len != c.len || m->tag != c.tag) return Fit::kMismatch;
        if (m->covered.overlaps(c.offset, c.n)) return Fit::kOverlap;
        return spans_ < max_spans_ || m->covered.added_spans(c.offset, c.n) <= 0 ? Fit::kYes : Fit::kFull;
    }

    // A message cut before the newest one seen, whose chunk at latest_seq_
    // is already before next.
    bool settled(uint32_t msg_id, seq_t next) const {
        return latest_seen_ && seq_lt(msg_id, latest_id_) && seq_lt(latest_seq_, next);
    }

    // A new message's slot and buffer (fit() saw can_get), or nullptr if
    // the buffer could not be allocated.
    Message *open(BufferPool &buffers, const Chunk &c) {
        uint8_t *buf = buffers.get(c.len);
        if (!buf) return nullptr;
        if (active_ == slots_.size()) slots_.emplace_back();  // slots are kept: no allocation once warm
        Message &m = slots_[active_++];
        m.msg_id = c.msg_id;
        m.len = c.len;
        m.tag = c.tag;
        m.buf = buf;
        return &m;
    }

    // Frees slot i's message; the last active slot takes its place.
    void drop(BufferPool &buffers, size_t i) {
        buffers.put(slots_[i].buf, slots_[i].len);
        drop_slot(i);
    }
    // With no message partly there, the newest one seen says nothing more
    // (every older one was whole) and is forgotten: msg ids advance with
    // every message, puts included, so one kept through 2^31 of them would
    // make the next chunked message look older, and settled.
    void drop_slot(size_t i) {
        Message &m = slots_[i];
        spans_ -= m.covered.spans();
        m.covered.reset();
        if (i != --active_) std::swap(m, slots_[active_]);
        if (active_ == 0) latest_seen_ = false;
    }

    uint32_t abandon_settled(BufferPool &buffers, seq_t next) {
        uint32_t n = 0;
        for (size_t i = 0; i < active_;) {
            const Message &m = slots_[i];
            if (settled(m.msg_id, next) && !m.covered.whole(m.len)) {
                drop(buffers, i);
                ++n;
            } else {
                ++i;
            }
        }
        return n;
    }

    size_t max_messages_;          // messages partly arrived at most (W/2 + 1)
    size_t max_spans_;             // their spans at most, in all (W + 1)
    std::vector<Message> slots_;   // [0, active_) hold messages; the rest keep their storage
    size_t active_ = 0;
    size_t spans_ = 0;             // spans of the active messages
    bool latest_seen_ = false;     // the newest message (by id) a chunk came for:
    uint32_t latest_id_ = 0;       //   its id
    seq_t latest_seq_ = 0;         //   and its earliest chunk that arrived
};

}  // namespace rttcc
