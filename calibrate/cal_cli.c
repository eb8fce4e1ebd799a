/* servesim-calibrate — measures latency profiles by running real networks on real kernels
 * (oneDNN on CPUs, cuDNN on NVIDIA GPUs), fits them, writes zoo files and database rows, and
 * checks the simulator against a real serving loop. Usage: servesim-calibrate --help.
 * Exit codes: 0 done, 1 internal error, 2 bad input, 77 backend unavailable here (no GPU). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sqlite3.h>
#include <cjson/cJSON.h>

#include "cal_backend.h"
#include "cal_concur.h"
#include "cal_dec.h"
#include "cal_measure.h"
#include "cal_net.h"
#include "cal_profile.h"
#include "cal_ref.h"
#include "cal_validate.h"
#include "sim_err.h"
#include "sim_grow.h"
#include "sim_out.h"
#include "sim_wall.h"
#include "sim_readback.h"
#include "sim_store.h"
#include "cal_cli_int.h"

/* The text after the commands in --help: what NET is, and the options. */
static const char options_text[] =
    "NET is a file (calibrate/networks/resnet50.json) or a shipped name (resnet50).\n"
    "options:\n"
    "  --backend onednn|cudnn   (onednn)\n"
    "  --precision fp32|tf32|fp16 (fp32; tf32/fp16 on cudnn only)\n"
    "  --threads LIST           CPU threads, comma-separated: one executor kind each (1)\n"
    "  --device N               GPU ordinal (0)\n"
    "  --batches LIST           batch sizes, each 1..4096 (1,2,4,8)\n"
    "  --warmup N --reps N      untimed and timed passes per batch size (3, 20)\n"
    "  --out ZOO.json           write a zoo (servesim-zoo/2) usable in configs\n"
    "  --db FILE                add rows to the profiles and profile_points tables (measure;\n"
    "                           llm-measure: one profiles row of form llm-iteration)\n"
    "  --kind NAME              executor kind (default: from the device; CPU kinds get @Ncore)\n"
    "  --zoo-name NAME          the zoo's name (calibrated)\n"
    "  --no-fold-bn             keep batch-norm layers explicit (default: folded into conv)\n"
    "  --exec graph|eager       cudnn: a pass as one CUDA graph replayed, as a serving engine\n"
    "                           runs it (graph, the default), or every kernel issued from the\n"
    "                           host each pass, as a framework runs eagerly (eager)\n"
    "  --no-fuse                cudnn: no fused groups (conv/GEMM + bias + residual +\n"
    "                           activation as one call); each layer its own calls\n"
    "  --fit-on median|p99      statistic the fits and tables use (median; FA2 fits the p99)\n"
    "  --serving LOAD           measure: time passes as a server runs them, not back to back:\n"
    "                           batch sizes interleaved at random, an idle gap before each\n"
    "                           (exponential; the device busy LOAD of the time, 0 < LOAD < 1);\n"
    "                           fits on the means and writes each profile's service-time\n"
    "                           distribution (shifted lognormal or gamma, by KS distance)\n"
    "  --tol X                  worst relative error a fit may have (0.05): linear if it\n"
    "                           is within, else quadratic if that is, else the measured table\n"
    "  --tol-check X            check: largest relative error per layer or decoder step\n"
    "                           (1e-4 fp32, 2e-2 fp16)\n"
    "  --zoo FILE --model NAME  validate: the calibrated zoo and model (the net's name)\n"
    "  --loads LIST             validate: fractions of capacity B/l(B) (0.2,0.4,0.6,0.8);\n"
    "                           llm-validate: of the profile's capacity (docs/calibrate.md)\n"
    "  --requests N             validate, llm-validate: requests per load (300)\n"
    "  --max-batch N            validate: the server's max batch (8)\n"
    "  --tsv FILE               validate, llm-validate: append one row per load (real, sim\n"
    "                           and observed)\n"
    "  --seed N                 arrivals and weights (1)\n"
    "  --k LIST                 concurrency: inferences in service at once (1,2,3,4)\n"
    "  --inter-op LIST          concurrency: inter-op workers per inference, p (1)\n"
    "  --seconds S              concurrency: timed seconds per (k, p, t) (3)\n"
    "  --batch N                concurrency: the batch of each inference (1)\n"
    "DECODER is a decoder file (servesim-decoder/1) or a shipped name: llama_3_8b, mistral_7b,\n"
    "qwen2_5_7b, tiny_llama, tiny_qwen. --backend onednn runs them on the CPU in fp32 (the\n"
    "7-8B ones need 29-32 GB); --backend cudnn on the GPU in fp16 (cuBLASLt GEMMs, the\n"
    "project's CUDA kernels for the rest, decode iterations as CUDA graphs unless --exec\n"
    "eager; weights drawn on the GPU, but check's: the decoder's own). Decoder options:\n"
    "  --tokens LIST            llm-measure: the dense curve's iteration tokens T\n"
    "  --chunks LIST --contexts LIST   llm-measure: prefill attention's grid\n"
    "  --seqs LIST --kv-tokens LIST    llm-measure: decode attention's grid (sequences,\n"
    "                           their context tokens in all); --seqs is also the LM\n"
    "                           head's and the host's axis (defaults: docs/calibrate.md)\n"
    "  --out FILE               llm-measure: the profile (servesim-llm-profile/1)\n"
    "  --no-check               llm-measure: no whole-iteration check (a quicker profile)\n"
    "  --kind NAME              llm-measure: the profile's device name (cpu; a GPU's from its\n"
    "                           name, e.g. h100)\n"
    "  --profile FILE           llm-validate: the measured profile\n"
    "  --max-num-seqs N --max-num-batched-tokens N   llm-validate: the scheduler's limits (32, 512)\n"
    "  --kv-blocks N            llm-validate: blocks of 16 tokens in the KV pool (1024)\n"
    "  --prompt LO,HI --output LO,HI   llm-validate: token lengths, uniform (32,256 and 16,128);\n"
    "                           with --trace, the range the trace's lengths are clipped to\n"
    "  --trace FILE             llm-validate: a token trace's requests (its arrivals scaled to\n"
    "                           each load's rate, its prompt and output lengths) instead of\n"
    "                           Poisson arrivals with uniform lengths\n"
    "  --trace-format F         azure_llm (AzureLLMInferenceTrace_*.csv, the default) or\n"
    "                           mooncake (*.jsonl)\n"
    "  --virtual-clock          llm-validate: the server's clock advances by the profile's\n"
    "                           time per iteration: its scheduler alone against the\n"
    "                           simulator's (they agree to the nanosecond)\n"
    "  --table-out FILE         llm-validate: every real iteration (load, sequences, tokens,\n"
    "                           decodes, their context, prefill tokens, us, profile us)\n"
    "  --table-out FILE         concurrency: the bare table rows, for\n"
    "                           --set cluster.interference_table=@FILE (--out: the whole record)\n";


static int exit_code(int rc)
{
    if (!rc)
        return 0;
    fprintf(stderr, "servesim-calibrate: %s\n", sim_err_msg_for(rc));
    return rc == SIM_EUNAVAIL ? 77 : sim_err_is_input(rc) ? 2 : 1;
}

static int parse_list(const char *opt, const char *s, double *out, int max, int *n, bool ints)
{
    char *end;
    *n = 0;
    while (*s) {
        errno = 0;
        double v = strtod(s, &end);
        if (end == s || errno || !(v > 0) || (ints && v != (double)(long)v) || *n == max)
            return sim_err_set(SIM_EUSAGE, "%s: expected a comma-separated list of at most %d "
                               "positive %s, got \"%s\"", opt, max, ints ? "integers" : "numbers", s);
        out[(*n)++] = v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return sim_err_set(SIM_EUSAGE, "%s: unexpected \"%s\"", opt, end);
    }
    return *n ? 0 : sim_err_set(SIM_EUSAGE, "%s: expected a list, got nothing", opt);
}

static int parse_int_list(const char *opt, const char *s, int *out, int max, int *n)
{
    double v[CAL_MAX_POINTS];
    int rc = parse_list(opt, s, v, max < CAL_MAX_POINTS ? max : CAL_MAX_POINTS, n, true);
    for (int i = 0; i < *n; i++)
        out[i] = (int)v[i];
    return rc;
}

/* An axis of a decoder's tables: at most 32 whole numbers >= lo, strictly increasing. */
static int parse_axis(const char *opt, const char *s, long lo, int *out, int *n)
{
    *n = 0;
    char *end;
    while (*s) {
        errno = 0;
        long v = strtol(s, &end, 10);
        if (end == s || errno || v < lo || v > (1 << 24) || *n == 32 || (*n > 0 && v <= out[*n - 1]))
            return sim_err_set(SIM_EUSAGE, "%s: expected at most 32 increasing whole numbers "
                               ">= %ld, comma-separated, got \"%s\"", opt, lo, s);
        out[(*n)++] = (int)v;
        if (*end && *end != ',')
            return sim_err_set(SIM_EUSAGE, "%s: unexpected \"%s\"", opt, end);
        s = *end == ',' ? end + 1 : end;
    }
    return *n ? 0 : sim_err_set(SIM_EUSAGE, "%s: expected a list, got nothing", opt);
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){.backend = "onednn", .nthreads = 1, .threads = {1}, .nbatches = 4,
                       .batches = {1, 2, 4, 8}, .warmup = 3, .reps = 20, .tol = 0.05,
                       .tol_check = 0, .batch = 2, .requests = 300, .max_batch = 8, .fold = true,
                       .seed = 1, .nloads = 4, .loads = {0.2, 0.4, 0.6, 0.8},
                       .zoo_name = "calibrated", .nks = 4, .ks = {1, 2, 3, 4}, .seconds = 3,
                       .nps = 1, .ps = {1}, .max_num_seqs = 32, .max_batched = 512,
                       .kv_blocks = 1024, .prompt = {32, 256}, .output = {16, 128}};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int rc = 0;
#define VAL()                                                                             \
    do {                                                                                  \
        if (!v)                                                                           \
            return sim_err_set(SIM_EUSAGE, "%s: expected a value", a);                    \
        i++;                                                                              \
    } while (0)
#define INT(dst, lo)                                                                      \
    do {                                                                                  \
        VAL();                                                                            \
        long long x_;                                                                     \
        if ((rc = sim_arg_int(a, v, (lo), 1000000, &x_)))                                 \
            return rc;                                                                    \
        dst = (int)x_;                                                                    \
    } while (0)
        if (!strcmp(a, "--backend")) { VAL(); o->backend = v; }
        else if (!strcmp(a, "--precision")) { VAL(); if ((rc = cal_precision_parse(v, &o->precision))) return SIM_EUSAGE; }
        else if (!strcmp(a, "--threads")) { VAL(); rc = parse_int_list(a, v, o->threads, 16, &o->nthreads); }
        else if (!strcmp(a, "--k")) { VAL(); rc = parse_int_list(a, v, o->ks, 16, &o->nks); }
        else if (!strcmp(a, "--inter-op")) { VAL(); rc = parse_int_list(a, v, o->ps, 16, &o->nps); }
        else if (!strcmp(a, "--seconds")) { VAL(); rc = sim_arg_num(a, v, 0, true, 3600, &o->seconds); }
        else if (!strcmp(a, "--tsv")) { VAL(); o->tsv = v; }
        else if (!strcmp(a, "--serving")) {
            VAL();
            double x = 0;
            if (sim_arg_num(a, v, 0, true, INFINITY, &x) || x >= 1)
                rc = sim_err_set(SIM_EUSAGE, "--serving: expected a load in (0, 1), got \"%s\"", v);
            else
                o->serving = x;
        }
        else if (!strcmp(a, "--table-out")) { VAL(); o->table_out = v; }
        else if (!strcmp(a, "--batches")) {
            VAL();
            rc = parse_int_list(a, v, o->batches, CAL_MAX_POINTS, &o->nbatches);
            for (int j = 0; j < o->nbatches && !rc; j++)
                if (o->batches[j] > CAL_MAX_BATCH)
                    rc = sim_err_set(SIM_EUSAGE, "--batches: expected batch sizes of at most %d, "
                                     "got %d", CAL_MAX_BATCH, o->batches[j]);
        }
        else if (!strcmp(a, "--tokens")) { VAL(); rc = parse_axis(a, v, 1, o->tokens, &o->ntokens); }
        else if (!strcmp(a, "--chunks")) { VAL(); rc = parse_axis(a, v, 1, o->chunks, &o->nchunks); }
        else if (!strcmp(a, "--contexts")) { VAL(); rc = parse_axis(a, v, 0, o->contexts, &o->ncontexts); }
        else if (!strcmp(a, "--seqs")) { VAL(); rc = parse_axis(a, v, 1, o->seqs, &o->nseqs); }
        else if (!strcmp(a, "--kv-tokens")) { VAL(); rc = parse_axis(a, v, 1, o->kvs, &o->nkvs); }
        else if (!strcmp(a, "--profile")) { VAL(); o->profile = v; }
        else if (!strcmp(a, "--trace")) { VAL(); o->trace = v; }
        else if (!strcmp(a, "--trace-format")) {
            VAL();
            if (strcmp(v, "azure_llm") && strcmp(v, "mooncake"))
                return sim_err_set(SIM_EUSAGE, "--trace-format: expected azure_llm or mooncake, "
                                   "got \"%s\"", v);
            o->trace_format = v;
        }
        else if (!strcmp(a, "--virtual-clock")) o->virtual_clock = true;
        else if (!strcmp(a, "--no-check")) o->no_check = true;
        else if (!strcmp(a, "--max-num-seqs")) INT(o->max_num_seqs, 1);
        else if (!strcmp(a, "--max-num-batched-tokens")) INT(o->max_batched, 1);
        else if (!strcmp(a, "--kv-blocks")) { int k = 0; INT(k, 1); o->kv_blocks = k; }
        else if (!strcmp(a, "--prompt") || !strcmp(a, "--output")) {
            VAL();
            int *lh = !strcmp(a, "--prompt") ? o->prompt : o->output, k = 0;
            rc = parse_int_list(a, v, lh, 2, &k);
            if (!rc && (k != 2 || lh[1] < lh[0]))
                return sim_err_set(SIM_EUSAGE, "%s: expected LO,HI with LO <= HI, got \"%s\"", a, v);
        }
        else if (!strcmp(a, "--loads")) { VAL(); rc = parse_list(a, v, o->loads, CAL_VALIDATE_MAX_LOADS, &o->nloads, false); }
        else if (!strcmp(a, "--warmup")) INT(o->warmup, 0);
        else if (!strcmp(a, "--reps")) INT(o->reps, 1);
        else if (!strcmp(a, "--device")) INT(o->device, 0);
        else if (!strcmp(a, "--batch")) {
            VAL();
            long long x_;
            if ((rc = sim_arg_int(a, v, 1, CAL_MAX_BATCH, &x_)))
                return rc;
            o->batch = (int)x_;
            o->batch_set = true;
        }
        else if (!strcmp(a, "--requests")) INT(o->requests, 10);
        else if (!strcmp(a, "--max-batch")) INT(o->max_batch, 1);
        else if (!strcmp(a, "--seed")) { int s = 0; INT(s, 0); o->seed = (unsigned long long)s; }
        else if (!strcmp(a, "--out")) { VAL(); o->out = v; }
        else if (!strcmp(a, "--db")) { VAL(); o->db = v; }
        else if (!strcmp(a, "--kind")) { VAL(); o->kind = v; }
        else if (!strcmp(a, "--zoo-name")) { VAL(); o->zoo_name = v; }
        else if (!strcmp(a, "--zoo")) { VAL(); o->zoo = v; }
        else if (!strcmp(a, "--model")) { VAL(); o->model = v; }
        else if (!strcmp(a, "--no-fold-bn")) o->fold = false;
        else if (!strcmp(a, "--no-fuse")) o->unfused = true;
        else if (!strcmp(a, "--exec")) {
            VAL();
            if (strcmp(v, "graph") && strcmp(v, "eager"))
                return sim_err_set(SIM_EUSAGE, "--exec: expected graph or eager, got \"%s\"", v);
            o->eager = !strcmp(v, "eager");
        }
        else if (!strcmp(a, "--fit-on")) {
            VAL();
            if (strcmp(v, "median") && strcmp(v, "p99"))
                return sim_err_set(SIM_EUSAGE, "--fit-on: expected median or p99, got \"%s\"", v);
            o->fit_p99 = !strcmp(v, "p99");
        }
        else if (!strcmp(a, "--tol") || !strcmp(a, "--tol-check")) {
            VAL();
            rc = sim_arg_num(a, v, 0, true, INFINITY,
                             !strcmp(a, "--tol") ? &o->tol : &o->tol_check);
        } else if (a[0] == '-')
            return sim_err_set(SIM_EUSAGE, "unknown option %s (see --help)", a);
        else if (o->nnets < 64)
            o->nets[o->nnets++] = a;
        if (rc)
            return rc;
    }
    for (int i = 1; i < o->nbatches; i++)
        if (o->batches[i] <= o->batches[i - 1])
            return sim_err_set(SIM_EUSAGE, "--batches: expected increasing sizes, got %d after %d",
                               o->batches[i], o->batches[i - 1]);
    return 0;
}

int cli_load_net(const char *ref, const struct opts *o, struct cal_net **net)
{
    char file[1024];
    cal_net_resolve(ref, file, sizeof file);
    int rc = cal_net_load(file, net);
    if (!rc)
        rc = cal_net_init_weights(*net, o->seed);
    return rc;
}

/* The backend options every command shares (threads: the CPU executor's). */
struct cal_opts cli_backend_opts(const struct opts *o, int threads)
{
    return (struct cal_opts){.threads = threads, .precision = o->precision, .device = o->device,
                             .eager = o->eager, .unfused = o->unfused};
}

int cli_find_backend(const struct opts *o, const struct cal_backend_ops **be)
{
    *be = cal_backend_find(o->backend);
    if (!*be)
        return sim_err_set(!strcmp(o->backend, "cudnn") ? SIM_EUNAVAIL : SIM_EUSAGE,
                           "--backend: expected one of %s, got \"%s\"", cal_backend_names(), o->backend);
    if (!strcmp((*be)->name, "onednn") && (o->eager || o->unfused))
        return sim_err_set(SIM_EUSAGE, "%s: a cudnn option (the CPU backend runs every layer "
                           "from the host, unfused); drop it or use --backend cudnn",
                           o->eager ? "--exec eager" : "--no-fuse");
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The shipped networks: every NAME.json of the networks folder (cal_net_resolve's), sorted. */
static int shipped_nets(char ***names, int *n)
{
    char probe[1024];
    cal_net_resolve("x", probe, sizeof probe);
    char *slash = strrchr(probe, '/');
    if (slash)
        *slash = '\0';
    DIR *d = opendir(probe);
    *names = NULL;
    *n = 0;
    if (!d)
        return sim_err_set(SIM_EINVAL, "%s: cannot list the shipped networks: %s", probe,
                           strerror(errno));
    int rc = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d)) && !rc;) {
        size_t l = strlen(e->d_name);
        if (l <= 5 || strcmp(e->d_name + l - 5, ".json") != 0)
            continue;
        if ((rc = sim_grow(names, &cap, *n + 1, sizeof **names, 32)))
            break;
        if (!((*names)[*n] = strndup(e->d_name, l - 5)))
            rc = SIM_ENOMEM;
        else
            (*n)++;
    }
    closedir(d);
    if (!rc)
        qsort(*names, (size_t)*n, sizeof **names, by_name);
    return rc;
}

/* nets: a parameter count that is not the published one, or MACs off the published figure
 * (given to 2 or 3 digits) by more than NETS_MACS_OFF, is flagged, with the note its file
 * gives (published.ref) */
#define NETS_MACS_OFF 0.01

static bool nets_params_off(const struct cal_net *net)
{
    return net->pub_params > 0 && cal_net_params(net) != net->pub_params;
}

static bool nets_macs_off(const struct cal_net *net)
{
    return net->pub_gmacs > 0 && fabs(cal_net_macs(net) / 1e9 / net->pub_gmacs - 1) > NETS_MACS_OFF;
}

/* nets [NET...]: every network loaded first (an error comes before any table), then one row
 * each, the columns as wide as their longest entry. */
static int cmd_nets(const struct opts *o)
{
    char **own = NULL;
    int n = o->nnets, rc = 0, all;
    if (!n && (rc = shipped_nets(&own, &n)))
        return rc;
    /* decoders have a table of their own, after the networks' */
    const char **names = calloc((size_t)(n ? n : 1), sizeof *names);
    const char **decs = calloc((size_t)(n ? n : 1), sizeof *decs);
    int nd = 0;
    all = n;
    if (!names || !decs) {
        free(names), free(decs);
        return SIM_ENOMEM;
    }
    n = 0;
    for (int i = 0; i < all; i++) {
        const char *nm = own ? own[i] : o->nets[i];
        if (cli_is_decoder(nm))
            decs[nd++] = nm;
        else
            names[n++] = nm;
    }
    struct cal_net **nets = calloc((size_t)(n ? n : 1), sizeof *nets);
    char (*file)[1024] = calloc((size_t)(n ? n : 1), sizeof *file);
    char (*in)[48] = calloc((size_t)(n ? n : 1), sizeof *in);
    int wname = 7, win = 5, noted = 0;
    if (!nets || !file || !in)
        rc = SIM_ENOMEM;
    for (int i = 0; i < n && !rc; i++) {
        cal_net_resolve(names[i], file[i], sizeof file[i]);
        if ((rc = cal_net_load(file[i], &nets[i])))
            break;
        const struct cal_net *net = nets[i];
        if (net->tokens)
            snprintf(in[i], sizeof in[i], "%lld tok", (long long)net->input.d[0]);
        else
            snprintf(in[i], sizeof in[i], "%lldx%lldx%lld", (long long)net->input.d[0],
                     (long long)net->input.d[1], (long long)net->input.d[2]);
        wname = (int)fmax(wname, (double)strlen(net->name));
        win = (int)fmax(win, (double)strlen(in[i]));
    }
    if (!rc && n > 0)
        printf("%-*s  %-*s %6s %14s %16s %9s %11s %6s %5s  %s\n", wname, "network", win, "input",
               "layers", "params", "published", "GMACs", "published", "pi", "width", "file");
    for (int i = 0; i < n && !rc; i++) {
        const struct cal_net *net = nets[i];
        double pi;
        int width;
        cal_net_parallelism(net, &pi, &width);
        char pp[24] = "-", pg[24] = "-";      /* a net without published figures: "-" */
        /* a count off the published one is flagged (its note below) */
        bool off = nets_params_off(net) || nets_macs_off(net);
        if (net->pub_params > 0)
            snprintf(pp, sizeof pp, "%lld%s", (long long)net->pub_params,
                     nets_params_off(net) ? " *" : "  ");
        if (net->pub_gmacs > 0)
            snprintf(pg, sizeof pg, "%.2f%s", net->pub_gmacs, nets_macs_off(net) ? " *" : "  ");
        printf("%-*s  %-*s %6d %14lld %16s %9.3f %11s %6.3f %5d  %s\n", wname, net->name, win,
               in[i], net->n, (long long)cal_net_params(net), pp, cal_net_macs(net) / 1e9, pg,
               pi, width, file[i]);
        noted += off;
    }
    /* what each flagged network models differently, from its file's published.ref */
    if (!rc && noted)
        printf("\n* not the published figure (parameters: any difference; MACs: more than "
               "%g%%), and why:\n", 100 * NETS_MACS_OFF);
    for (int i = 0; i < n && !rc && noted; i++) {
        const struct cal_net *net = nets[i];
        if (!nets_params_off(net) && !nets_macs_off(net))
            continue;
        double dp = (double)(cal_net_params(net) - net->pub_params);
        printf("  %s: params %+.0f (%+.3f%%), GMACs %+.1f%%: %s\n", net->name, dp,
               net->pub_params > 0 ? 100 * dp / (double)net->pub_params : 0.0,
               net->pub_gmacs > 0 ? 100 * (cal_net_macs(net) / 1e9 / net->pub_gmacs - 1) : 0.0,
               net->pub_ref[0] ? net->pub_ref : "(no note in its file)");
    }
    if (!rc && nd > 0) {
        if (n > 0)
            printf("\n");
        rc = cli_decoders_table(decs, nd);
    }
    for (int i = 0; i < n; i++)
        if (nets && nets[i])
            cal_net_destroy(nets[i]);
    for (int i = 0; own && i < all; i++)
        free(own[i]);
    free(own), free(nets), free(file), free(in), free(names), free(decs);
    return rc;
}

/* Every layer a backend materialises against the reference. The reference runs the network
 * as written; the backend runs it as measure does (bn folded unless --no-fold-bn, groups
 * fused), so a folded conv is compared with its bn's reference output, a fused group's output
 * with its last layer's, and a layer absorbed into a group says which. */
static int cmd_check(const struct opts *o)
{
    const struct cal_backend_ops *be;
    int rc, worst = -1, compared = 0, absorbed = 0;
    if (o->nnets != 1)
        return sim_err_set(SIM_EUSAGE, "check: expected one network, got %d", o->nnets);
    if (cli_is_decoder(o->nets[0]))
        return cmd_llm_check(o);
    if ((rc = cli_find_backend(o, &be)))
        return rc;
    struct cal_net *net = NULL, *orig = NULL;
    float **ref = NULL, *got = NULL;
    void *st = NULL, *in = NULL;
    struct cal_opts bo = cli_backend_opts(o, o->threads[0]);
    bo.keep_all = true;
    double tol = o->tol_check > 0 ? o->tol_check : o->precision == CAL_FP32 ? 1e-4 : 2e-2, werr = 0;
    struct cal_mem_info mi;
    double ms;
    if ((rc = cli_load_net(o->nets[0], o, &orig)) || (rc = cli_load_net(o->nets[0], o, &net)))
        goto out;
    if (o->fold && (rc = cal_net_fold_bn(net)) < 0)
        goto out;
    if ((rc = be->create(&bo, &st)) || (rc = be->prepare(st, net, o->batch, &mi)))
        goto out;
    if (!(in = cal_ref_input(net, o->batch, o->seed))) {
        rc = SIM_ENOMEM;
        goto out;
    }
    if ((rc = be->set_input(st, in)) || (rc = be->run(st, &ms)) ||
        (rc = cal_ref_forward(orig, o->batch, in, &ref)))
        goto out;
    printf("%-24s %-10s %-16s %12s\n", "layer", "op", "shape", "rel. error");
    for (int i = 0; i < net->n && !rc; i++) {
        const struct cal_layer *l = &net->layers[i];
        const struct cal_layer *ol = &orig->layers[l->orig];
        int into = be->fused_into ? be->fused_into(st, i) : i;
        char sh[48], op[32];
        snprintf(sh, sizeof sh, l->shape.nd == 3 ? "[%lld,%lld,%lld]" : l->shape.nd == 2 ? "[%lld,%lld]" : "[%lld]",
                 (long long)l->shape.d[0], (long long)l->shape.d[1], (long long)l->shape.d[2]);
        snprintf(op, sizeof op, "%s%s", cal_op_name(l->op), ol->op != l->op ? "+bn" : "");
        if (into != i) {
            printf("%-24s %-10s %-16s %12s  (fused into %s)\n", l->name, op, sh, "-",
                   net->layers[into].name);
            absorbed++;
            continue;
        }
        int64_t cnt = o->batch * cal_shape_count(&l->shape);
        free(got);
        if (!(got = malloc((size_t)cnt * sizeof *got))) {
            rc = SIM_ENOMEM;
            break;
        }
        if ((rc = be->read(st, i, got)))
            break;
        double e = cal_ref_rel_err(got, ref[l->orig], cnt);
        printf("%-24s %-10s %-16s %12.2e%s\n", l->name, op, sh, e, e > tol ? "  FAIL" : "");
        compared++;
        if (e > werr)
            werr = e, worst = i;
    }
    if (!rc) {
        printf("%s on %s, batch %d, %s%s%s: %d outputs compared (%d layers of the file; %d fused "
               "into groups, %d bn folded): worst %.2e (%s) against tolerance %.0e\n", net->name,
               be->name, o->batch, cal_precision_name(o->precision), be->fused_into ? ", " : "",
               be->fused_into ? cal_exec_name(&bo) : "", compared,
               orig->n, absorbed, orig->n - net->n, werr,
               worst >= 0 ? net->layers[worst].name : "-", tol);
        if (werr > tol)
            rc = sim_err_set(SIM_EINTERNAL, "check: %s differs from the reference beyond %.0e", be->name, tol);
    }
out:
    for (int i = 0; ref && i < orig->n; i++)
        free(ref[i]);
    free(ref), free(got), free(in);
    if (st)
        be->destroy(st);
    cal_net_destroy(net);
    cal_net_destroy(orig);
    return rc;
}

/* Writes JSON to file whole or not at all (sim_out). */
int cli_write_json(const char *file, const cJSON *j)
{
    char *text = cJSON_Print(j);
    int rc = text ? sim_out_write(file, text) : SIM_ENOMEM;
    free(text);
    return rc;
}

/* Every network named loads (a file of the servesim-net format, or a shipped name): an
 * unknown one is said before a backend or device is touched. */
static int check_nets(const struct opts *o)
{
    for (int i = 0; i < o->nnets; i++) {
        struct cal_net *net = NULL;
        char file[1024];
        cal_net_resolve(o->nets[i], file, sizeof file);
        if (cal_dec_is_file(file)) {
            struct cal_dec *d = NULL;
            int rc = cal_dec_load(file, &d);
            cal_dec_destroy(d);
            if (rc)
                return rc;
            continue;
        }
        int rc = cal_net_load(file, &net);
        cal_net_destroy(net);
        if (rc)
            return rc;
    }
    return 0;
}

/* The files a command will write, checked before it measures anything. */
static int check_outputs(const struct opts *o)
{
    int rc = 0;
    const char *outs[] = {o->out, o->table_out, o->tsv};
    for (size_t i = 0; i < sizeof outs / sizeof outs[0] && !rc; i++)
        if (outs[i]) {
            rc = sim_out_check(outs[i]);
            if (!rc)
                rc = sim_out_not_input(outs[i], o->db, "the database (--db)");
            if (!rc)
                rc = sim_out_not_input(outs[i], o->zoo, "the zoo (--zoo)");
            for (size_t j = 0; j < i && !rc; j++)
                rc = sim_out_not_input(outs[i], outs[j], "another output");
        }
    /* --db: a results database (or a new or empty file), said before the measuring */
    struct stat sb;
    if (!rc && o->db && (rc = sim_out_check(o->db)) == 0 && stat(o->db, &sb) == 0 &&
        sb.st_size > 0) {
        sqlite3 *db = NULL;
        int version = 0;
        rc = sim_results_open(o->db, &db, &version);
        sqlite3_close(db);
    }
    return rc;
}

static double rel(double sim, double real)
{
    return real != 0 ? (sim - real) / real : 0;
}

/* validate's report: the real server against the simulator at every load (and the --tsv
 * rows), the footnote, and each batch size's real service time against the profile. */
static int validate_report(const struct opts *o, const struct cal_net *net, const char *backend,
                           const struct cal_validate_row *rows)
{
    int rc = 0;
    printf("%s on %s, FIFO batching up to %d, %d Poisson requests per load\n", net->name, backend,
           o->max_batch, o->requests);
    printf("%5s %8s | %6s %6s | %9s %9s %7s %7s | %9s %9s %7s | %9s %9s %7s %7s | %8s %8s "
           "%7s %5s %11s\n", "load", "rate/s", "util", "sim", "mean ms", "sim", "err", "obs", "p50 ms",
           "sim", "err", "p99 ms", "sim", "err", "obs", "tput/s", "sim", "err", "ac",
           "noise m/p99");
    FILE *tsv = NULL;
    if (o->tsv) {
        bool fresh = access(o->tsv, F_OK) != 0;
        /* appended to, so never through a link planted at the name (O_NOFOLLOW) */
        int fd = open(o->tsv, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 || !(tsv = fdopen(fd, "a"))) {
            rc = sim_err_set(SIM_EIO, "%s: cannot write: %s", o->tsv,
                             errno == ELOOP ? "it is a symbolic link (servesim-calibrate appends "
                                              "only to a regular file)" : strerror(errno));
            if (fd >= 0)
                close(fd);
            return rc;
        }
        if (fresh)
            fprintf(tsv, "network\tthreads\tload\trate_rps\tutil\tsim_util\tmean_ms\tsim_mean_ms"
                    "\tobs_mean_ms\tp50_ms\tsim_p50_ms\tobs_p50_ms\tp99_ms\tsim_p99_ms"
                    "\tobs_p99_ms\ttput_rps\tsim_tput_rps\tautocorr\tnoise_mean\tnoise_p99\n");
    }
    for (int i = 0; i < o->nloads; i++) {
        const struct cal_validate_row *r = &rows[i];
        printf("%5.2f %8.1f | %6.3f %6.3f | %9.3f %9.3f %+6.1f%% %+6.1f%% | %9.3f %9.3f %+6.1f%% "
               "| %9.3f %9.3f %+6.1f%% %+6.1f%% | %8.1f %8.1f %+6.1f%% %5.2f %4.1f/%4.1f%%\n",
               r->load, r->rate_rps, r->real.util, r->sim.util, r->real.mean_ms, r->sim.mean_ms,
               100 * rel(r->sim.mean_ms, r->real.mean_ms),
               100 * rel(r->obs.mean_ms, r->real.mean_ms), r->real.p50_ms, r->sim.p50_ms,
               100 * rel(r->sim.p50_ms, r->real.p50_ms), r->real.p99_ms, r->sim.p99_ms,
               100 * rel(r->sim.p99_ms, r->real.p99_ms), 100 * rel(r->obs.p99_ms, r->real.p99_ms),
               r->real.tput_rps, r->sim.tput_rps, 100 * rel(r->sim.tput_rps, r->real.tput_rps),
               r->autocorr, 100 * r->noise_mean, 100 * r->noise_p99);
        if (tsv)
            fprintf(tsv, "%s\t%d\t%.2f\t%.3f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f"
                    "\t%.4f\t%.4f\t%.4f\t%.3f\t%.3f\t%.3f\t%.4f\t%.4f\n", net->name, o->threads[0], r->load,
                    r->rate_rps, r->real.util, r->sim.util, r->real.mean_ms, r->sim.mean_ms,
                    r->obs.mean_ms, r->real.p50_ms, r->sim.p50_ms, r->obs.p50_ms, r->real.p99_ms,
                    r->sim.p99_ms, r->obs.p99_ms, r->real.tput_rps, r->sim.tput_rps, r->autocorr,
                    r->noise_mean, r->noise_p99);
    }
    if (tsv && (ferror(tsv) | fclose(tsv)) != 0)
        return sim_err_set(SIM_EIO, "%s: cannot write: %s", o->tsv, strerror(errno));
    printf("err: the calibrated profile against the real server; obs: the simulator with the "
           "service times this load's real passes showed (what is left is the simulator's own "
           "error, the rest the profile's); ac: lag-1 autocorrelation of the real passes' times "
           "(over l(b)): runs of slow passes, which independent draws do not make; noise: the "
           "simulator's own spread (relative sd of its mean and p99 over %d other arrival "
           "sequences of this length), below which no single comparison can go\n",
           CAL_VALIDATE_NOISE_RUNS);
    printf("service time per batch size (real mean over all loads / profile l(b)):\n");
    for (int b = 1; b <= o->max_batch; b++) {
        double sum = 0;
        long cnt = 0;
        for (int i = 0; i < o->nloads; i++)
            sum += rows[i].real_exec_ms[b] * (double)rows[i].real_n[b], cnt += rows[i].real_n[b];
        if (cnt)
            printf("  b=%-3d %5ld passes  real %9.3f ms  profile %9.3f ms  %+6.1f%%\n", b, cnt,
                   sum / (double)cnt, rows[0].profile_ms[b],
                   100 * rel(rows[0].profile_ms[b], sum / (double)cnt));
    }
    return rc;
}

static int cmd_validate(const struct opts *o)
{
    const struct cal_backend_ops *be;
    int rc;
    if (o->nnets != 1 || !o->zoo)
        return sim_err_set(SIM_EUSAGE, "validate: expected one network and --zoo FILE");
    if ((rc = cli_find_backend(o, &be)))
        return rc;
    struct cal_net *net = NULL;
    char scratch[] = "/tmp/servesim-validate-XXXXXX";
    if (!mkdtemp(scratch))
        return sim_err_set(SIM_EIO, "cannot create a scratch folder in /tmp");
    struct cal_validate_row rows[CAL_VALIDATE_MAX_LOADS];
    if ((rc = cli_load_net(o->nets[0], o, &net)))
        goto out;
    if (o->fold)
        cal_net_fold_bn(net);
    /* the simulator's config lives in the scratch folder: the zoo's path is made absolute
     * here, so a relative --zoo means the current folder's file, as a user expects */
    char zoo[PATH_MAX + 2], cwd[PATH_MAX];
    if (access(o->zoo, R_OK) != 0) {
        rc = sim_err_set(SIM_EINVAL, "--zoo %s: cannot open: %s", o->zoo, strerror(errno));
        goto out;
    }
    if (o->zoo[0] == '/')
        snprintf(zoo, sizeof zoo, "%s", o->zoo);
    else if (getcwd(cwd, sizeof cwd))
        snprintf(zoo, sizeof zoo, "%s/%s", cwd, o->zoo);
    else {
        rc = sim_err_set(SIM_EIO, "--zoo %s: cannot tell the current folder: %s", o->zoo,
                         strerror(errno));
        goto out;
    }
    struct cal_validate_opts vo = {.be = be, .net = net, .zoo = zoo, .model = o->model,
                                   .kind = o->kind, .max_batch = o->max_batch, .nloads = o->nloads,
                                   .requests = o->requests, .seed = o->seed, .scratch = scratch,
                                   .bo = cli_backend_opts(o, o->threads[0])};
    memcpy(vo.loads, o->loads, sizeof vo.loads);
    if ((rc = cal_validate(&vo, rows)))
        goto out;
    rc = validate_report(o, net, be->name, rows);
out:
    {
        char f[sizeof scratch + 16];
        snprintf(f, sizeof f, "%s/arrivals.csv", scratch);
        remove(f);
        rmdir(scratch);
    }
    cal_net_destroy(net);
    return rc;
}

static int cmd_backends(const struct opts *o)
{
    (void)o;
    printf("%s\n", cal_backend_names());
    return 0;
}

/* The commands, one row each (issue 53): --help's list and the dispatch come from here. */
static const struct command {
    const char *name, *head, *brief;    /* the list's line: "check NET [--batch N]", its text */
    int (*run)(const struct opts *o);
} COMMANDS[] = {
    {"nets", "nets [NET...]",
     "networks (all shipped: calibrate/networks): layers, parameters and\n"
     "GMACs against the published figures (- where none is),\n"
     "and the graph's parallelism (pi: work over the critical path; width);\n"
     "then the decoders: their shapes and parameters against the published", cmd_nets},
    {"backends", "backends", "the backends built into this binary", cmd_backends},
    {"check", "check NET [--batch N]", "every layer of a backend against the reference implementation;\n"
     "a decoder: its logits through mixed iterations over a paged KV\n"
     "cache against the reference, every step", cmd_check},
    {"measure", "measure NET...", "time forward passes per batch size, fit, write profiles",
     cmd_measure},
    {"validate", "validate NET --zoo FILE", "a real FIFO batching server against the simulator, per load",
     cmd_validate},
    {"llm-measure", "llm-measure DECODER",
     "a decoder's operators timed (dense GEMMs and kernels against\n"
     "tokens, prefill and decode attention, LM head, host), the\n"
     "iteration-time profile the simulator reads (--out FILE), and\n"
     "whole mixed iterations against it", cmd_llm_measure},
    {"llm-validate", "llm-validate DECODER",
     "a real continuous-batching server (vLLM v1's scheduler) running\n"
     "the decoder against servesim's vllm policy with the profile\n"
     "(--profile FILE): TTFT and TPOT per load", cmd_llm_validate},
    {"concurrency", "concurrency NET",
     "k inferences at once, each with p inter-op workers of t intra-op\n"
     "threads (oneDNN; cuDNN: k streams, p = t = 1): latency and cores\n"
     "busy per (k, p, t), the interference table\n"
     "(cluster.interference_table) the simulator reads, and the\n"
     "parametric model fitted to the points (oneDNN)", cmd_concurrency},
    {"host", "host NET...",
     "cudnn: the device's idle time between back-to-back served\n"
     "batches per batch size (median, p99): the host's share of a\n"
     "batch, the evidence for cluster.host_us_per_batch (--out FILE)", cmd_host},
};

static void usage(FILE *f)
{
    fputs("usage: servesim-calibrate COMMAND [options]\n\ncommands:\n", f);
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++) {
        fprintf(f, "  %-24s ", COMMANDS[i].head);
        for (const char *b = COMMANDS[i].brief; *b; b++) {
            fputc(*b, f);
            if (*b == '\n')
                fprintf(f, "%27s", "");
        }
        fputc('\n', f);
    }
    fprintf(f, "\n%s", options_text);
}

int main(int argc, char **argv)
{
    sim_out_guard_stdout("servesim-calibrate");
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        }
    struct opts o;
    int rc = parse_args(argc, argv, &o);
    if (!rc)                            /* a network that does not load: before any device */
        rc = check_nets(&o);
    if (!rc)                            /* an output that cannot be written: say so first */
        rc = check_outputs(&o);
    if (rc)
        return exit_code(rc);
    const char *cmd = argv[1];
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (!strcmp(cmd, COMMANDS[i].name))
            return exit_code(COMMANDS[i].run(&o));
    return exit_code(sim_err_set(SIM_EUSAGE, "unknown command \"%s\" (see --help)", cmd));
}
