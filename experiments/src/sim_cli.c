/* sim_cli — the `servesim` command, the front end on top of every layer (docs/architecture.md):
 * the command table, option parsing, run, goodput, sweep, plan, plot, compare, export and
 * main; keys and policies are in sim_cli_list.c, bench in sim_cli_bench.c.
 * Exit codes: 0 success, 2 bad input (config, usage), 4 no valid answer, 1 internal or I/O
 * error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include "policy.h"
#include "sim_cli_int.h"
#include "sim_compare.h"
#include "sim_config.h"
#include "sim_err.h"
#include "sim_out.h"
#include "wl_zoo.h"
#include "sim_json.h"
#include "sim_wall.h"
#include "sim_goodput.h"
#include "sim_plan.h"
#include "plot.h"
#include "sim_report.h"
#include "sim_readback.h"
#include "sim_store.h"
#include "sim_sweep.h"

/* The options, one text each, shared by the commands' help and the global usage. */
#define OPT_DB                                                                              \
    "  --db FILE         results database (default: servesim.db; env SERVESIM_DB)\n"        \
    "  --no-db           do not write results\n"
#define OPT_SET                                                                             \
    "  --set PATH=VALUE  override a config field, e.g. --set cluster.gpus=16\n"             \
    "                    --set models[0].slo_ms=30 --set policy.params.work_conserving=true\n" \
    "                    (VALUE is JSON, else a string; @FILE: the JSON in FILE)\n"
#define OPT_RUN                                                                             \
    "  --seed N          override the seed\n"                                               \
    "  --json            print the result as one JSON object on stdout\n"                   \
    "  --quiet           print nothing but errors (and --json output); else, on a\n"         \
    "                    terminal, a progress line every second (env SERVESIM_PROGRESS_S)\n" \
    "  --trace-dir DIR   where workload.trace files are (else workload.trace.dir, env\n"     \
    "                    SERVESIM_TRACE_DIR, or the config's folder)\n"                     \
    OPT_WARMUP
#define OPT_WARMUP                                                                          \
    "  --keep-warmup     keep the config's warm-up even where it is shorter than the time\n" \
    "                    the policy needs to converge (default: extend it, and the run by\n" \
    "                    as much; keep_warmup: true in the config does the same)\n"
#define EXIT_TEXT                                                                           \
    "Exit status: 0 success, 2 bad input, 4 no valid answer (goodput, plan: an SLO no batch\n" \
    "meets, or no GPU count within the limits or a range below what the mean rate takes;\n" \
    "goodput: a search that did not bracket or converge, its probes kept with runs.status\n" \
    "saying so), 130 interrupted (Ctrl-C; 143 on SIGTERM: it says what was kept), 1 internal\n" \
    "error (compare: 3 regression).\n"


static int cmd_run(const struct opts *o);
static int cmd_goodput(const struct opts *o);
static int cmd_sweep(const struct opts *o);
static int cmd_plan(const struct opts *o);
static int cmd_export(int argc, char **argv);

/* The commands, one row each (issue 53): the global usage, `servesim COMMAND --help`,
 * docs/cli.md (scripts/gen-cli-doc.sh reads the usage's list), the options a command takes
 * and its handler all come from here. A command either takes the common parser (`run`, with
 * `opts` the options it accepts and `positional` 0 none, 1 an optional CONFIG, 2 a required
 * file) or parses its own arguments (`own`). */
static const struct command {
    const char *name;
    const char *head, *brief;           /* the usage's line: "run [CONFIG]", what it does */
    const char *synopsis, *text;        /* its --help: "usage: servesim SYNOPSIS", the text */
    const char *exits;                  /* its exit statuses; NULL: EXIT_TEXT's */
    int (*run)(const struct opts *o);
    int (*own)(int argc, char **argv);
    bool own_help;                      /* `own` prints its own --help (its options) */
    bool interruptible;                 /* says what was kept on Ctrl-C (arm_interrupt) */
    int positional;
    const char *const opts[16];         /* "-j" stands for -j and --jobs */
} COMMANDS[] = {
    {"run", "run [CONFIG]", "simulate one experiment (no CONFIG: the embedded quickstart)",
     "run [CONFIG] [options]",
     "Simulates one experiment (no CONFIG: the embedded quickstart) and prints per-model\n"
     "latency, batching and SLO results; writes them to the results database.\n\n"
     "options:\n" OPT_DB OPT_SET OPT_RUN, NULL, cmd_run, NULL, false, true, 1,
     {"--db", "--no-db", "--set", "--seed", "--json", "--quiet", "--trace-dir", "--keep-warmup",
      NULL}},
    {"goodput", "goodput [CONFIG]", "search the highest load at which every model meets its SLO",
     "goodput [CONFIG] [options]",
     "Searches the highest load (a scale of every arrival rate) at which every model meets\n"
     "its SLO; probes double or halve, then bisect (docs/config.md, `search`). An SLO that\n"
     "no batch can meet once the network's fixed delays are added exits 4 before probing.\n\n"
     "options:\n" OPT_DB OPT_SET OPT_RUN, NULL, cmd_goodput, NULL, false, true, 1,
     {"--db", "--no-db", "--set", "--seed", "--json", "--quiet", "--trace-dir", "--keep-warmup",
      NULL}},
    {"sweep", "sweep SWEEP -j N",
     "a grid of runs or goodput searches over a base config, N workers,\n"
     "resumable (points already in the database are skipped)",
     "sweep SWEEP.json [-j N] [options]",
     "A grid of runs or goodput searches over a base config. SWEEP: {name, base, mode\n"
     "run|goodput, set, grid: {path: [values]}, cases: [{name, path: value, ...}]} (cases:\n"
     "named override sets). Resumable: points already in the database are skipped.\n"
     "On a cluster: `mpirun -n N servesim sweep SWEEP.json` spreads the points over N MPI\n"
     "ranks (one point at a time each, rank 0 included); rank 0 alone writes the database\n"
     "(docs/sweeps.md). Needs a servesim built with OpenMPI.\n\n"
     "options:\n"
     "  -j N              worker processes (default 1; not used under mpirun)\n"
     "  --db FILE         results database (default: servesim.db; env SERVESIM_DB)\n"
     "  --set PATH=VALUE  applied to every point (part of the sweep's identity)\n"
     OPT_WARMUP
     "  --quiet           no progress\n"
     "  --trace-dir DIR   where workload.trace files are (as for run)\n"
     "  --force           run even when the database holds this sweep's name under another\n"
     "                    configuration (other file, base or --set) and none of this one\n",
     NULL, cmd_sweep, NULL, false, false, 2,
     {"-j", "--db", "--set", "--quiet", "--force", "--trace-dir", "--keep-warmup", NULL}},
    {"plan", "plan [CONFIG]",
     "capacity plan: the fewest GPUs that replay the workload (a trace)\n"
     "within SLO, and with `autoscale` in the config the autoscaler's cost",
     "plan [CONFIG] [options]",
     "Capacity plan: the fewest GPUs that replay the workload (a trace) within SLO, and with\n"
     "`autoscale` in the config the autoscaler's cost beside it. With `search.variants`\n"
     "(e.g. colocated and disaggregated LLM serving), the same for each variant, side by\n"
     "side. No GPU count within the bounds: exit 4, naming the best probe.\n\n"
     "options:\n" OPT_DB OPT_SET OPT_RUN
     "  --min N, --max N  bounds of the GPU-count search (default: the lower bound, and\n"
     "                    cluster.max_gpus if above cluster.gpus, else 4096)\n", NULL,
     cmd_plan, NULL, false, true, 1,
     {"--db", "--no-db", "--set", "--seed", "--json", "--quiet", "--trace-dir", "--keep-warmup",
      "--min", "--max", NULL}},
    {"compare", "compare BASE NEW",
     "regression check between two results databases or exports: per\n"
     "experiment and model, means over seeds, Welch t-test; exit 3 on a\n"
     "regression",
     "compare BASE NEW [options]",
     "Regression check between two results databases or exports: per experiment and model,\n"
     "means over seeds, Welch t-test; exit 3 on a regression. Its options: servesim compare\n"
     "--help.\n",
     "Exit status: 0 no regression, 3 a regression (or an experiment missing from NEW,\n"
     "unless --allow-missing), 4 nothing was compared, 2 bad input, 1 internal error.\n",
     NULL, sim_compare_main, true, false, 0, {NULL}},
    {"export", "export DB",
     "the runs of a database as text (servesim-results/2) that diffs well\n"
     "and that compare reads like a database; -o FILE writes it there",
     "export DB [-o FILE]",
     "The runs of a database as text (servesim-results/2) that diffs well and that compare\n"
     "reads like a database.\n\n"
     "options:\n"
     "  -o FILE, --out FILE  write there (whole or not at all: a temporary file renamed; a\n"
     "                       FIFO or device written through), else to stdout\n",
     "Exit status: 0 success, 2 bad input (a database that cannot be read, a FILE that\n"
     "cannot be written), 1 internal error.\n",
     NULL, cmd_export, false, false, 0, {NULL}},
    {"plot", "plot KIND...", "gnuplot figures (PNG, SVG and their .dat) from a results database",
     "plot KIND... [options]",
     "gnuplot figures (PNG, SVG and their .dat) from a results database: goodput,\n"
     "goodput-gpus, goodput-slo, latency-cdf, queue-cdf, batch-hist, timeline, all. Its\n"
     "kinds and options: servesim plot --help.\n",
     "Exit status: 0 success, 2 bad input, 1 internal error (gnuplot failed).\n",
     NULL, plot_main, true, false, 0, {NULL}},
    {"policies", "policies", "list the registered policies", "policies [--markdown]",
     "Lists the registered policies, their presets and the params each takes\n"
     "(`servesim keys --policy NAME` says what each param means).\n\n"
     "options:\n"
     "  --markdown        a section per policy with its params' table, as docs/policies.md\n"
     "                    shows them\n", "Exit status: 0.\n", cmd_policies,
     NULL, false, false, 0, {"--markdown", NULL}},
    {"keys", "keys [PREFIX]", "every config key (or a policy's params): type, default, meaning",
     "keys [PREFIX] [options]",
     "Lists every key a config takes, as declared in the code's tables: its type and range,\n"
     "its default and what it means (docs/config.md's reference is this list). PREFIX: only\n"
     "the keys that start with it (`servesim keys cluster.`).\n\n"
     "options:\n"
     "  --policy NAME     the keys of policy.params that policy NAME takes instead\n"
     "  --own             with --policy: leave out the params it shares with other policies\n"
     "  --format F        the keys of another file: config (default), sweep (a sweep file,\n"
     "                    docs/sweeps.md) or zoo (a zoo file)\n"
     "  --markdown        Markdown table rows, as the docs show them\n",
     "Exit status: 0; 2 an unknown policy or format, or no key starts with PREFIX.\n",
     cmd_keys, NULL, false, false, 1, {"--policy", "--own", "--format", "--markdown", NULL}},
    {"bench", "bench", "throughput benchmark: Symphony, 64 GPUs, the 35-model 1080Ti zoo",
     "bench [options]",
     "Throughput benchmark: Symphony (or --policy), 64 GPUs, the 35-model 1080Ti zoo, with a\n"
     "minimal reference batching simulator run in the same process (the speed ratio).\n\n"
     "options:\n"
     "  --duration S      simulated seconds (default 60)\n"
     "  --rate R          offered requests/s (default 5200, about goodput)\n"
     "  --gpus N[,N...]   GPUs (default 64); a list runs each count twice, the offered load\n"
     "                    scaled with the GPUs (--rate per the first count's GPUs) and fixed\n"
     "                    (--rate), and prints the wall time per simulated request against\n"
     "                    the first count's (list it from 64: tests/bench/RESULTS.md),\n"
     "                    after one untimed run of the first count, which pays the\n"
     "                    process's cold start\n"
     "  --steady          with a --gpus list: each run also runs its first half, and the\n"
     "                    columns are the second half's (requests and wall time, the two\n"
     "                    runs' difference): the steady cost, without building the engine,\n"
     "                    the first loads and the first touch of memory\n"
     "  --sample S        time-series sampling period in s (default 1; 0 = off)\n"
     "  --policy NAME     the policy to run (default symphony)\n"
     "  --no-reference    skip the reference simulator (the speed ratio's denominator)\n"
     "  --json            print the measurements as one JSON object on stdout\n"
     "  --rounds N        run and reference alternate N times in this process (1-100, default\n"
     "                    1); speeds and the ratio are the rounds' medians, and every round\n"
     "                    must simulate the same events\n",
     "Exit status: 0 success, 2 bad input, 1 internal error (a round simulated other events).\n",
     cmd_bench, NULL, false, false, 0,
     {"--duration", "--rate", "--gpus", "--steady", "--sample", "--policy", "--no-reference",
      "--rounds", "--json", NULL}},
};
#define NCOMMANDS (sizeof COMMANDS / sizeof COMMANDS[0])

static const struct command *command_of(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(COMMANDS[i].name, name) == 0)
            return &COMMANDS[i];
    return NULL;
}

/* servesim --help: the commands from the table, a line each (continued lines indented). */
static void usage(FILE *f)
{
    fputs("usage: servesim COMMAND [options]     (servesim COMMAND --help: that command's options)\n"
          "\ncommands:\n", f);
    for (size_t i = 0; i < NCOMMANDS; i++) {
        const char *b = COMMANDS[i].brief;
        fprintf(f, "  %-17s ", COMMANDS[i].head);
        for (; *b; b++) {
            fputc(*b, f);
            if (*b == '\n')
                fprintf(f, "%20s", "");
        }
        fputc('\n', f);
    }
    fputs("\ncommon options (run, goodput, plan):\n" OPT_DB OPT_SET OPT_RUN "\n" EXIT_TEXT
          "Docs: README.md, docs/ (docs/cli.md: every command's help).\n", f);
}

/* servesim COMMAND --help; false when COMMAND has no help text here. */
static bool command_help(const char *cmd)
{
    const struct command *c = command_of(cmd);
    if (c)
        printf("usage: servesim %s\n\n%s\n%s", c->synopsis, c->text,
               c->exits ? c->exits : EXIT_TEXT);
    return c != NULL;
}


static int exit_code(int rc)
{
    int sig = sim_sweep_signal();
    return rc == 0 ? 0 : rc == SIM_EINFEASIBLE ? 4 : rc == SIM_EINTR ? 128 + (sig ? sig : SIGINT) :
           sim_err_is_input(rc) ? 2 : 1;
}

int cli_fail(int rc)
{
    fprintf(stderr, "servesim: %s\n", sim_err_msg_for(rc));
    return exit_code(rc);
}

/* --set PATH=@FILE: the override with FILE's JSON as the value (read now, so that a sweep's
 * identity is the content, not the file's name). */
static int set_from_file(struct opts *o, const char *a)
{
    const char *eq = strchr(a, '=');
    if (!eq || eq[1] != '@')
        return 0;
    cJSON *j = NULL;
    int rc = sim_json_load_file(eq + 2, &j);
    if (rc) {
        char pre[256];
        snprintf(pre, sizeof pre, "--set %.*s=@", (int)(eq - a < 200 ? eq - a : 200), a);
        return sim_err_prefix(rc, pre);
    }
    char *v = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    char *s = v ? malloc((size_t)(eq - a) + strlen(v) + 2) : NULL;
    if (s)
        sprintf(s, "%.*s=%s", (int)(eq - a), a, v);
    free(v);
    if (!s)
        return SIM_ENOMEM;
    o->owned[o->nsets - 1] = s;
    o->sets[o->nsets - 1] = s;
    return 0;
}

static void opts_free(struct opts *o)
{
    for (int i = 0; i < o->nsets; i++)
        free(o->owned[i]);
}

/* Whether command `cmd` takes option `a` (true for a command without a table: dispatch
 * reports it as unknown); else an error listing what it takes. */
static int check_opt(const char *cmd, const char *a)
{
    const char *name = strcmp(a, "--jobs") == 0 ? "-j" : a;
    const struct command *c = command_of(cmd);
    if (c) {
        char list[256] = "";
        for (int k = 0; c->opts[k]; k++) {
            if (strcmp(c->opts[k], name) == 0)
                return 0;
            size_t l = strlen(list);
            snprintf(list + l, sizeof list - l, "%s%s", k ? ", " : "",
                     strcmp(c->opts[k], "-j") ? c->opts[k] : "-j/--jobs");
        }
        return sim_err_set(SIM_EUSAGE, "%s takes no option %s (%s%s; servesim %s --help)",
                           cmd, a, c->opts[0] ? "its options: " : "it takes none", list, cmd);
    }
    return 0;
}

static int check_positional(const char *cmd, const char *a)
{
    const struct command *c = command_of(cmd);
    if (c && c->positional == 0)
        return sim_err_set(SIM_EUSAGE, "%s takes no argument, got \"%s\" (servesim %s --help)",
                           cmd, a, cmd);
    return 0;
}

/* bench --gpus N or N1,N2,...: the GPU counts of scaling runs (at most 16). */
static int parse_gpus(struct opts *o, const char *list)
{
    char buf[256], *save = NULL;
    long long n;
    int rc;
    snprintf(buf, sizeof buf, "%s", list);
    o->ngpus = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->ngpus == 16)
            return sim_err_set(SIM_EUSAGE, "--gpus: at most 16 counts");
        if ((rc = sim_arg_int("--gpus", t, 1, 100000, &n)))
            return rc;
        o->gpus_list[o->ngpus++] = (int)n;
    }
    if (!o->ngpus)
        return sim_err_set(SIM_EUSAGE, "--gpus: expected N or a list N1,N2,...");
    o->gpus = o->gpus_list[0];
    return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof *o);
    o->db = getenv("SERVESIM_DB");
    if (!o->db || !o->db[0])
        o->db = "servesim.db";
    o->duration = 60;
    o->rate = 5200;
    o->sample = 1;
    o->gpus = 64;
    o->rounds = 1;
    o->jobs = 1;
    o->policy = "symphony";
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        bool has_next = i + 1 < argc;
        long long n;
        int rc;
        if (a[0] == '-' && a[1] && (rc = check_opt(argv[1], a)))
            return rc;
        if (a[0] != '-' && (rc = check_positional(argv[1], a)))
            return rc;
        if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--quiet") == 0) {
            o->quiet = true;
        } else if (strcmp(a, "--no-db") == 0) {
            o->no_db = true;
        } else if (strcmp(a, "--force") == 0) {
            o->force = true;
        } else if (strcmp(a, "--keep-warmup") == 0) {
            if (o->nsets == MAX_SETS)
                return sim_err_set(SIM_EUSAGE, "--set: at most %d overrides", MAX_SETS);
            o->sets[o->nsets++] = "keep_warmup=true";
        } else if (strcmp(a, "--no-reference") == 0) {
            o->no_reference = true;
        } else if (strcmp(a, "--steady") == 0) {
            o->steady = true;
        } else if (strcmp(a, "--markdown") == 0) {
            o->markdown = true;
        } else if (strcmp(a, "--own") == 0) {
            o->own = true;
        } else if (strcmp(a, "--format") == 0 && has_next) {
            o->format = argv[++i];
        } else if (strcmp(a, "--policy") == 0 && has_next) {
            o->policy = argv[++i];
            o->policy_given = true;
        } else if (strcmp(a, "--db") == 0 && has_next) {
            o->db = argv[++i];
            if (!o->db[0])
                return sim_err_set(SIM_EUSAGE, "--db: expected a file name, got \"\" (--no-db "
                                   "writes nothing)");
        } else if (strcmp(a, "--set") == 0 && has_next) {
            if (o->nsets == MAX_SETS)
                return sim_err_set(SIM_EUSAGE, "--set: at most %d overrides", MAX_SETS);
            o->sets[o->nsets++] = argv[++i];
            if ((rc = set_from_file(o, argv[i])))
                return rc;
        } else if (strcmp(a, "--seed") == 0 && has_next) {
            if ((rc = sim_arg_int(a, argv[++i], 0, 1LL << 53, &n)))
                return rc;
            o->seed = (uint64_t)n;
            o->seed_given = true;
        } else if (strcmp(a, "--duration") == 0 && has_next) {
            if ((rc = sim_arg_num(a, argv[++i], 0, true, INFINITY, &o->duration)))
                return rc;
        } else if (strcmp(a, "--rate") == 0 && has_next) {
            if ((rc = sim_arg_num(a, argv[++i], 0, true, INFINITY, &o->rate)))
                return rc;
        } else if (strcmp(a, "--sample") == 0 && has_next) {
            if ((rc = sim_arg_num(a, argv[++i], 0, false, INFINITY, &o->sample)))
                return rc;
        } else if (strcmp(a, "--gpus") == 0 && has_next) {
            if ((rc = parse_gpus(o, argv[++i])))
                return rc;
        } else if (strcmp(a, "--rounds") == 0 && has_next) {
            if ((rc = sim_arg_int(a, argv[++i], 1, 100, &n)))
                return rc;
            o->rounds = (int)n;
        } else if ((strcmp(a, "--min") == 0 || strcmp(a, "--max") == 0) && has_next) {
            if ((rc = sim_arg_int(a, argv[++i], 1, 100000, &n)))
                return rc;
            *(a[3] == 'i' ? &o->min_gpus : &o->max_gpus) = (int)n;
        } else if (strcmp(a, "--trace-dir") == 0 && has_next) {
            if (setenv("SERVESIM_TRACE_DIR", argv[++i], 1))
                return sim_err_set(SIM_EUSAGE, "--trace-dir: cannot set it");
        } else if ((strcmp(a, "-j") == 0 || strcmp(a, "--jobs") == 0) && has_next) {
            if ((rc = sim_arg_int(a, argv[++i], 1, 256, &n)))
                return rc;
            o->jobs = (int)n;
        } else if (a[0] == '-') {
            return sim_err_set(SIM_EUSAGE, "unknown option or missing value: %s (see servesim --help)", a);
        } else if (!o->config) {
            o->config = a;
        } else {
            return sim_err_set(SIM_EUSAGE, "unexpected argument: %s", a);
        }
    }
    return 0;
}

static int store_result(const struct opts *o, const struct sim_config *cfg, const char *kind,
                        const struct sim_result *r, const struct sim_goodput *g)
{
    if (o->no_db)
        return 0;
    struct sim_store *st = NULL;
    int64_t id = 0;
    int rc = sim_store_open(o->db, &st);
    if (!rc)
        rc = sim_config_store(st, cfg, kind, r, g, NULL, &id);
    sim_store_close(st);
    if (!rc && !o->quiet && !o->json)
        fprintf(stderr, "results: %s (run id %lld)\n", o->db, (long long)id);
    return rc;
}

/* A model that was offered requests and ran no batch is a policy decision (e.g. a plan that
 * left it no GPU) the table shows only as 100% bad: say so on stderr, also under --json: a line
 * per model, or under --quiet one line naming the first few and the count. */
static void warn_unserved(const struct sim_result *r, bool quiet)
{
    int n = 0;
    char names[256] = "";
    size_t len = 0;
    for (int m = 0; m < r->nmodels; m++) {
        const struct sim_model_result *x = &r->models[m];
        bool served = x->llm ? x->on_time + x->late > 0 : x->batches > 0;
        if (!(x->offered > 0 && !served))
            continue;
        if (!quiet)
            fprintf(stderr, "warning: model %s: none of its %llu requests was served: the "
                    "policy ran no %s of it (%s docs/policies.md)\n", x->name,
                    (unsigned long long)x->offered, x->llm ? "iteration" : "batch",
                    x->llm ? "none finished before the run stopped, or each was refused as "
                             "too long for the token budget or the KV pool: docs/llm.md;" :
                             "its SLO less the network delays below its batch-1 latency? a "
                             "plan that left it no GPU?");
        else if (n < 3 && len < sizeof names)
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", n ? ", " : "",
                                    x->name);
        n++;
    }
    if (quiet && n)
        fprintf(stderr, "warning: %d model%s had none of %s requests served (%s%s): the policy "
                "ran no batch of %s (docs/policies.md)\n", n, n > 1 ? "s" : "",
                n > 1 ? "their" : "its", names, n > 3 ? ", ..." : "", n > 1 ? "them" : "it");
}

static void emit(const struct opts *o, const struct sim_result *r, const struct sim_goodput *g)
{
    warn_unserved(r, o->quiet);
    if (o->json) {
        char *j = sim_report_json(r, g);
        if (j)
            printf("%s\n", j);
        free(j);
    } else if (!o->quiet) {
        sim_report_table(stdout, r, g);
    }
}

static int run_or_goodput(const struct opts *o, bool goodput)
{
    struct sim_config *cfg = NULL;
    struct sim_result *r = NULL;
    struct sim_goodput g;
    bool have_g = false;
    char note[512];
    int rc = sim_config_load(o->config, o->sets, o->nsets, o->seed_given, o->seed, &cfg);
    if (rc)
        return cli_fail(rc);
    /* the note of an extended warm-up is not printed under --quiet; a warning is */
    if (sim_config_transient(cfg, note, sizeof note) &&
        (!o->quiet || !cfg->world.warmup_extended))
        fprintf(stderr, "%s\n", note);
    if (cfg->trace_warning[0])           /* a window the trace covers in part: always said */
        fprintf(stderr, "%s\n", cfg->trace_warning);
    if (!o->no_db) {                     /* fail early on an unusable database */
        struct sim_store *st = NULL;
        if ((rc = sim_store_open(o->db, &st)))
            goto out;
        sim_store_close(st);
    }
    if (goodput) {
        double t0 = sim_wall_seconds();
        rc = sim_goodput_search(cfg, !o->quiet && !o->json, &g);
        have_g = true;
        if (rc)
            goto out;
        g.best->wall_s = sim_wall_seconds() - t0;
        emit(o, g.best, &g);
        rc = store_result(o, cfg, "goodput", g.best, &g);
        char why[512];
        if (!rc && sim_goodput_problem(&g, why, sizeof why))    /* kept, and said: exit 4 */
            rc = sim_err_set(SIM_EINFEASIBLE, "goodput: %s", why);
    } else {
        rc = sim_run_shown(cfg, 1.0, !o->quiet && !o->json, "run", &r);
        if (rc)
            goto out;
        emit(o, r, NULL);
        rc = store_result(o, cfg, "run", r, NULL);
    }
out:
    if (have_g)
        sim_goodput_free(&g);
    sim_result_destroy(r);
    sim_config_destroy(cfg);
    return rc ? cli_fail(rc) : 0;
}

static int cmd_run(const struct opts *o)
{
    return run_or_goodput(o, false);
}

static int cmd_goodput(const struct opts *o)
{
    return run_or_goodput(o, true);
}

static int cmd_sweep(const struct opts *o)
{
    if (!o->config)
        return cli_fail(sim_err_set(SIM_EUSAGE, "sweep: expected a sweep file (servesim sweep "
                                "--help)"));
    int rc = sim_sweep_run(o->config, o->db, o->jobs, o->sets, o->nsets, o->quiet, o->force);
    return rc ? cli_fail(rc) : 0;
}

static int cmd_plan(const struct opts *o)
{
    struct sim_plan p;
    struct sim_plan_input in = {
        .file = o->config, .sets = o->sets, .nsets = o->nsets, .seed_given = o->seed_given,
        .seed = o->seed, .db = o->no_db ? NULL : o->db, .min_gpus = o->min_gpus,
        .max_gpus = o->max_gpus, .progress = !o->quiet && !o->json,
    };
    int rc = sim_plan_run(&in, &p);
    if (!rc) {
        if (o->json) {
            char *j = sim_plan_json(&p);
            if (j)
                printf("%s\n", j);
            free(j);
        } else if (!o->quiet) {
            sim_plan_print(stdout, &p);
            if (in.db)
                fprintf(stderr, "results: %s (plans, plan_probes; runs of kind plan)\n", in.db);
        }
        for (int i = 0; i < p.nvariants && p.static_gpus; i++)
            if (!p.variants[i].static_gpus)   /* a variant without an answer: an incomplete one */
                rc = sim_err_set(SIM_EINFEASIBLE, "plan: variant %s: no GPU count in [%d, %d] "
                                 "meets every SLO (the others are printed above)",
                                 p.variants[i].label, p.variants[i].min_gpus,
                                 p.variants[i].max_gpus);
        if (!p.static_gpus) {          /* no answer within the limits: say the best reached */
            const struct sim_plan_probe *b = NULL;
            for (int i = 0; i < p.nprobes; i++)
                if (!b || p.probes[i].worst_bad_frac < b->worst_bad_frac)
                    b = &p.probes[i];
            rc = sim_err_set(SIM_EINFEASIBLE, "plan: no GPU count in [%d, %d] meets every SLO%s%d "
                             "GPUs, worst model %s with %.3f%% of its requests bad (raise --max "
                             "or cluster.max_gpus, or relax the SLO)", p.min_gpus, p.max_gpus,
                             b ? "; the best probe: " : "", b ? b->gpus : 0,
                             b ? b->worst_model : "-", b ? 100 * b->worst_bad_frac : 0.0);
        }
    }
    sim_plan_free(&p);
    return rc ? cli_fail(rc) : 0;
}

static int cmd_export(int argc, char **argv)
{
    const char *db = NULL, *out = NULL;
    for (int i = 2; i < argc; i++) {
        if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--out") == 0) && i + 1 < argc)
            out = argv[++i];
        else if (argv[i][0] != '-' && !db)
            db = argv[i];
        else
            return cli_fail(sim_err_set(SIM_EUSAGE, "export: unexpected argument %s "
                                    "(usage: servesim export DB [-o FILE])", argv[i]));
    }
    if (!db)
        return cli_fail(sim_err_set(SIM_EUSAGE, "export: expected a results database"));
    struct sim_samples ss;
    int rc = out ? sim_out_check(out) : 0;
    if (!rc)
        rc = sim_out_not_input(out, db, "the database");
    if (rc || (rc = sim_results_load(db, &ss)))
        return cli_fail(rc);
    struct sim_out so = {.f = stdout};
    if (out && (rc = sim_out_open(&so, out))) {
        sim_results_free(&ss);
        return cli_fail(rc);
    }
    rc = sim_results_export(&ss, so.f);
    sim_results_free(&ss);
    if (out) {
        int crc = sim_out_close(&so, rc == 0);
        rc = rc ? rc : crc;
    }
    return rc ? cli_fail(rc) : 0;
}

/* Ctrl-C during run, goodput or plan: what was kept, said from the handler (write(2) and
 * _exit are async-signal-safe; the message is prepared before the command starts). A run or
 * a goodput search is written in one transaction when it ends, so nothing of it is kept; a
 * plan's probes are written one by one, its summary at the end. SQLite rolls back the
 * transaction an exit interrupts when the database is next opened. */
static char interrupt_msg[512];
static size_t interrupt_len;

static void on_interrupt(int sig)
{
    if (write(STDERR_FILENO, interrupt_msg, interrupt_len) < 0)
        interrupt_len = 0;
    _exit(128 + sig);                   /* 130 for Ctrl-C, 143 for SIGTERM, as a shell's */
}

static void arm_interrupt(const char *cmd, const struct opts *o)
{
    if (strcmp(cmd, "plan") == 0)
        snprintf(interrupt_msg, sizeof interrupt_msg, "\nservesim plan: interrupted: the "
                 "probes that finished are in %s (runs of kind plan); the plan itself was not "
                 "written\n", o->no_db ? "no database (--no-db)" : o->db);
    else
        snprintf(interrupt_msg, sizeof interrupt_msg, "\nservesim %s: interrupted: nothing "
                 "was written (a %s is written when it finishes)\n", cmd,
                 strcmp(cmd, "goodput") == 0 ? "goodput search" : "run");
    interrupt_len = strlen(interrupt_msg);
    struct sigaction sa = {.sa_handler = on_interrupt};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int main(int argc, char **argv)
{
    sim_out_guard_stdout("servesim");
    struct opts o;
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        (strcmp(argv[1], "help") == 0 && argc == 2)) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        char zoo[4096];
        char mpi[256];
        printf("servesim %s (zoos: %s)\n", SERVESIM_VERSION, wl_zoo_dir(zoo, sizeof zoo));
        printf("MPI sweeps: %s\n", sim_sweep_mpi_library(mpi, sizeof mpi));
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "help") == 0)      /* servesim help COMMAND */
        return command_help(argv[2]) ? 0 : (fprintf(stderr, "servesim: no command \"%s\"\n",
                                                     argv[2]), 2);
    const struct command *c = command_of(argv[1]);
    if (!c) {
        fprintf(stderr, "servesim: unknown command \"%s\"\n\n", argv[1]);
        usage(stderr);
        return 2;
    }
    if (c->own && c->own_help)
        return c->own(argc, argv);
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return command_help(argv[1]) ? 0 : 2;
    if (c->own)
        return c->own(argc, argv);
    int rc = parse_opts(argc, argv, &o);
    if (rc) {
        opts_free(&o);
        return cli_fail(rc);
    }
    if (c->interruptible)
        arm_interrupt(c->name, &o);
    rc = c->run(&o);
    opts_free(&o);
    return rc;
}
