/* Datatypes and ops as the engine's codes (rttcc/rma.h), and a datatype's
 * contiguous runs in memory. */
#include <stdbool.h>
#include <wchar.h>

#include "osc_rttcc.h"

#include "opal/datatype/opal_convertor.h"

typedef enum { SIGNED, UNSIGNED, REAL, COMPLEX, OTHER } kind_t;

/* Integers and reals by size; the other kinds name their code in `code`. */
static int by_size(kind_t kind, size_t size)
{
    switch (kind) {
    case SIGNED:
        return 1 == size ? RTTCC_RMA_INT8 : 2 == size ? RTTCC_RMA_INT16 : 4 == size ? RTTCC_RMA_INT32
             : 8 == size ? RTTCC_RMA_INT64 : -1;
    case UNSIGNED:
        return 1 == size ? RTTCC_RMA_UINT8 : 2 == size ? RTTCC_RMA_UINT16 : 4 == size ? RTTCC_RMA_UINT32
             : 8 == size ? RTTCC_RMA_UINT64 : -1;
    case REAL:
        return sizeof(float) == size ? RTTCC_RMA_FLOAT : sizeof(double) == size ? RTTCC_RMA_DOUBLE
             : sizeof(long double) == size ? RTTCC_RMA_LONG_DOUBLE : -1;
    case COMPLEX:
        return 2 * sizeof(float) == size ? RTTCC_RMA_C_FLOAT_COMPLEX
             : 2 * sizeof(double) == size ? RTTCC_RMA_C_DOUBLE_COMPLEX
             : 2 * sizeof(long double) == size ? RTTCC_RMA_C_LONG_DOUBLE_COMPLEX : -1;
    default:
        return -1;
    }
}

int osc_rttcc_type_code(ompi_datatype_t *dt)
{
    static const struct {
        MPI_Datatype type;
        kind_t kind;
        int code; /* OTHER: the code; else looked up by the type's size */
    } table[] = {
        {MPI_CHAR, SIGNED, 0}, {MPI_SIGNED_CHAR, SIGNED, 0}, {MPI_UNSIGNED_CHAR, UNSIGNED, 0},
        {MPI_SHORT, SIGNED, 0}, {MPI_UNSIGNED_SHORT, UNSIGNED, 0}, {MPI_INT, SIGNED, 0},
        {MPI_UNSIGNED, UNSIGNED, 0}, {MPI_LONG, SIGNED, 0}, {MPI_UNSIGNED_LONG, UNSIGNED, 0},
        {MPI_LONG_LONG_INT, SIGNED, 0}, {MPI_UNSIGNED_LONG_LONG, UNSIGNED, 0},
        {MPI_INT8_T, SIGNED, 0}, {MPI_UINT8_T, UNSIGNED, 0}, {MPI_INT16_T, SIGNED, 0},
        {MPI_UINT16_T, UNSIGNED, 0}, {MPI_INT32_T, SIGNED, 0}, {MPI_UINT32_T, UNSIGNED, 0},
        {MPI_INT64_T, SIGNED, 0}, {MPI_UINT64_T, UNSIGNED, 0}, {MPI_AINT, SIGNED, 0},
        {MPI_OFFSET, SIGNED, 0}, {MPI_COUNT, SIGNED, 0},
        {MPI_WCHAR, (wchar_t) -1 < 0 ? SIGNED : UNSIGNED, 0},
        {MPI_FLOAT, REAL, 0}, {MPI_DOUBLE, REAL, 0}, {MPI_LONG_DOUBLE, REAL, 0},
        {MPI_C_FLOAT_COMPLEX, COMPLEX, 0}, {MPI_C_DOUBLE_COMPLEX, COMPLEX, 0},
        {MPI_C_LONG_DOUBLE_COMPLEX, COMPLEX, 0},
        {MPI_C_BOOL, OTHER, RTTCC_RMA_BOOL}, {MPI_BYTE, OTHER, RTTCC_RMA_BYTE},
        {MPI_FLOAT_INT, OTHER, RTTCC_RMA_FLOAT_INT}, {MPI_DOUBLE_INT, OTHER, RTTCC_RMA_DOUBLE_INT},
        {MPI_LONG_INT, OTHER, RTTCC_RMA_LONG_INT}, {MPI_2INT, OTHER, RTTCC_RMA_2INT},
        {MPI_SHORT_INT, OTHER, RTTCC_RMA_SHORT_INT}, {MPI_LONG_DOUBLE_INT, OTHER, RTTCC_RMA_LONG_DOUBLE_INT},
        /* Fortran's, by their representation in C */
        {MPI_INTEGER, SIGNED, 0}, {MPI_INTEGER1, SIGNED, 0}, {MPI_INTEGER2, SIGNED, 0},
        {MPI_INTEGER4, SIGNED, 0}, {MPI_INTEGER8, SIGNED, 0}, {MPI_LOGICAL, SIGNED, 0},
        {MPI_REAL, REAL, 0}, {MPI_DOUBLE_PRECISION, REAL, 0}, {MPI_REAL4, REAL, 0}, {MPI_REAL8, REAL, 0},
        {MPI_COMPLEX, COMPLEX, 0}, {MPI_DOUBLE_COMPLEX, COMPLEX, 0},
        {MPI_CHARACTER, OTHER, RTTCC_RMA_BYTE}, {MPI_2INTEGER, OTHER, RTTCC_RMA_2INT},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
        if (table[i].type != dt) {
            continue;
        }
        size_t size;
        ompi_datatype_type_size(dt, &size);
        return OTHER == table[i].kind ? table[i].code : by_size(table[i].kind, size);
    }
    return -1;
}

int osc_rttcc_op_code(struct ompi_op_t *op)
{
    static const struct {
        MPI_Op op;
        int code;
    } table[] = {
        {MPI_REPLACE, RTTCC_RMA_REPLACE}, {MPI_NO_OP, RTTCC_RMA_NO_OP}, {MPI_SUM, RTTCC_RMA_SUM},
        {MPI_PROD, RTTCC_RMA_PROD},       {MPI_MAX, RTTCC_RMA_MAX},     {MPI_MIN, RTTCC_RMA_MIN},
        {MPI_LAND, RTTCC_RMA_LAND},       {MPI_LOR, RTTCC_RMA_LOR},     {MPI_LXOR, RTTCC_RMA_LXOR},
        {MPI_BAND, RTTCC_RMA_BAND},       {MPI_BOR, RTTCC_RMA_BOR},     {MPI_BXOR, RTTCC_RMA_BXOR},
        {MPI_MAXLOC, RTTCC_RMA_MAXLOC},   {MPI_MINLOC, RTTCC_RMA_MINLOC},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
        if (table[i].op == op) {
            return table[i].code;
        }
    }
    return -1;
}

int osc_rttcc_runs(ompi_datatype_t *dt, int count, ptrdiff_t at, osc_rttcc_run_fn fn, void *ctx)
{
    ptrdiff_t lb, extent;
    size_t size;
    int rc = OMPI_SUCCESS;
    if (0 == count) {
        return OMPI_SUCCESS;
    }
    ompi_datatype_type_size(dt, &size);
    if (ompi_datatype_is_contiguous_memory_layout(dt, count)) {
        ompi_datatype_get_true_extent(dt, &lb, &extent);
        return fn(ctx, at + lb, size * (size_t) count);
    }
    /* The convertor walks the layout from address 0: its iovecs' bases are offsets. */
    opal_convertor_t convertor;
    OBJ_CONSTRUCT(&convertor, opal_convertor_t);
    rc = opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor, &dt->super, count, NULL, 0,
                                                  &convertor);
    bool more = OMPI_SUCCESS == rc;
    while (more && OMPI_SUCCESS == rc) {
        struct iovec iov[32];
        uint32_t n = 32;
        size_t bytes;
        more = 0 == opal_convertor_raw(&convertor, iov, &n, &bytes);
        for (uint32_t i = 0; i < n && OMPI_SUCCESS == rc; ++i) {
            rc = fn(ctx, at + (ptrdiff_t) (intptr_t) iov[i].iov_base, iov[i].iov_len);
        }
    }
    OBJ_DESTRUCT(&convertor);
    return rc;
}

static int convert(bool pack, void *buf, int count, ompi_datatype_t *dt, void *packed, size_t len)
{
    opal_convertor_t convertor;
    struct iovec iov = {.iov_base = packed, .iov_len = len};
    uint32_t n = 1;
    size_t bytes = len;
    int rc;
    OBJ_CONSTRUCT(&convertor, opal_convertor_t);
    rc = pack ? opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor, &dt->super, count, buf, 0,
                                                         &convertor)
              : opal_convertor_copy_and_prepare_for_recv(ompi_mpi_local_convertor, &dt->super, count, buf, 0,
                                                         &convertor);
    if (OMPI_SUCCESS == rc) {
        rc = (pack ? opal_convertor_pack(&convertor, &iov, &n, &bytes)
                   : opal_convertor_unpack(&convertor, &iov, &n, &bytes)) < 0 || bytes != len
                 ? OMPI_ERROR
                 : OMPI_SUCCESS;
    }
    OBJ_DESTRUCT(&convertor);
    return rc;
}

int osc_rttcc_pack(const void *buf, int count, ompi_datatype_t *dt, void *to, size_t len)
{
    return convert(true, (void *) buf, count, dt, to, len);
}

int osc_rttcc_unpack(void *buf, int count, ompi_datatype_t *dt, const void *from, size_t len)
{
    return convert(false, buf, count, dt, (void *) from, len);
}
