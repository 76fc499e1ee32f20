/* Shared helpers of the one-sided tests, over test/mpi/mpitest.h: checked
 * MPI calls, byte and element checks that name what went wrong (and go
 * through mt_maybe_corrupt, so SELFTEST=1 fails every test), window flavors
 * behind one interface, and command-line lists. */
#ifndef RTTCC_OSCTEST_H
#define RTTCC_OSCTEST_H

#include <stdarg.h>

#include "../mpi/mpitest.h"

static const char *ot_test = "osc";
static const char *ot_where; /* what the test is doing, for failed MPI calls */

/* Prints "FAIL <test> on rank R: <what>" and ends the job. */
static inline void ot_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static inline void ot_fail(const char *fmt, ...)
{
    int rank;
    va_list ap;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "FAIL %s on rank %d: ", ot_test, rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    exit(3);
}

/* OT(MPI_Xxx(...)): any error is a failure naming the call and the line. */
#define OT(call) ot_ok((call), #call, __LINE__)
static inline void ot_ok(int rc, const char *call, int line)
{
    if (MPI_SUCCESS != rc) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        ot_fail("%s%sline %d: %s returned %d (%s)", ot_where ? ot_where : "", ot_where ? ": " : "", line, call, rc,
                text);
    }
}

/* The first byte where `got` differs from `want` fails the test; `what`
 * (printf-style) says which transfer it was. */
static inline void ot_check(void *got, const void *want, size_t n, const char *what, ...)
    __attribute__((format(printf, 4, 5)));
static inline void ot_check(void *got, const void *want, size_t n, const char *what, ...)
{
    const unsigned char *g = got, *w = want;
    mt_maybe_corrupt(got, n);
    for (size_t i = 0; i < n; ++i) {
        if (g[i] != w[i]) {
            char where[512];
            va_list ap;
            va_start(ap, what);
            vsnprintf(where, sizeof where, what, ap);
            va_end(ap);
            ot_fail("%s: byte %zu of %zu is 0x%02x, expected 0x%02x", where, i, n, g[i], w[i]);
        }
    }
}

/* "a,b,c" contains `name` (a NULL or empty list contains everything;
 * "^a,b" everything but a and b). */
static inline int ot_listed(const char *list, const char *name)
{
    size_t len = strlen(name);
    if (NULL == list || '\0' == *list) {
        return 1;
    }
    if ('^' == *list) {
        return !ot_listed(list + 1, name);
    }
    for (const char *p = list; p; p = strchr(p, ',')) {
        p += ',' == *p;
        if (0 == strncmp(p, name, len) && (',' == p[len] || '\0' == p[len])) {
            return 1;
        }
    }
    return 0;
}

/* A size with an optional K or M suffix. */
static inline size_t ot_size(const char *s)
{
    char *end;
    size_t v = strtoull(s, &end, 10);
    return v << ('K' == *end || 'k' == *end ? 10 : 'M' == *end || 'm' == *end ? 20 : 0);
}

/* "1,7,64K,4M" into sizes[]: how many (at most max). */
static inline int ot_sizes(const char *list, size_t *sizes, int max)
{
    int n = 0;
    for (const char *p = list; p && *p && n < max; p = strchr(p, ',')) {
        p += ',' == *p;
        sizes[n++] = ot_size(p);
    }
    return n;
}

/* Command line: "-name value" pairs; ot_arg returns the value or `dflt`. */
static inline const char *ot_arg(int argc, char **argv, const char *name, const char *dflt)
{
    for (int i = 1; i + 1 < argc; ++i) {
        if (0 == strcmp(argv[i], name)) {
            dflt = argv[i + 1];
        }
    }
    return dflt;
}

/* The window flavors, selectable with -flavor create,allocate,dynamic. */
enum ot_flavor { OT_CREATE, OT_ALLOCATE, OT_DYNAMIC, OT_FLAVORS };
static const char *const ot_flavor_names[OT_FLAVORS] = {"create", "allocate", "dynamic"};

/* A window over `parts` parts of `part_size` bytes each.  Create and
 * allocate hold them back to back in one block; a dynamic window attaches
 * each part as its own region and exchanges the addresses, so a part of a
 * dynamic window is addressed by the target's MPI_Get_address of it. */
typedef struct {
    MPI_Win win;
    MPI_Comm comm;
    enum ot_flavor flavor;
    int parts, disp_unit, size;
    size_t part_size;
    unsigned char *block;   /* create, allocate: the memory */
    unsigned char **part;   /* this rank's parts */
    MPI_Aint *addr;         /* dynamic: addr[target * parts + p] */
} ot_win;

static inline void ot_win_new(ot_win *w, enum ot_flavor flavor, MPI_Comm comm, int parts, size_t part_size,
                              int disp_unit, MPI_Info info)
{
    size_t bytes = (size_t) parts * part_size;
    memset(w, 0, sizeof *w);
    w->flavor = flavor;
    w->comm = comm;
    w->parts = parts;
    w->part_size = part_size;
    w->disp_unit = OT_DYNAMIC == flavor ? 1 : disp_unit;
    MPI_Comm_size(comm, &w->size);
    w->part = calloc((size_t) parts, sizeof *w->part);
    if (OT_CREATE == flavor) {
        if (0 != posix_memalign((void **) &w->block, 64, bytes ? bytes : 1)) {
            ot_fail("out of memory for a %zu-byte window", bytes);
        }
        OT(MPI_Win_create(w->block, (MPI_Aint) bytes, disp_unit, info, comm, &w->win));
    } else if (OT_ALLOCATE == flavor) {
        OT(MPI_Win_allocate((MPI_Aint) bytes, disp_unit, info, comm, &w->block, &w->win));
    } else {
        MPI_Aint *mine = calloc((size_t) parts, sizeof *mine);
        w->addr = calloc((size_t) parts * (size_t) w->size, sizeof *w->addr);
        OT(MPI_Win_create_dynamic(info, comm, &w->win));
        for (int p = 0; p < parts; ++p) {
            w->part[p] = mt_alloc(part_size);
            if (part_size > 0) {
                OT(MPI_Win_attach(w->win, w->part[p], (MPI_Aint) part_size));
            }
            OT(MPI_Get_address(w->part[p], &mine[p]));
        }
        OT(MPI_Allgather(mine, parts, MPI_AINT, w->addr, parts, MPI_AINT, comm));
        free(mine);
    }
    for (int p = 0; p < parts && OT_DYNAMIC != flavor; ++p) {
        w->part[p] = w->block + (size_t) p * part_size;
    }
    OT(MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN));
}

/* The target displacement of byte `off` of part `p` at `target`. */
static inline MPI_Aint ot_disp(const ot_win *w, int target, int p, size_t off)
{
    if (OT_DYNAMIC == w->flavor) {
        return w->addr[(size_t) target * (size_t) w->parts + (size_t) p] + (MPI_Aint) off;
    }
    return (MPI_Aint) (((size_t) p * w->part_size + off) / (size_t) w->disp_unit);
}

static inline void ot_win_free(ot_win *w)
{
    if (OT_DYNAMIC == w->flavor) {
        OT(MPI_Barrier(w->comm)); /* no peer addresses a region once it is detached */
        for (int p = 0; p < w->parts; ++p) {
            if (w->part_size > 0) {
                OT(MPI_Win_detach(w->win, w->part[p]));
            }
        }
    }
    OT(MPI_Win_free(&w->win));
    if (OT_DYNAMIC == w->flavor) {
        for (int p = 0; p < w->parts; ++p) {
            free(w->part[p]);
        }
    }
    if (OT_CREATE == w->flavor) {
        free(w->block);
    }
    free(w->part);
    free(w->addr);
}

/* MPI_Init (or _thread) with errors returned, and the test's name. */
static inline void ot_init(int *argc, char ***argv, const char *test)
{
    ot_test = test;
    MPI_Init(argc, argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

#endif
