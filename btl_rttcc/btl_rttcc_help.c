/* User-facing errors of the BTL: help-mpi-btl-rttcc.txt on stderr
 * (glue/rttcc_show_help.h says why not through mpirun). */
#include "btl_rttcc.h"
#include "rttcc_show_help.h"

void mca_btl_rttcc_show_help(bool once_per_node, const char *topic, ...)
{
    va_list ap;
    va_start(ap, topic);
    rttcc_show_help_v("help-mpi-btl-rttcc.txt", once_per_node, topic, ap);
    va_end(ap);
}
