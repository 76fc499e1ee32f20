#include "btl_rttcc_frag.h"
#include "rttcc/handoff.h"

static void frag_construct(mca_btl_rttcc_frag_t *frag)
{
    frag->base.des_segments = frag->segments;
    frag->base.des_segment_count = 1;
    frag->endpoint = NULL;
    frag->home = NULL;
    frag->buf = NULL;
    frag->buf_size = 0;
}

OBJ_CLASS_INSTANCE(mca_btl_rttcc_frag_t, mca_btl_base_descriptor_t, frag_construct, NULL);

/* Runs once per new free-list item, after its payload buffer was attached. */
static int frag_item_init(opal_free_list_item_t *item, void *ctx)
{
    mca_btl_rttcc_frag_t *frag = (mca_btl_rttcc_frag_t *) item;
    mca_btl_rttcc_frag_list_t *fl = (mca_btl_rttcc_frag_list_t *) ctx;
    frag->buf = (unsigned char *) item->ptr;
    frag->buf_size = fl->buf_size;
    frag->home = &fl->list;
    return OPAL_SUCCESS;
}

static int list_init(mca_btl_rttcc_frag_list_t *fl, size_t buf_size)
{
    fl->buf_size = buf_size;
    OBJ_CONSTRUCT(&fl->list, opal_free_list_t);
    return opal_free_list_init(&fl->list, sizeof(mca_btl_rttcc_frag_t), opal_cache_line_size,
                               OBJ_CLASS(mca_btl_rttcc_frag_t), buf_size, opal_cache_line_size,
                               32 /* initial */, -1 /* no maximum */, 32 /* per growth */,
                               NULL, 0, NULL, frag_item_init, fl);
}

int mca_btl_rttcc_frag_lists_init(mca_btl_rttcc_module_t *module)
{
    int rc = list_init(&module->eager_frags, module->super.btl_eager_limit);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    return list_init(&module->max_frags, module->super.btl_max_send_size);
}

void mca_btl_rttcc_frag_lists_fini(mca_btl_rttcc_module_t *module)
{
    OBJ_DESTRUCT(&module->eager_frags.list);
    OBJ_DESTRUCT(&module->max_frags.list);
}

mca_btl_rttcc_frag_t *mca_btl_rttcc_frag_get(mca_btl_rttcc_module_t *module, size_t size)
{
    opal_free_list_t *list;
    mca_btl_rttcc_frag_t *frag;

    if (size <= module->eager_frags.buf_size) {
        list = &module->eager_frags.list;
    } else if (size <= module->max_frags.buf_size) {
        list = &module->max_frags.list;
    } else {
        return NULL;
    }
    frag = (mca_btl_rttcc_frag_t *) opal_free_list_get(list);
    if (NULL == frag) {
        return NULL;
    }
    rttcc_handoff_acquire(frag);
    frag->base.des_segment_count = 1;
    frag->base.des_flags = 0;
    frag->base.des_cbfunc = NULL;
    frag->base.des_cbdata = NULL;
    frag->base.des_context = NULL;
    frag->base.order = MCA_BTL_NO_ORDER;
    frag->segments[0].seg_addr.pval = frag->buf;
    frag->segments[0].seg_len = size;
    frag->endpoint = NULL;
    return frag;
}

void mca_btl_rttcc_frag_put(mca_btl_rttcc_frag_t *frag)
{
    rttcc_handoff_release(frag);
    opal_free_list_return(frag->home, &frag->base.super);
}
