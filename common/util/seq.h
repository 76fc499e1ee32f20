// Sequence numbers: 32-bit, compared modulo 2^32 (serial-number arithmetic).
// Valid while every pair compared is less than 2^31 apart; windows are at
// most 65536, so this always holds.
#pragma once
#include <cstdint>

namespace rttcc {

using seq_t = uint32_t;

inline int32_t seq_diff(seq_t a, seq_t b) { return static_cast<int32_t>(a - b); }
inline bool seq_lt(seq_t a, seq_t b) { return seq_diff(a, b) < 0; }
inline bool seq_le(seq_t a, seq_t b) { return seq_diff(a, b) <= 0; }
inline bool seq_gt(seq_t a, seq_t b) { return seq_diff(a, b) > 0; }
inline bool seq_ge(seq_t a, seq_t b) { return seq_diff(a, b) >= 0; }

}  // namespace rttcc
