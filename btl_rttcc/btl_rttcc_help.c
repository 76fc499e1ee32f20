/* User-facing errors.  The text comes from help-mpi-btl-rttcc.txt through
 * opal_show_help_vstring and goes straight to stderr: Open MPI 4.1.4's
 * relay of show_help messages to mpirun loses about one in five of them
 * when processes report at the same moment ("Data unpack would read past
 * end of buffer" in orte/util/show_help.c), and these messages must not be
 * lost. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "btl_rttcc.h"

#include "opal/util/show_help.h"

void mca_btl_rttcc_show_help(bool once_per_node, const char *topic, ...)
{
    va_list ap;
    char *text;

    if (once_per_node && opal_process_info.my_local_rank > 0) {
        return; /* the same words from every process of the node add nothing */
    }
    va_start(ap, topic);
    text = opal_show_help_vstring("help-mpi-btl-rttcc.txt", topic, true, ap);
    va_end(ap);
    if (NULL != text) {
        fputs(text, stderr);
        fflush(stderr);
        free(text);
    }
}
