// Walking a byte range of a message held in iovec pieces.
#pragma once
#include <sys/uio.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace rttcc {

// Calls fn(base, n) for each piece of bytes [offset, offset + len) of the
// iovecs, in order.
template <class Fn>
void for_each_piece(const iovec *iov, int iovcnt, size_t offset, size_t len, Fn &&fn) {
    for (int i = 0; i < iovcnt && len; ++i) {
        const size_t piece = iov[i].iov_len;
        if (offset >= piece) {
            offset -= piece;
            continue;
        }
        const size_t n = std::min(piece - offset, len);
        fn(static_cast<uint8_t *>(iov[i].iov_base) + offset, n);
        len -= n;
        offset = 0;
    }
}

// Copies the iovecs' bytes, in order, to `to`; returns the end of what it wrote.
inline uint8_t *gather(uint8_t *to, const iovec *iov, int iovcnt) {
    for (int i = 0; i < iovcnt; ++i) {
        if (iov[i].iov_len) std::memcpy(to, iov[i].iov_base, iov[i].iov_len);
        to += iov[i].iov_len;
    }
    return to;
}

}  // namespace rttcc
