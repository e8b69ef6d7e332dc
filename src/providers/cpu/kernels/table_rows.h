/* Rows of a large table mapped from the model's external data
 * (ONYX_VALUE_MAPPED), read a few at a time: an embedding table, of which a
 * run reads one row per token.
 *
 * Read in place, such a table should put in RSS only the pages of the rows
 * read. Linux maps a whole large folio of the page cache per fault instead
 * (a freshly written file is cached in folios of up to 2 MiB), so the 128
 * tokens of a BERT run made 41 of the 47 MB float16 word table resident.
 * Here each row is copied once, on first read, into a private anonymous copy
 * of the table that is only populated where rows were copied, and the
 * mapping's pages around the row are given back (the page-table span that
 * one fault can map). Later reads of the row read the copy: no fault, no
 * system call. Safe from any number of threads at once. */
#ifndef ONYX_CPU_KERNELS_TABLE_ROWS_H
#define ONYX_CPU_KERNELS_TABLE_ROWS_H

#include <stddef.h>
#include "core/value.h"

typedef struct onyx_table_rows onyx_table_rows;

/* The row copier of t's rows (dims[0] rows of the rest's elements), or
 * *out = NULL when t gains nothing from one (not mapped, at most one span,
 * no anonymous mappings on this platform). */
onyx_status *onyx_table_rows_new(const onyx_value *t, onyx_table_rows **out);
/* Row r's bytes (r < rows): in the copy, or, while another thread copies
 * that row, in the mapping. c may be NULL: then in t. t is the table c was
 * made for (else its own bytes are read). */
const void *onyx_table_rows_get(onyx_table_rows *c, const onyx_value *t, size_t r);
void onyx_table_rows_free(onyx_table_rows *c);

#endif
