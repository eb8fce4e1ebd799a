/* sim_out — an output file written whole or not at all (sim_out.h). */
#include "sim_out.h"

#include <errno.h>
#include <libgen.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim_err.h"

/* The folder `path` lies in (".", for a bare name). */
static void folder_of(const char *path, char *dir, size_t size)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", path);
    snprintf(dir, size, "%s", dirname(tmp));
}

int sim_out_check(const char *path)
{
    struct stat sb;
    if (!path || !path[0])
        return sim_err_set(SIM_EUSAGE, "expected a file name to write, got \"\"");
    if (strlen(path) >= sizeof ((struct sim_out *)0)->path)
        return sim_err_set(SIM_EUSAGE, "%.80s...: the path is longer than %zu characters", path,
                           sizeof ((struct sim_out *)0)->path - 1);
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode))
            return sim_err_set(SIM_EINVAL, "%s: cannot write: it is a folder", path);
        if (!S_ISREG(sb.st_mode))
            return access(path, W_OK) == 0 ? 0
                   : sim_err_set(SIM_EINVAL, "%s: cannot write: %s", path, strerror(errno));
    }
    char dir[4096];
    folder_of(path, dir, sizeof dir);
    if (stat(dir, &sb) != 0)
        return sim_err_set(SIM_EINVAL, "%s: cannot write: the folder %s does not exist", path, dir);
    if (!S_ISDIR(sb.st_mode))
        return sim_err_set(SIM_EINVAL, "%s: cannot write: %s is not a folder", path, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return sim_err_set(SIM_EINVAL, "%s: cannot write: the folder %s: %s", path, dir,
                           strerror(errno));
    return 0;
}

int sim_out_open(struct sim_out *o, const char *path)
{
    memset(o, 0, sizeof *o);
    int rc = sim_out_check(path);
    if (rc)
        return rc;
    snprintf(o->path, sizeof o->path, "%s", path);
    struct stat sb;
    o->through = stat(path, &sb) == 0 && !S_ISREG(sb.st_mode);
    if (o->through) {
        if (!(o->f = fopen(path, "w")))
            return sim_err_set(SIM_EIO, "%s: cannot write: %s", path, strerror(errno));
        return 0;
    }
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp%ld", path, (long)getpid());
    if (!(o->f = fopen(o->tmp, "w")))
        return sim_err_set(SIM_EIO, "%s: cannot write: %s", path, strerror(errno));
    return 0;
}

int sim_out_close(struct sim_out *o, bool ok)
{
    int rc = 0;
    if (!o->f)
        return 0;
    if (ok && (fflush(o->f) != 0 || ferror(o->f)))
        rc = sim_err_set(SIM_EIO, "%s: cannot write: %s", o->path, strerror(errno));
    if (fclose(o->f) != 0 && ok && !rc)
        rc = sim_err_set(SIM_EIO, "%s: cannot write: %s", o->path, strerror(errno));
    o->f = NULL;
    if (o->through)
        return rc;
    if (ok && !rc && rename(o->tmp, o->path) != 0)
        rc = sim_err_set(SIM_EIO, "%s: cannot write: %s", o->path, strerror(errno));
    if (!ok || rc)
        remove(o->tmp);
    return rc;
}

int sim_out_write(const char *path, const char *text)
{
    struct sim_out o;
    int rc = sim_out_open(&o, path);
    if (rc)
        return rc;
    size_t n = strlen(text);
    bool ok = fputs(text, o.f) >= 0 && (n && text[n - 1] == '\n' ? true : fputc('\n', o.f) != EOF);
    rc = sim_out_close(&o, ok);
    return rc ? rc : ok ? 0 : sim_err_set(SIM_EIO, "%s: cannot write: %s", path, strerror(errno));
}
