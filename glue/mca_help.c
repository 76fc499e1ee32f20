/* Help texts (help-rttcc.txt) on stderr.  The text comes through
 * opal_show_help_vstring and goes straight to stderr: Open MPI 4.1.4's relay
 * of show_help messages to mpirun loses about one in five of them when
 * processes report at the same moment ("Data unpack would read past end of
 * buffer" in orte/util/show_help.c), and these messages must not be lost. */
#include "opal_config.h"

#include <stdio.h>
#include <stdlib.h>

#include "glue.h"

#include "opal/util/proc.h"
#include "opal/util/show_help.h"

void rttcc_mca_show_help(bool once_per_node, const char *topic, ...)
{
    static bool dir_added;
    va_list ap;
    char *text;

    if (once_per_node && opal_process_info.my_local_rank > 0) {
        return;
    }
    if (!dir_added) { /* (twice, in a race, does no harm) */
        opal_show_help_add_dir(RTTCC_HELPDIR);
        dir_added = true;
    }
    va_start(ap, topic);
    text = opal_show_help_vstring("help-rttcc.txt", topic, true, ap);
    va_end(ap);
    if (NULL != text) {
        fputs(text, stderr);
        fflush(stderr);
        free(text);
    }
}
