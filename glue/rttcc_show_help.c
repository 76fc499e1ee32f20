/* Help-file messages on stderr (rttcc_show_help.h). */
#include "opal_config.h"

#include <stdio.h>
#include <stdlib.h>

#include "rttcc_show_help.h"

#include "opal/util/proc.h"
#include "opal/util/show_help.h"

void rttcc_show_help_v(const char *file, bool once_per_node, const char *topic, va_list ap)
{
    char *text;
    if (once_per_node && opal_process_info.my_local_rank > 0) {
        return;
    }
    text = opal_show_help_vstring(file, topic, true, ap);
    if (NULL != text) {
        fputs(text, stderr);
        fflush(stderr);
        free(text);
    }
}
