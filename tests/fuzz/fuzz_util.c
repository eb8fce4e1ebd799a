/* fuzz_util — helpers shared by the fuzz targets (fuzz.h). */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *fuzz_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = '\0';
    }
    return s;
}

const char *fuzz_file(const uint8_t *data, size_t size, const char *suffix)
{
    static char path[256];
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/servesim-fuzz-%ld%s", tmp && tmp[0] ? tmp : "/tmp",
             (long)getpid(), suffix);
    FILE *f = fopen(path, "wb");
    if (!f)
        return NULL;
    if (size && fwrite(data, 1, size, f) != size) {
        fclose(f);
        return NULL;
    }
    fclose(f);
    return path;
}
