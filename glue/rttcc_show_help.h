/*
 * Help-file messages of the rttcc components, on stderr.  The text comes
 * from the component's help file through opal_show_help_vstring and goes
 * straight to stderr: Open MPI 4.1.4's relay of show_help messages to
 * mpirun loses about one in five of them when processes report at the same
 * moment ("Data unpack would read past end of buffer" in
 * orte/util/show_help.c), and these messages must not be lost.
 */
#ifndef RTTCC_SHOW_HELP_H
#define RTTCC_SHOW_HELP_H

#include <stdarg.h>
#include <stdbool.h>

/* `once_per_node`: only the node's first local rank prints (the same words
 * from every process of the node add nothing). */
void rttcc_show_help_v(const char *file, bool once_per_node, const char *topic, va_list ap);

#endif
