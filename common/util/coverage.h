// Which bytes of a message have arrived: disjoint spans in offset order,
// never touching (adjacent ones are merged), so a message that arrives in
// order is one span however many chunks it has.
//
//     0        a    b        c    d              len
//     [########)    [########)    .   .   .   .   )
//
// A chunk that touches a covered byte is refused (overlaps()), so a message
// is whole exactly when every byte arrived once.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace rttcc {

class Coverage {
public:
    // Spans whose storage a reset() keeps for the next message: enough
    // for the holes of ordinary loss, without allocating again.
    static constexpr size_t kKeep = 8;

    size_t spans() const { return spans_.size(); }
    size_t memory() const { return spans_.capacity() * sizeof(Span); }
    bool whole(uint32_t len) const { return spans_.size() == 1 && spans_[0].begin == 0 && spans_[0].end == len; }

    // Does [offset, offset + n) share a byte with what arrived?
    bool overlaps(uint32_t offset, uint32_t n) const {
        if (appends(offset)) return false;
        const auto it = after(offset);
        return it != spans_.end() && it->begin < offset + n;
    }
    // Spans add() would make more: 1 (touches none), 0 (extends one) or -1 (joins two).
    int added_spans(uint32_t offset, uint32_t n) const {
        if (appends(offset)) return 0;
        const auto it = after(offset);
        return 1 - touches_left(it, offset) - touches_right(it, offset + n);
    }
    // Records [offset, offset + n), which must not overlap; returns added_spans().
    int add(uint32_t offset, uint32_t n) {
        if (appends(offset)) {
            spans_.back().end = offset + n;
            return 0;
        }
        const auto it = spans_.begin() + (after(offset) - spans_.cbegin());
        const bool left = touches_left(it, offset), right = touches_right(it, offset + n);
        if (left && right) {
            std::prev(it)->end = it->end;
            spans_.erase(it);
        } else if (left) {
            std::prev(it)->end = offset + n;
        } else if (right) {
            it->begin = offset;
        } else {
            spans_.insert(it, Span{offset, offset + n});
        }
        return 1 - left - right;
    }
    void reset() {
        spans_.clear();
        if (spans_.capacity() > kKeep) std::vector<Span>().swap(spans_);
    }

private:
    struct Span {
        uint32_t begin, end;  // [begin, end)
    };
    using Iter = std::vector<Span>::const_iterator;

    // Does a chunk at `offset` begin where the last span ends?  Chunks that
    // arrive in order do: they extend it, and overlap nothing.
    bool appends(uint32_t offset) const { return !spans_.empty() && spans_.back().end == offset; }

    // The first span that ends after `offset`.
    Iter after(uint32_t offset) const {
        return std::upper_bound(spans_.begin(), spans_.end(), offset,
                                [](uint32_t o, const Span &s) { return o < s.end; });
    }
    bool touches_left(Iter it, uint32_t begin) const { return it != spans_.begin() && std::prev(it)->end == begin; }
    bool touches_right(Iter it, uint32_t end) const { return it != spans_.end() && it->begin == end; }

    std::vector<Span> spans_;
};

}  // namespace rttcc
