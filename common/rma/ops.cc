// MPI's accumulate ops on rttcc/rma.h's element types.  Each element type
// maps to a C++ type (Element below) whose kind decides which ops it takes;
// rma_apply runs one loop per (op, type), instantiated from combine().
#include "rma/ops.h"

#include <array>
#include <complex>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <type_traits>

namespace rttcc {

namespace {

// C's _Bool as stored: any nonzero byte is true; results are 0 or 1.
enum class Bool : uint8_t {};

template <int Type>
struct Element;
#define RTTCC_RMA_ELEMENT(name, cxx_type) \
    template <>                           \
    struct Element<RTTCC_RMA_##name> {    \
        using type = cxx_type;            \
    };
RTTCC_RMA_ELEMENT(INT8, int8_t)
RTTCC_RMA_ELEMENT(UINT8, uint8_t)
RTTCC_RMA_ELEMENT(INT16, int16_t)
RTTCC_RMA_ELEMENT(UINT16, uint16_t)
RTTCC_RMA_ELEMENT(INT32, int32_t)
RTTCC_RMA_ELEMENT(UINT32, uint32_t)
RTTCC_RMA_ELEMENT(INT64, int64_t)
RTTCC_RMA_ELEMENT(UINT64, uint64_t)
RTTCC_RMA_ELEMENT(FLOAT, float)
RTTCC_RMA_ELEMENT(DOUBLE, double)
RTTCC_RMA_ELEMENT(LONG_DOUBLE, long double)
RTTCC_RMA_ELEMENT(C_FLOAT_COMPLEX, std::complex<float>)  // layout of C's _Complex
RTTCC_RMA_ELEMENT(C_DOUBLE_COMPLEX, std::complex<double>)
RTTCC_RMA_ELEMENT(C_LONG_DOUBLE_COMPLEX, std::complex<long double>)
RTTCC_RMA_ELEMENT(BOOL, Bool)
RTTCC_RMA_ELEMENT(BYTE, std::byte)
RTTCC_RMA_ELEMENT(FLOAT_INT, rttcc_float_int_t)
RTTCC_RMA_ELEMENT(DOUBLE_INT, rttcc_double_int_t)
RTTCC_RMA_ELEMENT(LONG_INT, rttcc_long_int_t)
RTTCC_RMA_ELEMENT(2INT, rttcc_2int_t)
RTTCC_RMA_ELEMENT(SHORT_INT, rttcc_short_int_t)
RTTCC_RMA_ELEMENT(LONG_DOUBLE_INT, rttcc_long_double_int_t)
#undef RTTCC_RMA_ELEMENT

template <class T>
struct Tag {
    using type = T;
};

// Calls visit(Tag<C++ type of `type`>{}); false for a code out of range.
template <class Visit>
bool visit_type(int type, Visit &&visit) {
    switch (type) {
#define RTTCC_RMA_VISIT(name)                                    \
    case RTTCC_RMA_##name:                                       \
        visit(Tag<typename Element<RTTCC_RMA_##name>::type>{}); \
        return true;
        RTTCC_RMA_TYPES(RTTCC_RMA_VISIT)
#undef RTTCC_RMA_VISIT
        default: return false;
    }
}

// ---- kinds ---------------------------------------------------------------

template <class T>
struct IsComplex : std::false_type {};
template <class F>
struct IsComplex<std::complex<F>> : std::true_type {};

template <class T, class = void>
struct IsPair : std::false_type {};
template <class T>
struct IsPair<T, std::void_t<decltype(T::v), decltype(T::i)>> : std::true_type {};

template <class T>
constexpr bool kInteger = std::is_integral_v<T>;
template <class T>
constexpr bool kFloating = std::is_floating_point_v<T>;
template <class T>
constexpr bool kComplex = IsComplex<T>::value;
template <class T>
constexpr bool kBool = std::is_same_v<T, Bool>;
template <class T>
constexpr bool kByte = std::is_same_v<T, std::byte>;
template <class T>
constexpr bool kPair = IsPair<T>::value;

// MPI-3.1 5.9.2: which op takes which kind of type.
template <class T>
constexpr bool valid(int op) {
    switch (op) {
        case RTTCC_RMA_REPLACE:
        case RTTCC_RMA_NO_OP: return true;
        case RTTCC_RMA_SUM:
        case RTTCC_RMA_PROD: return kInteger<T> || kFloating<T> || kComplex<T>;
        case RTTCC_RMA_MAX:
        case RTTCC_RMA_MIN: return kInteger<T> || kFloating<T>;
        case RTTCC_RMA_LAND:
        case RTTCC_RMA_LOR:
        case RTTCC_RMA_LXOR: return kInteger<T> || kBool<T>;
        case RTTCC_RMA_BAND:
        case RTTCC_RMA_BOR:
        case RTTCC_RMA_BXOR: return kInteger<T> || kByte<T>;
        case RTTCC_RMA_MAXLOC:
        case RTTCC_RMA_MINLOC: return kPair<T>;
        default: return false;
    }
}

// ---- one element -----------------------------------------------------------

// Integer arithmetic wraps: done unsigned, at least as wide as unsigned int
// (uint16_t * uint16_t would be a signed int product).
template <class T>
using Wide = decltype(std::make_unsigned_t<T>() + 0u);

template <class T>
bool truth(T x) {
    return x != T{};
}

template <class T>
T from_truth(bool b) {
    return static_cast<T>(b ? 1 : 0);
}

// dst op src for one element (a: the target's, b: the origin's).
template <int Op, class T>
T combine(T a, T b) {
    if constexpr (Op == RTTCC_RMA_SUM) {
        if constexpr (kInteger<T>) return static_cast<T>(Wide<T>(a) + Wide<T>(b));
        else return a + b;
    } else if constexpr (Op == RTTCC_RMA_PROD) {
        if constexpr (kInteger<T>) return static_cast<T>(Wide<T>(a) * Wide<T>(b));
        else return a * b;
    } else if constexpr (Op == RTTCC_RMA_MAX) {
        return a < b ? b : a;
    } else if constexpr (Op == RTTCC_RMA_MIN) {
        return b < a ? b : a;
    } else if constexpr (Op == RTTCC_RMA_LAND) {
        return from_truth<T>(truth(a) && truth(b));
    } else if constexpr (Op == RTTCC_RMA_LOR) {
        return from_truth<T>(truth(a) || truth(b));
    } else if constexpr (Op == RTTCC_RMA_LXOR) {
        return from_truth<T>(truth(a) != truth(b));
    } else if constexpr (Op == RTTCC_RMA_BAND) {
        return static_cast<T>(a & b);
    } else if constexpr (Op == RTTCC_RMA_BOR) {
        return static_cast<T>(a | b);
    } else if constexpr (Op == RTTCC_RMA_BXOR) {
        return static_cast<T>(a ^ b);
    } else if constexpr (Op == RTTCC_RMA_MAXLOC || Op == RTTCC_RMA_MINLOC) {
        // The better value wins; on a tie a keeps its value, the smaller index.
        if (Op == RTTCC_RMA_MAXLOC ? b.v > a.v : b.v < a.v) return b;
        if (b.v == a.v && b.i < a.i) a.i = b.i;
        return a;
    }
}

// ---- every element -------------------------------------------------------

// ivdep: src is dst or disjoint from it, so no iteration reads what an
// earlier one wrote.
template <int Op, class T>
void combine_n(unsigned char *dst, const unsigned char *src, size_t count) {
#pragma GCC ivdep
    for (size_t n = 0; n < count; ++n, dst += sizeof(T), src += sizeof(T)) {
        T a, b;
        std::memcpy(&a, dst, sizeof a);
        std::memcpy(&b, src, sizeof b);
        a = combine<Op>(a, b);
        std::memcpy(dst, &a, sizeof a);
    }
}

// In blocks of a fixed count, then the rest: GCC's -O2 vectorizes only
// loops that need neither a scalar remainder nor an alias check, as the
// blocks (with ivdep) do.
template <int Op, class T>
void combine_all(unsigned char *dst, const unsigned char *src, size_t count) {
    constexpr size_t kBlock = 32;  // elements in whole vectors of up to 32 bytes
    for (; count >= kBlock; count -= kBlock, dst += kBlock * sizeof(T), src += kBlock * sizeof(T))
        combine_n<Op, T>(dst, src, kBlock);
    combine_n<Op, T>(dst, src, count);
}

template <int Op, class T>
void run(unsigned char *dst, const unsigned char *src, size_t count) {
    if constexpr (valid<T>(Op)) combine_all<Op, T>(dst, src, count);
}

// Applies a valid op on elements of type T.
template <class T>
void apply_typed(int op, unsigned char *dst, const unsigned char *src, size_t count) {
    switch (op) {
        case RTTCC_RMA_REPLACE: std::memmove(dst, src, count * sizeof(T)); return;
        case RTTCC_RMA_NO_OP: return;
        case RTTCC_RMA_SUM: return run<RTTCC_RMA_SUM, T>(dst, src, count);
        case RTTCC_RMA_PROD: return run<RTTCC_RMA_PROD, T>(dst, src, count);
        case RTTCC_RMA_MAX: return run<RTTCC_RMA_MAX, T>(dst, src, count);
        case RTTCC_RMA_MIN: return run<RTTCC_RMA_MIN, T>(dst, src, count);
        case RTTCC_RMA_LAND: return run<RTTCC_RMA_LAND, T>(dst, src, count);
        case RTTCC_RMA_LOR: return run<RTTCC_RMA_LOR, T>(dst, src, count);
        case RTTCC_RMA_LXOR: return run<RTTCC_RMA_LXOR, T>(dst, src, count);
        case RTTCC_RMA_BAND: return run<RTTCC_RMA_BAND, T>(dst, src, count);
        case RTTCC_RMA_BOR: return run<RTTCC_RMA_BOR, T>(dst, src, count);
        case RTTCC_RMA_BXOR: return run<RTTCC_RMA_BXOR, T>(dst, src, count);
        case RTTCC_RMA_MAXLOC: return run<RTTCC_RMA_MAXLOC, T>(dst, src, count);
        case RTTCC_RMA_MINLOC: return run<RTTCC_RMA_MINLOC, T>(dst, src, count);
    }
}

// ---- names -----------------------------------------------------------------

const char *const kOpNames[] = {
    "MPI_REPLACE", "MPI_NO_OP", "MPI_SUM",  "MPI_PROD", "MPI_MAX",  "MPI_MIN",    "MPI_LAND",
    "MPI_LOR",     "MPI_LXOR",  "MPI_BAND", "MPI_BOR",  "MPI_BXOR", "MPI_MAXLOC", "MPI_MINLOC",
};
static_assert(std::size(kOpNames) == RTTCC_RMA_OP_COUNT, "a name for every op");

// The types' names are their codes' in lower case ("DOUBLE_INT": "double_int").
struct TypeName {
    char text[24];
};
constexpr TypeName lower_case(const char *code) {
    TypeName name{};
    for (size_t n = 0; code[n] != '\0'; ++n)
        name.text[n] = code[n] >= 'A' && code[n] <= 'Z' ? code[n] - 'A' + 'a' : code[n];
    return name;
}
constexpr TypeName kTypeNames[] = {
#define RTTCC_RMA_TYPE_NAME(name) lower_case(#name),
    RTTCC_RMA_TYPES(RTTCC_RMA_TYPE_NAME)
#undef RTTCC_RMA_TYPE_NAME
};

bool in_range(int code, int count) {
    return code >= 0 && code < count;
}

// Per type, its element's bytes and the ops valid() allows on it (bit op):
// what every batch entry and accumulate is checked against, so a lookup.
struct TypeFacts {
    uint8_t size = 0;
    uint16_t ops = 0;
};
static_assert(RTTCC_RMA_OP_COUNT <= 16, "an op set fits TypeFacts::ops");
// (Made on first use: no other static initialiser can find it empty.)
const std::array<TypeFacts, RTTCC_RMA_TYPE_COUNT> &type_facts() {
    static const std::array<TypeFacts, RTTCC_RMA_TYPE_COUNT> facts = [] {
        std::array<TypeFacts, RTTCC_RMA_TYPE_COUNT> made{};
        for (int type = 0; type < RTTCC_RMA_TYPE_COUNT; ++type)
            visit_type(type, [&](auto tag) {
                using T = typename decltype(tag)::type;
                static_assert(sizeof(T) <= UINT8_MAX, "an element's size fits TypeFacts::size");
                made[type].size = sizeof(T);
                for (int op = 0; op < RTTCC_RMA_OP_COUNT; ++op)
                    if (valid<T>(op)) made[type].ops |= static_cast<uint16_t>(1u << op);
            });
        return made;
    }();
    return facts;
}

}  // namespace

size_t rma_type_size(int type) {
    return in_range(type, RTTCC_RMA_TYPE_COUNT) ? type_facts()[type].size : 0;
}

bool rma_op_valid(int op, int type) {
    return in_range(type, RTTCC_RMA_TYPE_COUNT) && in_range(op, RTTCC_RMA_OP_COUNT) &&
           (type_facts()[type].ops >> op & 1u);
}

int rma_apply(int op, int type, void *dst, const void *src, size_t count, void *old) {
    if (!rma_op_valid(op, type)) return RTTCC_ERR_ARG;
    if (count == 0) return RTTCC_OK;  // the buffers may be null
    visit_type(type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (old != nullptr) std::memcpy(old, dst, count * sizeof(T));
        apply_typed<T>(op, static_cast<unsigned char *>(dst), static_cast<const unsigned char *>(src), count);
    });
    return RTTCC_OK;
}

const char *rma_op_name(int op) {
    return in_range(op, RTTCC_RMA_OP_COUNT) ? kOpNames[op] : "unknown";
}

const char *rma_type_name(int type) {
    return in_range(type, RTTCC_RMA_TYPE_COUNT) ? kTypeNames[type].text : "unknown";
}

}  // namespace rttcc
