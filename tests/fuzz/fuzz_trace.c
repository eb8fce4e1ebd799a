/* fuzz_trace — a trace file through every reader (traces/trace.c): the first byte picks the
 * format and the options (header, datetime times), the rest is the file; at most 100,000
 * records are read. */
#include <string.h>

#include "fuzz.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *path = fuzz_file(data + 1, size - 1, ".csv");
    if (!path)
        return 0;
    const char *files[] = {path};
    struct trace_spec sp;
    memset(&sp, 0, sizeof sp);
    int nformats = 0;                   /* every format, those added later too */
    while (trace_format_names[nformats])
        nformats++;
    sp.format = (enum trace_format)(data[0] % nformats);
    sp.nfiles = 1;
    sp.files = files;
    sp.select = TRACE_SEL_TOP;
    sp.select_k = 4;
    sp.size = (data[0] >> 3) & 1 ? TRACE_SIZE_CONTEXT : TRACE_SIZE_NONE;
    sp.time_col = 0;
    sp.count_col = 1;
    sp.header = (data[0] >> 4) & 1;
    sp.datetime = (data[0] >> 5) & 1;
    sp.interval_s = 1;
    sp.project = "en";
    sp.block_tokens = 512;
    struct trace_reader *rd = NULL;
    if (trace_open(&sp, &rd) == 0) {
        struct trace_rec rec;
        for (int i = 0; i < 100000 && trace_next(rd, &rec) == 1; i++)
            ;
        trace_close(rd);
    }
    return 0;
}
