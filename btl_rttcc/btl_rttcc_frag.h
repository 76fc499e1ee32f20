/* Send descriptors: a BTL descriptor plus up to two segments (the PML
 * header area in our buffer, then user data sent in place). */
#ifndef MCA_BTL_RTTCC_FRAG_H
#define MCA_BTL_RTTCC_FRAG_H

#include "btl_rttcc.h"

BEGIN_C_DECLS

typedef struct mca_btl_rttcc_frag_t {
    mca_btl_base_descriptor_t base;
    mca_btl_base_segment_t segments[2]; /* what base.des_segments points at */
    mca_btl_rttcc_endpoint_t *endpoint; /* destination, set by send */
    opal_free_list_t *home;             /* the free list it returns to */
    unsigned char *buf;                 /* its own buffer */
    size_t buf_size;                    /* bytes in buf */
} mca_btl_rttcc_frag_t;

OBJ_CLASS_DECLARATION(mca_btl_rttcc_frag_t);

int mca_btl_rttcc_frag_lists_init(mca_btl_rttcc_module_t *module);
void mca_btl_rttcc_frag_lists_fini(mca_btl_rttcc_module_t *module);
/* A descriptor whose buffer holds at least `size` bytes, or NULL. */
mca_btl_rttcc_frag_t *mca_btl_rttcc_frag_get(mca_btl_rttcc_module_t *module, size_t size);
void mca_btl_rttcc_frag_put(mca_btl_rttcc_frag_t *frag);

END_C_DECLS
#endif
