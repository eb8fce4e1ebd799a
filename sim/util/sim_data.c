/* sim_data — run-time location of the shipped data (sim_data.h). */
#include "sim_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *sim_data_root(char *out, size_t size)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    out[0] = '\0';
    if (n <= 0)
        return out;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return out;
    *slash = '\0';                      /* the binary's folder */
    /* <prefix>/bin/servesim -> <prefix>/share/servesim */
    char *up = strrchr(exe, '/');
    if (!up)
        return out;
    *up = '\0';
    char root[4200];
    snprintf(root, sizeof root, "%s/share/servesim", exe[0] ? exe : "/");
    if (is_dir(root))
        snprintf(out, size, "%s", root);
    return out;
}

const char *sim_data_dir(const char *sub, const char *compiled, char *out, size_t size)
{
    const char *env = getenv("SERVESIM_DATA");
    char root[4200];
    if (env && env[0])
        snprintf(out, size, "%s/%s", env, sub);
    else if (sim_data_root(root, sizeof root)[0])
        snprintf(out, size, "%s/%s", root, sub);
    else
        snprintf(out, size, "%s", compiled);
    return out;
}
