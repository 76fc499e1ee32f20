// Reassembly of messages that arrive cut into chunks, in any order.  Each
// chunk's sequence number was already checked new by the RecvWindow, so a
// chunk is never counted twice and a message is complete when its bytes are.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "pool.h"

namespace rttcc {

class Reassembly {
public:
    struct Message {
        uint32_t msg_id;   // sender's id of the message
        uint32_t len;      // whole length
        uint32_t filled;   // bytes arrived so far
        uint8_t tag;       // caller's tag
        uint8_t *buf;      // from the engine's BufferPool
    };

    // Would add() take this chunk?  (It agrees with its message's chunks so
    // far, or, opening a message, the pool has a buffer for it now.)
    bool fits(const BufferPool &buffers, uint32_t msg_id, uint32_t len, uint8_t tag) const {
        for (const auto &m : active_)
            if (m.msg_id == msg_id) return m.len == len && m.tag == tag;
        return buffers.can_get(len);
    }

    // Adds a chunk.  Returns the message when this chunk completed it (the
    // caller delivers it, then calls release()), nullptr otherwise, and sets
    // *bad when the chunk contradicts what arrived before (length mismatch).
    Message *add(BufferPool &buffers, uint32_t msg_id, uint32_t len, uint8_t tag,
                 uint32_t offset, const uint8_t *data, uint32_t n, bool *bad) {
        *bad = false;
        Message *m = find(msg_id);
        if (!m) {
            uint8_t *buf = buffers.get(len);
            if (!buf) {
                *bad = true;
                return nullptr;
            }
            active_.push_back(Message{msg_id, len, 0, tag, buf});
            m = &active_.back();
        } else if (m->len != len || m->tag != tag) {
            *bad = true;
            return nullptr;
        }
        std::memcpy(m->buf + offset, data, n);
        m->filled += n;
        return m->filled >= m->len ? m : nullptr;
    }

    void release(BufferPool &buffers, Message *m) {
        buffers.put(m->buf, m->len);
        *m = active_.back();
        active_.pop_back();
    }

    void clear(BufferPool &buffers) {
        for (auto &m : active_) buffers.put(m.buf, m.len);
        active_.clear();
    }

    size_t active() const { return active_.size(); }
    size_t memory() const { return active_.capacity() * sizeof(Message); }

    Message *find(uint32_t msg_id) {
        for (auto &m : active_)
            if (m.msg_id == msg_id) return &m;
        return nullptr;
    }

private:
    std::vector<Message> active_;  // messages partly arrived (few at a time)
};

}  // namespace rttcc
