// rma/ops: every MPI accumulate op on every rttcc/rma.h type against a
// reference written out here per kind of type, on random data in aligned
// and unaligned buffers; MPI's table of valid pairs, invalid pairs refused
// with nothing written; `old`; wrapping integer arithmetic; MAXLOC/MINLOC
// ties; bool's nonzero bytes; sizes and names.
#include "cmocka_cxx.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "rma/ops.h"

using namespace rttcc;

namespace {

// ---- the types, as this test sees them -------------------------------------

enum Kind { kSigned, kUnsigned, kFloating, kComplex, kBool, kByte, kPair };

// Bytes of an element that carry its value (x86-64's long double: 10 of 16).
struct Span {
    size_t offset, len;
};

constexpr size_t kLongDoubleBytes = 10;

struct TypeCase {
    int type;
    Kind kind;
    size_t size;
    std::vector<Span> significant;
    void (*fill)(unsigned char *elem, std::mt19937_64 &rng);
    // out = a op b, for an op MPI allows on this kind.
    void (*expect)(int op, const unsigned char *a, const unsigned char *b, unsigned char *out);
};

template <class T>
T load(const unsigned char *p) {
    T x;
    std::memcpy(&x, p, sizeof x);
    return x;
}

template <class T>
void store(unsigned char *p, T x) {
    std::memcpy(p, &x, sizeof x);
}

// Random bytes everywhere, padding included.
void fill_bytes(unsigned char *elem, size_t size, std::mt19937_64 &rng) {
    for (size_t n = 0; n < size; ++n) elem[n] = static_cast<unsigned char>(rng());
}

// Small values, so that sums and products stay exact and ties happen.
template <class F>
F small_value(std::mt19937_64 &rng) {
    return static_cast<F>(static_cast<int>(rng() % 33) - 16) / 4;
}

// Integers: every bit pattern, computed through uint64_t and truncated.
template <class T>
void expect_integer(int op, const unsigned char *pa, const unsigned char *pb, unsigned char *out) {
    const T a = load<T>(pa), b = load<T>(pb);
    const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    T r = a;
    switch (op) {
        case RTTCC_RMA_REPLACE: r = b; break;
        case RTTCC_RMA_NO_OP: r = a; break;
        case RTTCC_RMA_SUM: r = static_cast<T>(ua + ub); break;
        case RTTCC_RMA_PROD: r = static_cast<T>(ua * ub); break;
        case RTTCC_RMA_MAX: r = a > b ? a : b; break;
        case RTTCC_RMA_MIN: r = a < b ? a : b; break;
        case RTTCC_RMA_LAND: r = (a != 0 && b != 0) ? 1 : 0; break;
        case RTTCC_RMA_LOR: r = (a != 0 || b != 0) ? 1 : 0; break;
        case RTTCC_RMA_LXOR: r = ((a != 0) != (b != 0)) ? 1 : 0; break;
        case RTTCC_RMA_BAND: r = static_cast<T>(ua & ub); break;
        case RTTCC_RMA_BOR: r = static_cast<T>(ua | ub); break;
        case RTTCC_RMA_BXOR: r = static_cast<T>(ua ^ ub); break;
        default: fail_msg("integer op %d", op);
    }
    store(out, r);
}

template <class F>
void fill_floating(unsigned char *elem, std::mt19937_64 &rng) {
    fill_bytes(elem, sizeof(F), rng);
    const F v = small_value<F>(rng);
    std::memcpy(elem, &v, sizeof(F) == 16 ? kLongDoubleBytes : sizeof(F));
}

template <class F>
void expect_floating(int op, const unsigned char *pa, const unsigned char *pb, unsigned char *out) {
    const F a = load<F>(pa), b = load<F>(pb);
    F r = a;
    switch (op) {
        case RTTCC_RMA_REPLACE: r = b; break;
        case RTTCC_RMA_NO_OP: r = a; break;
        case RTTCC_RMA_SUM: r = a + b; break;
        case RTTCC_RMA_PROD: r = a * b; break;
        case RTTCC_RMA_MAX: r = a > b ? a : b; break;
        case RTTCC_RMA_MIN: r = a < b ? a : b; break;
        default: fail_msg("floating op %d", op);
    }
    store(out, r);
}

// Complex: two F, real then imaginary (C's _Complex).
template <class F>
void fill_complex(unsigned char *elem, std::mt19937_64 &rng) {
    fill_floating<F>(elem, rng);
    fill_floating<F>(elem + sizeof(F), rng);
}

template <class F>
void expect_complex(int op, const unsigned char *pa, const unsigned char *pb, unsigned char *out) {
    const F ar = load<F>(pa), ai = load<F>(pa + sizeof(F));
    const F br = load<F>(pb), bi = load<F>(pb + sizeof(F));
    F re = ar, im = ai;
    switch (op) {
        case RTTCC_RMA_REPLACE: re = br, im = bi; break;
        case RTTCC_RMA_NO_OP: break;
        case RTTCC_RMA_SUM: re = ar + br, im = ai + bi; break;
        case RTTCC_RMA_PROD: re = ar * br - ai * bi, im = ar * bi + ai * br; break;
        default: fail_msg("complex op %d", op);
    }
    store(out, re);
    store(out + sizeof(F), im);
}

// Bool: any byte, nonzero is true; logical results are 0 or 1.
void fill_bool(unsigned char *elem, std::mt19937_64 &rng) {
    static const unsigned char values[] = {0, 1, 2, 0x80, 0xff, 0, 1};
    *elem = values[rng() % sizeof values];
}

void expect_bool(int op, const unsigned char *a, const unsigned char *b, unsigned char *out) {
    switch (op) {
        case RTTCC_RMA_REPLACE: *out = *b; break;
        case RTTCC_RMA_NO_OP: *out = *a; break;
        case RTTCC_RMA_LAND: *out = (*a && *b) ? 1 : 0; break;
        case RTTCC_RMA_LOR: *out = (*a || *b) ? 1 : 0; break;
        case RTTCC_RMA_LXOR: *out = (!*a != !*b) ? 1 : 0; break;
        default: fail_msg("bool op %d", op);
    }
}

void expect_byte(int op, const unsigned char *a, const unsigned char *b, unsigned char *out) {
    switch (op) {
        case RTTCC_RMA_REPLACE: *out = *b; break;
        case RTTCC_RMA_NO_OP: *out = *a; break;
        case RTTCC_RMA_BAND: *out = *a & *b; break;
        case RTTCC_RMA_BOR: *out = *a | *b; break;
        case RTTCC_RMA_BXOR: *out = *a ^ *b; break;
        default: fail_msg("byte op %d", op);
    }
}

// Pairs (value, index): few values and indices, so that ties are common.
template <class P>
void fill_pair(unsigned char *elem, std::mt19937_64 &rng) {
    using V = decltype(P::v);
    fill_bytes(elem, sizeof(P), rng);
    const V v = static_cast<V>(rng() % 4);
    const int i = static_cast<int>(rng() % 8) - 2;
    std::memcpy(elem + offsetof(P, v), &v, sizeof(V) == 16 ? kLongDoubleBytes : sizeof(V));
    std::memcpy(elem + offsetof(P, i), &i, sizeof i);
}

template <class P>
void expect_pair(int op, const unsigned char *pa, const unsigned char *pb, unsigned char *out) {
    using V = decltype(P::v);
    const V av = load<V>(pa + offsetof(P, v)), bv = load<V>(pb + offsetof(P, v));
    const int ai = load<int>(pa + offsetof(P, i)), bi = load<int>(pb + offsetof(P, i));
    V v = av;
    int i = ai;
    const bool b_better = op == RTTCC_RMA_MAXLOC ? bv > av : bv < av;
    switch (op) {
        case RTTCC_RMA_REPLACE: v = bv, i = bi; break;
        case RTTCC_RMA_NO_OP: break;
        case RTTCC_RMA_MAXLOC:
        case RTTCC_RMA_MINLOC:
            if (b_better) v = bv, i = bi;
            else if (bv == av) i = ai < bi ? ai : bi;
            break;
        default: fail_msg("pair op %d", op);
    }
    store(out + offsetof(P, v), v);
    store(out + offsetof(P, i), i);
}

template <class T>
TypeCase integer_case(int type) {
    return {type,
            std::is_signed_v<T> ? kSigned : kUnsigned,
            sizeof(T),
            {{0, sizeof(T)}},
            [](unsigned char *e, std::mt19937_64 &rng) { fill_bytes(e, sizeof(T), rng); },
            expect_integer<T>};
}

template <class F>
TypeCase floating_case(int type) {
    return {type, kFloating, sizeof(F), {{0, sizeof(F) == 16 ? kLongDoubleBytes : sizeof(F)}},
            fill_floating<F>, expect_floating<F>};
}

template <class F>
TypeCase complex_case(int type) {
    const size_t part = sizeof(F) == 16 ? kLongDoubleBytes : sizeof(F);
    return {type, kComplex, 2 * sizeof(F), {{0, part}, {sizeof(F), part}}, fill_complex<F>, expect_complex<F>};
}

template <class P>
TypeCase pair_case(int type) {
    using V = decltype(P::v);
    return {type,
            kPair,
            sizeof(P),
            {{offsetof(P, v), sizeof(V) == 16 ? kLongDoubleBytes : sizeof(V)}, {offsetof(P, i), sizeof(int)}},
            fill_pair<P>,
            expect_pair<P>};
}

const std::vector<TypeCase> &type_cases() {
    static const std::vector<TypeCase> cases = {
        integer_case<int8_t>(RTTCC_RMA_INT8),
        integer_case<uint8_t>(RTTCC_RMA_UINT8),
        integer_case<int16_t>(RTTCC_RMA_INT16),
        integer_case<uint16_t>(RTTCC_RMA_UINT16),
        integer_case<int32_t>(RTTCC_RMA_INT32),
        integer_case<uint32_t>(RTTCC_RMA_UINT32),
        integer_case<int64_t>(RTTCC_RMA_INT64),
        integer_case<uint64_t>(RTTCC_RMA_UINT64),
        floating_case<float>(RTTCC_RMA_FLOAT),
        floating_case<double>(RTTCC_RMA_DOUBLE),
        floating_case<long double>(RTTCC_RMA_LONG_DOUBLE),
        complex_case<float>(RTTCC_RMA_C_FLOAT_COMPLEX),
        complex_case<double>(RTTCC_RMA_C_DOUBLE_COMPLEX),
        complex_case<long double>(RTTCC_RMA_C_LONG_DOUBLE_COMPLEX),
        {RTTCC_RMA_BOOL, kBool, 1, {{0, 1}}, fill_bool, expect_bool},
        {RTTCC_RMA_BYTE, kByte, 1, {{0, 1}},
         [](unsigned char *e, std::mt19937_64 &rng) { fill_bytes(e, 1, rng); }, expect_byte},
        pair_case<rttcc_float_int_t>(RTTCC_RMA_FLOAT_INT),
        pair_case<rttcc_double_int_t>(RTTCC_RMA_DOUBLE_INT),
        pair_case<rttcc_long_int_t>(RTTCC_RMA_LONG_INT),
        pair_case<rttcc_2int_t>(RTTCC_RMA_2INT),
        pair_case<rttcc_short_int_t>(RTTCC_RMA_SHORT_INT),
        pair_case<rttcc_long_double_int_t>(RTTCC_RMA_LONG_DOUBLE_INT),
    };
    return cases;
}

// MPI-3.1 5.9.2, as a table of kinds per op.
bool mpi_allows(int op, Kind kind) {
    const bool integer = kind == kSigned || kind == kUnsigned;
    switch (op) {
        case RTTCC_RMA_REPLACE:
        case RTTCC_RMA_NO_OP: return true;
        case RTTCC_RMA_SUM:
        case RTTCC_RMA_PROD: return integer || kind == kFloating || kind == kComplex;
        case RTTCC_RMA_MAX:
        case RTTCC_RMA_MIN: return integer || kind == kFloating;
        case RTTCC_RMA_LAND:
        case RTTCC_RMA_LOR:
        case RTTCC_RMA_LXOR: return integer || kind == kBool;
        case RTTCC_RMA_BAND:
        case RTTCC_RMA_BOR:
        case RTTCC_RMA_BXOR: return integer || kind == kByte;
        case RTTCC_RMA_MAXLOC:
        case RTTCC_RMA_MINLOC: return kind == kPair;
    }
    fail_msg("op %d", op);
    return false;
}

// Fails unless every significant byte of `count` elements matches.
void assert_elements_equal(const TypeCase &tc, int op, const unsigned char *got, const unsigned char *want,
                           size_t count) {
    for (size_t n = 0; n < count; ++n)
        for (const Span &s : tc.significant)
            if (std::memcmp(got + n * tc.size + s.offset, want + n * tc.size + s.offset, s.len) != 0)
                fail_msg("%s on %s: element %zu differs", rma_op_name(op), rma_type_name(tc.type), n);
}

// ---- tests -----------------------------------------------------------------

void test_every_type_case_is_here(void **) {
    const auto &cases = type_cases();
    assert_int_equal(cases.size(), RTTCC_RMA_TYPE_COUNT);
    for (size_t n = 0; n < cases.size(); ++n) assert_int_equal(cases[n].type, n);
}

void test_sizes(void **) {
    for (const TypeCase &tc : type_cases()) assert_int_equal(rma_type_size(tc.type), tc.size);
    assert_int_equal(rma_type_size(RTTCC_RMA_INT32), 4);
    assert_int_equal(rma_type_size(RTTCC_RMA_C_DOUBLE_COMPLEX), 16);
    assert_int_equal(rma_type_size(RTTCC_RMA_BOOL), 1);
    assert_int_equal(rma_type_size(-1), 0);
    assert_int_equal(rma_type_size(RTTCC_RMA_TYPE_COUNT), 0);
}

void test_valid_pairs_are_mpis(void **) {
    for (int op = 0; op < RTTCC_RMA_OP_COUNT; ++op)
        for (const TypeCase &tc : type_cases())
            if (rma_op_valid(op, tc.type) != mpi_allows(op, tc.kind))
                fail_msg("%s on %s: valid says %d", rma_op_name(op), rma_type_name(tc.type),
                         rma_op_valid(op, tc.type));
    for (int type : {-1, int(RTTCC_RMA_TYPE_COUNT)}) assert_false(rma_op_valid(RTTCC_RMA_REPLACE, type));
    for (int op : {-1, int(RTTCC_RMA_OP_COUNT)}) assert_false(rma_op_valid(op, RTTCC_RMA_INT32));
}

// Every valid pair on random elements, at every alignment of dst, src and
// old: the result matches the reference, old is the prior dst, and no byte
// past the elements is touched.  The count spans whole blocks and a rest.
void test_every_op_on_every_type(void **) {
    constexpr size_t kCount = 77;
    constexpr size_t kGuard = 16;
    std::mt19937_64 rng(20240516);
    for (const TypeCase &tc : type_cases()) {
        const size_t bytes = kCount * tc.size;
        for (int op = 0; op < RTTCC_RMA_OP_COUNT; ++op) {
            if (!mpi_allows(op, tc.kind)) continue;
            for (size_t shift : {0, 1, 3}) {
                std::vector<unsigned char> dst(bytes + shift + kGuard), src(bytes + shift), old(bytes + 4 + kGuard);
                unsigned char *d = dst.data() + shift, *s = src.data() + shift, *o = old.data() + (shift ^ 1);
                for (size_t n = 0; n < kCount; ++n) tc.fill(d + n * tc.size, rng), tc.fill(s + n * tc.size, rng);
                fill_bytes(d + bytes, kGuard, rng);
                fill_bytes(o + bytes, kGuard, rng);
                const std::vector<unsigned char> before(d, d + bytes + kGuard), old_guard(o + bytes, o + bytes + kGuard);
                std::vector<unsigned char> want(bytes);
                for (size_t n = 0; n < kCount; ++n) tc.expect(op, d + n * tc.size, s + n * tc.size, &want[n * tc.size]);

                assert_int_equal(rma_apply(op, tc.type, d, s, kCount, o), RTTCC_OK);
                assert_elements_equal(tc, op, d, want.data(), kCount);
                assert_memory_equal(o, before.data(), bytes);
                assert_memory_equal(d + bytes, before.data() + bytes, kGuard);
                assert_memory_equal(o + bytes, old_guard.data(), kGuard);
                if (op == RTTCC_RMA_REPLACE) assert_memory_equal(d, s, bytes);  // whole elements, padding too
                if (op == RTTCC_RMA_NO_OP) assert_memory_equal(d, before.data(), bytes);
            }
        }
    }
}

// src may be dst itself.
void test_src_is_dst(void **) {
    int32_t v[40];
    for (int n = 0; n < 40; ++n) v[n] = n - 20;
    assert_int_equal(rma_apply(RTTCC_RMA_SUM, RTTCC_RMA_INT32, v, v, 40, nullptr), RTTCC_OK);
    for (int n = 0; n < 40; ++n) assert_int_equal(v[n], 2 * (n - 20));
}

void test_invalid_pairs_write_nothing(void **) {
    std::mt19937_64 rng(7);
    unsigned char dst[64], src[64], old[64];
    fill_bytes(dst, sizeof dst, rng);
    fill_bytes(src, sizeof src, rng);
    fill_bytes(old, sizeof old, rng);
    unsigned char dst_before[64], old_before[64];
    std::memcpy(dst_before, dst, sizeof dst);
    std::memcpy(old_before, old, sizeof old);
    int refused = 0;
    auto check = [&](int op, int type) {
        assert_int_equal(rma_apply(op, type, dst, src, 2, old), RTTCC_ERR_ARG);
        assert_memory_equal(dst, dst_before, sizeof dst);
        assert_memory_equal(old, old_before, sizeof old);
        ++refused;
    };
    for (int op = 0; op < RTTCC_RMA_OP_COUNT; ++op)
        for (const TypeCase &tc : type_cases())
            if (!mpi_allows(op, tc.kind)) check(op, tc.type);
    for (int type : {-1, int(RTTCC_RMA_TYPE_COUNT), 1000}) check(RTTCC_RMA_REPLACE, type);
    for (int op : {-1, int(RTTCC_RMA_OP_COUNT), 1000}) check(op, RTTCC_RMA_INT32);
    assert_true(refused > 100);
}

void test_signed_arithmetic_wraps(void **) {
    int32_t i32 = INT32_MAX, one = 1;
    assert_int_equal(rma_apply(RTTCC_RMA_SUM, RTTCC_RMA_INT32, &i32, &one, 1, nullptr), RTTCC_OK);
    assert_true(i32 == INT32_MIN);
    int64_t i64 = INT64_MAX, i64_src = INT64_MAX;
    assert_int_equal(rma_apply(RTTCC_RMA_SUM, RTTCC_RMA_INT64, &i64, &i64_src, 1, nullptr), RTTCC_OK);
    assert_true(i64 == -2);
    i64 = INT64_MIN, i64_src = -1;
    assert_int_equal(rma_apply(RTTCC_RMA_PROD, RTTCC_RMA_INT64, &i64, &i64_src, 1, nullptr), RTTCC_OK);
    assert_true(i64 == INT64_MIN);
    int8_t i8 = 100, three = 3;
    assert_int_equal(rma_apply(RTTCC_RMA_PROD, RTTCC_RMA_INT8, &i8, &three, 1, nullptr), RTTCC_OK);
    assert_int_equal(i8, 300 - 256);
    int16_t i16 = INT16_MIN, minus_one = -1;
    assert_int_equal(rma_apply(RTTCC_RMA_PROD, RTTCC_RMA_INT16, &i16, &minus_one, 1, nullptr), RTTCC_OK);
    assert_int_equal(i16, INT16_MIN);
    uint16_t u16 = 65535, u16_src = 65535;  // the product overflows int
    assert_int_equal(rma_apply(RTTCC_RMA_PROD, RTTCC_RMA_UINT16, &u16, &u16_src, 1, nullptr), RTTCC_OK);
    assert_int_equal(u16, 1);
}

void test_maxloc_minloc_ties_take_the_smaller_index(void **) {
    rttcc_2int_t dst[4] = {{5, 7}, {5, 3}, {5, 7}, {9, 8}}, src[4] = {{5, 3}, {5, 7}, {6, 9}, {2, 1}};
    assert_int_equal(rma_apply(RTTCC_RMA_MAXLOC, RTTCC_RMA_2INT, dst, src, 4, nullptr), RTTCC_OK);
    const rttcc_2int_t max_want[4] = {{5, 3}, {5, 3}, {6, 9}, {9, 8}};
    for (int n = 0; n < 4; ++n) assert_int_equal(dst[n].v, max_want[n].v), assert_int_equal(dst[n].i, max_want[n].i);

    rttcc_double_int_t ddst[3] = {{1.5, 4}, {1.5, 2}, {1.5, 4}}, dsrc[3] = {{1.5, 2}, {1.5, 4}, {0.5, 9}};
    assert_int_equal(rma_apply(RTTCC_RMA_MINLOC, RTTCC_RMA_DOUBLE_INT, ddst, dsrc, 3, nullptr), RTTCC_OK);
    assert_int_equal(ddst[0].i, 2);
    assert_int_equal(ddst[1].i, 2);
    assert_true(ddst[2].v == 0.5 && ddst[2].i == 9);
}

void test_logical_results_are_zero_or_one(void **) {
    unsigned char b[3] = {2, 0x80, 0}, bs[3] = {0x40, 0, 0};
    assert_int_equal(rma_apply(RTTCC_RMA_LOR, RTTCC_RMA_BOOL, b, bs, 3, nullptr), RTTCC_OK);
    assert_int_equal(b[0], 1);
    assert_int_equal(b[1], 1);
    assert_int_equal(b[2], 0);
    int32_t i[2] = {-5, 7}, is[2] = {12, 0};
    assert_int_equal(rma_apply(RTTCC_RMA_LAND, RTTCC_RMA_INT32, i, is, 2, nullptr), RTTCC_OK);
    assert_int_equal(i[0], 1);
    assert_int_equal(i[1], 0);
}

void test_no_op_fills_old_only(void **) {
    double dst[3] = {1, 2, 3}, src[3] = {7, 8, 9}, old[3] = {0, 0, 0};
    assert_int_equal(rma_apply(RTTCC_RMA_NO_OP, RTTCC_RMA_DOUBLE, dst, src, 3, old), RTTCC_OK);
    for (int n = 0; n < 3; ++n) assert_true(dst[n] == n + 1 && old[n] == n + 1);
}

// No element: nothing written, and MPI's count 0 may come with null buffers.
void test_empty_applies_nothing(void **) {
    int32_t dst = 4, src = 5, old = 6;
    assert_int_equal(rma_apply(RTTCC_RMA_SUM, RTTCC_RMA_INT32, &dst, &src, 0, &old), RTTCC_OK);
    assert_int_equal(dst, 4);
    assert_int_equal(old, 6);
    for (int op : {RTTCC_RMA_REPLACE, RTTCC_RMA_SUM})
        assert_int_equal(rma_apply(op, RTTCC_RMA_INT32, nullptr, nullptr, 0, nullptr), RTTCC_OK);
    assert_int_equal(rma_apply(RTTCC_RMA_SUM, RTTCC_RMA_BOOL, nullptr, nullptr, 0, nullptr), RTTCC_ERR_ARG);
}

void test_names(void **) {
    assert_string_equal(rma_op_name(RTTCC_RMA_SUM), "MPI_SUM");
    assert_string_equal(rma_op_name(RTTCC_RMA_REPLACE), "MPI_REPLACE");
    assert_string_equal(rma_op_name(RTTCC_RMA_MINLOC), "MPI_MINLOC");
    assert_string_equal(rma_op_name(RTTCC_RMA_OP_COUNT), "unknown");
    assert_string_equal(rma_type_name(RTTCC_RMA_INT32), "int32");
    assert_string_equal(rma_type_name(RTTCC_RMA_DOUBLE_INT), "double_int");
    assert_string_equal(rma_type_name(RTTCC_RMA_2INT), "2int");
    assert_string_equal(rma_type_name(RTTCC_RMA_C_LONG_DOUBLE_COMPLEX), "c_long_double_complex");
    assert_string_equal(rma_type_name(-1), "unknown");
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_type_case_is_here),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_valid_pairs_are_mpis),
        cmocka_unit_test(test_every_op_on_every_type),
        cmocka_unit_test(test_src_is_dst),
        cmocka_unit_test(test_invalid_pairs_write_nothing),
        cmocka_unit_test(test_signed_arithmetic_wraps),
        cmocka_unit_test(test_maxloc_minloc_ties_take_the_smaller_index),
        cmocka_unit_test(test_logical_results_are_zero_or_one),
        cmocka_unit_test(test_no_op_fills_old_only),
        cmocka_unit_test(test_empty_applies_nothing),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
