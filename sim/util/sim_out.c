/* sim_out — an output file written whole or not at all (sim_out.h). */
#include "sim_out.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <fcntl.h>
#include <libgen.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
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

int sim_out_space(const char *path, double need, const char *what)
{
    char dir[4096];
    folder_of(path, dir, sizeof dir);
    struct statvfs fs;
    if (statvfs(dir, &fs) != 0)
        return 0;                       /* cannot tell: the write itself will say */
    double avail = (double)fs.f_bavail * (double)fs.f_frsize;
    if (avail >= need)
        return 0;
    return sim_err_set(SIM_EIO, "%s: cannot write: the disk holding %s has %.0f KiB free, "
                       "less than the %.0f KiB %s needs: free some space or name a file on "
                       "another disk", path, dir, avail / 1024, need / 1024, what);
}

bool sim_out_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

int sim_out_not_input(const char *out, const char *in, const char *what)
{
    if (sim_out_same_file(out, in))
        return sim_err_set(SIM_EUSAGE, "%s: cannot write: it is %s read (%s); writing it would "
                           "replace what is being read: name another file", out, what, in);
    return 0;
}

int sim_out_tmp(const char *path, char *tmp, size_t size)
{
    static unsigned seq;
    for (int tries = 0; tries < 100; tries++) {
        snprintf(tmp, size, "%s.tmp%ld-%u", path, (long)getpid(), seq++);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST)
            return sim_err_set(SIM_EIO, "%s: cannot write: %s", path, strerror(errno));
    }
    return sim_err_set(SIM_EIO, "%s: cannot write: no free temporary name beside it", path);
}

int sim_out_commit(const char *tmp, const char *path)
{
    if (rename(tmp, path) == 0)
        return 0;
    int e = errno;
    remove(tmp);
    return sim_err_set(SIM_EIO, "%s: cannot write: %s", path, strerror(e));
}

int sim_out_fresh(const char *path)
{
    char tmp[4200];
    int fd = sim_out_tmp(path, tmp, sizeof tmp);
    if (fd < 0)
        return fd;
    int rc = sim_out_commit(tmp, path);
    if (rc) {
        close(fd);
        return rc;
    }
    return fd;
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
    int fd = sim_out_tmp(path, o->tmp, sizeof o->tmp);
    if (fd < 0)
        return fd;
    if (!(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        remove(o->tmp);
        return sim_err_set(SIM_EIO, "%s: cannot write: %s", path, strerror(e));
    }
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
    if (ok && !rc)
        return sim_out_commit(o->tmp, o->path);
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

static const char *guard_prog = "servesim";

static void check_stdout(void)
{
    char target[512] = "";
    ssize_t n = readlink("/proc/self/fd/1", target, sizeof target - 1);
    target[n > 0 ? n : 0] = '\0';
    bool bad = fflush(stdout) != 0 || ferror(stdout);
    int e = errno;
    if (fclose(stdout) != 0 && !bad) {
        bad = true;
        e = errno;
    }
    if (!bad || e == EPIPE)             /* a reader that stopped reading (head) is no loss */
        return;
    fprintf(stderr, "%s: cannot write the standard output%s%s%s: %s\n", guard_prog,
            target[0] ? " (" : "", target, target[0] ? ")" : "", strerror(e));
    _exit(1);
}

void sim_out_guard_stdout(const char *prog)
{
    guard_prog = prog;
    signal(SIGXFSZ, SIG_IGN);
    atexit(check_stdout);
}
