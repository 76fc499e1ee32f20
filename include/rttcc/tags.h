/*
 * Engine tags: which client of an engine a message is for.  btl_rttcc, an
 * engine's creator under pml/ob1, carries the PML's tags; the other clients
 * use the range btl.h leaves to BTLs (MCA_BTL_TAG_BTL .. +0x1f), which
 * btl_rttcc never hands to the PML.
 */
#ifndef RTTCC_TAGS_H
#define RTTCC_TAGS_H

#define RTTCC_TAG_BTL_GET 0x3a /* btl_rttcc's get replies (the creator under pml/ob1; never the PML's) */
#define RTTCC_TAG_OSC 0x3b  /* osc_rttcc's replies and epoch messages (an attached client) */
#define RTTCC_TAG_COLL 0x3c /* coll_rttcc's exchanges (an attached client) */
#define RTTCC_TAG_MTL 0x3d  /* mtl_rttcc's messages (the creator under pml/cm) */
#define RTTCC_TAG_RMA 0x3e  /* the engine's own: RMA requests (rttcc/rma.h), served by the
                             * target's engine; no client attaches, sends or puts on it */

#endif
