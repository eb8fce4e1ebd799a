/* cal_dec_serve — the decoder's real continuous-batching server against the simulator's
 * `vllm` policy with the measured profile (cal_dec_serve.h says how each side runs). */
#include "cal_dec_serve.h"

#include <errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cal_dec_cal.h"
#include "sim_config.h"
#include "sim_err.h"
#include "sim_goodput.h"
#include "sim_out.h"
#include "sim_result.h"
#include "sim_time.h"
#include "sim_wall.h"

#define BS 16
#define NOISE_RUNS 10

struct req {
    double arrival;                  /* s from the run's start */
    int prompt, output, generated, computed, sched, nblk;
    int32_t *tok, *blk;
    double t_first, t_last;
};

struct server {
    const struct cal_llm_validate_opts *o;
    struct cal_dec_rt *rt;
    int32_t *freeb;                  /* free block ids (a stack) */
    long nfree;
    struct req **run, **wait, **it;
    int nrun, nwait, itn;
    long preemptions;
};

static void sleep_until(double t0, double t)
{
    double d = t - (sim_wall_seconds() - t0);
    if (d <= 0)
        return;
    struct timespec ts = {(time_t)d, (long)((d - floor(d)) * 1e9)};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

/* Blocks for q to hold `tokens`: 1 done, 0 not enough free. */
static int alloc_to(struct server *s, struct req *q, int tokens)
{
    int need = (tokens + BS - 1) / BS - q->nblk;
    if (need <= 0)
        return 1;
    if (need > s->nfree)
        return 0;
    for (int i = 0; i < need; i++)
        q->blk[q->nblk++] = s->freeb[--s->nfree];
    return 1;
}

static void free_all(struct server *s, struct req *q)
{
    while (q->nblk > 0)
        s->freeb[s->nfree++] = q->blk[--q->nblk];
}

/* vLLM v1's schedule for one iteration, as sim/sim_llm.c's form(). */
static void form(struct server *s)
{
    const struct cal_llm_validate_opts *o = s->o;
    int budget = o->max_tokens;
    bool preempted = false;
    s->itn = 0;
    for (int i = 0; i < s->nrun && budget > 0;) {
        struct req *q = s->run[i];
        int want = q->prompt + q->generated - q->computed;
        want = want > budget ? budget : want;
        if (want <= 0) {
            i++;
            continue;
        }
        bool fits = true;
        while (!alloc_to(s, q, q->computed + want)) {    /* preempt from the tail */
            struct req *v = s->run[--s->nrun];
            free_all(s, v);
            v->computed = 0;
            s->preemptions++;
            preempted = true;
            memmove(s->wait + 1, s->wait, (size_t)s->nwait * sizeof *s->wait);
            s->wait[0] = v, s->nwait++;
            if (v == q) {
                fits = false;
                break;
            }
        }
        if (!fits)
            break;
        q->sched = want;
        s->it[s->itn++] = q;
        budget -= want;
        i++;
    }
    if (preempted)
        return;
    while (s->nwait > 0 && budget > 0 && s->nrun < o->max_num_seqs) {
        struct req *q = s->wait[0];
        int want = q->prompt + q->generated - q->computed;
        want = want > budget ? budget : want;
        if (!alloc_to(s, q, q->computed + want))
            break;
        memmove(s->wait, s->wait + 1, (size_t)(--s->nwait) * sizeof *s->wait);
        s->run[s->nrun++] = q;
        q->sched = want;
        s->it[s->itn++] = q;
        budget -= want;
    }
}

/* The iterations the real server ran: their shapes and times, predicted after the run (the
 * prediction parses the profile: not inside the timed loop). */
struct real_out {
    double *it_ratio;                /* per iteration: real / predicted */
    double *it_ns;                   /* per iteration: its wall time */
    int *it_n;                       /* per iteration: its sequences, in `shapes` in order */
    struct cal_dec_seq *shapes;
    long nit, cap, nshapes, capshapes;
    double real_sum, pred_sum;
};

static int log_iteration(struct real_out *ro, const struct cal_dec_seq *s, int n, double ns)
{
    if (ro->nit == ro->cap) {
        long cap = ro->cap ? 2 * ro->cap : 1024;
        double *a = realloc(ro->it_ns, (size_t)cap * sizeof *a);
        if (!a)
            return SIM_ENOMEM;
        ro->it_ns = a;
        int *b = realloc(ro->it_n, (size_t)cap * sizeof *b);
        if (!b)
            return SIM_ENOMEM;
        ro->it_n = b;
        ro->cap = cap;
    }
    if (ro->nshapes + n > ro->capshapes) {
        long cap = ro->capshapes ? 2 * ro->capshapes : 8192;
        while (cap < ro->nshapes + n)
            cap *= 2;
        struct cal_dec_seq *c = realloc(ro->shapes, (size_t)cap * sizeof *c);
        if (!c)
            return SIM_ENOMEM;
        ro->shapes = c, ro->capshapes = cap;
    }
    for (int i = 0; i < n; i++)
        ro->shapes[ro->nshapes++] = (struct cal_dec_seq){s[i].q, s[i].c, NULL, NULL};
    ro->it_ns[ro->nit] = ns;
    ro->it_n[ro->nit++] = n;
    return 0;
}

static void real_out_free(struct real_out *ro)
{
    free(ro->it_ratio), free(ro->it_ns), free(ro->it_n), free(ro->shapes);
}

/* Each logged iteration against the profile's prediction (and, with o->iterations_out, each
 * one a row: load, its sequences, tokens, decodes, the decodes' context, the prefill chunks'
 * tokens, its time and the profile's in us). */
static int predict_logged(const struct cal_llm_validate_opts *o, double load, struct real_out *ro)
{
    FILE *f = NULL;
    if (o->iterations_out && !(f = fopen(o->iterations_out, "a")))
        return sim_err_set(SIM_EIO, "%s: cannot append: %s", o->iterations_out, strerror(errno));
    ro->it_ratio = malloc((size_t)(ro->nit > 0 ? ro->nit : 1) * sizeof *ro->it_ratio);
    if (!ro->it_ratio) {
        if (f)
            fclose(f);
        return SIM_ENOMEM;
    }
    ro->real_sum = ro->pred_sum = 0;
    long at = 0;
    for (long i = 0; i < ro->nit; i++) {
        double pred = 0;
        int rc = cal_dec_predict(o->d, o->profile, o->kind, ro->shapes + at, ro->it_n[i], &pred);
        if (rc) {
            if (f)
                fclose(f);
            return rc;
        }
        if (f) {
            long T = 0, dec = 0, ctx = 0, pre = 0;
            for (int k = 0; k < ro->it_n[i]; k++) {
                const struct cal_dec_seq *q = &ro->shapes[at + k];
                T += q->q;
                if (q->q == 1 && q->c > 0)
                    dec++, ctx += q->c;
                else
                    pre += q->q;
            }
            fprintf(f, "%.2f\t%d\t%ld\t%ld\t%ld\t%ld\t%.1f\t%.1f\n", load, ro->it_n[i], T, dec,
                    ctx, pre, ro->it_ns[i] / 1e3, pred / 1e3);
        }
        at += ro->it_n[i];
        ro->it_ratio[i] = pred > 0 ? ro->it_ns[i] / pred : 1;
        ro->real_sum += ro->it_ns[i], ro->pred_sum += pred;
    }
    if (f && fclose(f) != 0)
        return sim_err_set(SIM_EIO, "%s: cannot write", o->iterations_out);
    return 0;
}

/* Serves rq[0..n) (arrivals in order) for real. */
static int serve_real(struct server *s, struct req *rq, int n, struct real_out *ro,
                      struct cal_llm_side *side)
{
    const struct cal_llm_validate_opts *o = s->o;
    int done = 0, next = 0, rc = 0;
    struct cal_dec_seq *seqs = calloc((size_t)o->max_num_seqs, sizeof *seqs);
    int32_t *tok = calloc((size_t)o->max_num_seqs, sizeof *tok);
    if (!seqs || !tok) {
        free(seqs), free(tok);
        return SIM_ENOMEM;
    }
    s->nrun = s->nwait = 0;
    s->preemptions = 0;
    long iterations = 0;
    bool virt = o->virtual_clock;
    int64_t vnow = 0;                                /* the virtual clock, ns */
    double t0 = sim_wall_seconds(), t_end = 0;
    while (done < n && !rc) {
        double now = sim_wall_seconds() - t0;
        while (next < n && (virt ? sim_ns(rq[next].arrival * 1e9) <= vnow : rq[next].arrival <= now))
            s->wait[s->nwait++] = &rq[next++];
        if (s->nrun == 0 && s->nwait == 0) {
            if (virt)
                vnow = sim_ns(rq[next].arrival * 1e9);
            else
                sleep_until(t0, rq[next].arrival);
            continue;
        }
        double t_it = sim_wall_seconds();
        form(s);
        if (s->itn == 0) {
            rc = sim_err_set(SIM_EINVAL, "validate: a request of %d + %d tokens cannot get its "
                             "KV blocks from a pool of %ld", s->wait[0]->prompt,
                             s->wait[0]->output, o->kv_blocks);
            break;
        }
        for (int i = 0; i < s->itn; i++) {
            struct req *q = s->it[i];
            seqs[i] = (struct cal_dec_seq){q->sched, q->computed, q->tok + q->computed, q->blk};
            q->computed += q->sched;
        }
        if ((rc = cal_dec_rt_step(s->rt, seqs, s->itn, NULL, tok)))
            break;
        double it_ns = (sim_wall_seconds() - t_it) * 1e9;   /* before any prediction below */
        if (virt) {                                  /* as long as the profile says */
            double pred = 0;
            if ((rc = cal_dec_predict(o->d, o->profile, o->kind, seqs, s->itn, &pred)))
                break;
            int64_t dn = sim_ns(pred);
            vnow += dn < 1 ? 1 : dn;
            t_end = (double)vnow / 1e9;
        } else {
            t_end = sim_wall_seconds() - t0;
        }
        iterations++;
        if ((rc = log_iteration(ro, seqs, s->itn, it_ns)))
            break;
        for (int i = 0; i < s->itn; i++) {
            struct req *q = s->it[i];
            q->sched = 0;
            if (q->computed < q->prompt + q->generated)
                continue;                            /* a prefill chunk that is not the last */
            q->tok[q->prompt + q->generated] = tok[i];
            q->generated++;
            if (q->generated == 1)
                q->t_first = t_end;
            q->t_last = t_end;
            if (q->generated >= q->output) {
                for (int k = 0; k < s->nrun; k++)
                    if (s->run[k] == q) {
                        memmove(&s->run[k], &s->run[k + 1], (size_t)(s->nrun - k - 1) * sizeof *s->run);
                        s->nrun--;
                        break;
                    }
                free_all(s, q);
                done++;
            }
        }
    }
    free(seqs), free(tok);
    if (rc)
        return rc;
    double *tt = malloc((size_t)n * sizeof *tt), *tp = malloc((size_t)n * sizeof *tp);
    if (!tt || !tp) {
        free(tt), free(tp);
        return SIM_ENOMEM;
    }
    int ntp = 0;
    double st = 0, sp = 0, toks = 0;
    for (int i = 0; i < n; i++) {
        tt[i] = (rq[i].t_first - rq[i].arrival) * 1e3;
        st += tt[i];
        toks += rq[i].output;
        if (rq[i].output > 1) {
            tp[ntp] = (rq[i].t_last - rq[i].t_first) * 1e3 / (rq[i].output - 1);
            sp += tp[ntp++];
        }
    }
    side->ttft_mean_ms = st / n;
    side->tpot_mean_ms = ntp ? sp / ntp : 0;
    side->ttft_p99_ms = cal_dec_quantile(tt, n, 0.99);
    side->tpot_p99_ms = cal_dec_quantile(tp, ntp, 0.99);
    side->tok_per_s = toks / (t_end - rq[0].arrival);
    side->iterations = iterations;
    side->preemptions = s->preemptions;
    free(tt), free(tp);
    return 0;
}

/* The simulator on the same requests: a Mooncake-format trace of them, the profile (times
 * `scale`) in a file beside it, the iterations jittered by `cv` (cluster.exec_cv). */
static int serve_sim(const struct cal_llm_validate_opts *o, const struct req *rq, int n,
                     double scale, double cv, struct cal_llm_side *side)
{
    char trace[1024], prof[1024], text[4096];
    snprintf(trace, sizeof trace, "%s/requests.jsonl", o->scratch);
    snprintf(prof, sizeof prof, "%s/profile.json", o->scratch);
    FILE *f = fopen(trace, "w");
    if (!f)
        return sim_err_set(SIM_EIO, "%s: cannot write: %s", trace, strerror(errno));
    for (int i = 0; i < n; i++)
        fprintf(f, "{\"timestamp\": %.6f, \"input_length\": %d, \"output_length\": %d}\n",
                rq[i].arrival * 1e3, rq[i].prompt, rq[i].output);
    if (fclose(f) != 0)
        return sim_err_set(SIM_EIO, "%s: cannot write", trace);
    cJSON *p = cJSON_Duplicate(o->profile, true);
    if (!p)
        return SIM_ENOMEM;
    /* every time in the profile times `scale` */
    const char *tables[] = {"dense", "prefill_attention", "decode_attention", "decode_one", NULL};
    cJSON *pl = cJSON_GetObjectItemCaseSensitive(p, "per_layer");
    cJSON *us[8];
    int nu = 0;
    for (int i = 0; tables[i]; i++) {
        cJSON *t = cJSON_GetObjectItemCaseSensitive(pl, tables[i]);
        if (t)
            us[nu++] = cJSON_GetObjectItemCaseSensitive(t, "us");
    }
    us[nu++] = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "lm_head"), "us");
    us[nu++] = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "host"), "us");
    for (int i = 0; i < nu; i++) {
        cJSON *e, *e2;
        cJSON_ArrayForEach(e, us[i]) {
            if (cJSON_IsArray(e)) {
                cJSON_ArrayForEach(e2, e) cJSON_SetNumberValue(e2, e2->valuedouble * scale);
            } else {
                cJSON_SetNumberValue(e, e->valuedouble * scale);
            }
        }
    }
    char *ptext = cJSON_Print(p);
    cJSON_Delete(p);
    int rc = ptext ? sim_out_write(prof, ptext) : SIM_ENOMEM;
    free(ptext);
    if (rc)
        return rc;
    snprintf(text, sizeof text,
             "{\"name\": \"validate-llm\", \"seed\": 1, \"duration_s\": %.6f, \"warmup_s\": 0,"
             " \"cluster\": {\"gpus\": 1, \"gpu_kind\": \"%s\", \"exec_cv\": %.6f},"
             " \"models\": [{\"name\": \"%s\", \"llm\": {\"model\": \"%s\", \"gpu\": \"%s\","
             " \"profile\": {\"file\": \"%s\"}, \"kv_blocks\": %ld, \"block_size\": %d,"
             " \"kv_dtype_bytes\": %d}}],"
             " \"workload\": {\"trace\": {\"format\": \"mooncake\", \"files\": [\"%s\"],"
             " \"dir\": \"/\", \"gaps\": \"zero\", \"zero_run_s\": 0}},"
             " \"network\": {\"ctrl_us\": 0, \"data_us_per_request\": 0, \"resp_us\": 0},"
             " \"policy\": {\"name\": \"vllm\", \"params\": {\"max_num_batched_tokens\": %d,"
             " \"max_num_seqs\": %d, \"enable_chunked_prefill\": true,"
             " \"enable_prefix_caching\": false}},"
             " \"metrics\": {\"percentile\": 99, \"sample_period_s\": 0}}",
             rq[n - 1].arrival + 3600, o->kind, cv, o->d->name, o->d->arch, o->kind, prof,
             o->kv_blocks, BS, o->gpu ? 2 : 4, trace + 1, o->max_tokens, o->max_num_seqs);
    struct sim_config *cfg = NULL;
    struct sim_result *res = NULL;
    rc = sim_config_from_text(text, "validate", o->scratch, &cfg);
    if (!rc)
        rc = sim_run_once(cfg, 1.0, NULL, &res);
    if (!rc) {
        const struct sim_llm_result *l = res->nmodels > 0 ? res->models[0].llm : NULL;
        if (!l || res->models[0].offered != (uint64_t)n || res->models[0].on_time != (uint64_t)n)
            rc = sim_err_set(SIM_EINTERNAL, "validate: the simulator served %llu of %d requests",
                             l ? (unsigned long long)res->models[0].on_time : 0ULL, n);
        else
            *side = (struct cal_llm_side){l->ttft_mean_ms, l->ttft_p99_ms, l->tpot_mean_ms,
                                          l->tpot_p99_ms, l->tokens_per_s, (long)l->iterations,
                                          (long)l->preemptions};
    }
    sim_result_destroy(res);
    sim_config_destroy(cfg);
    return rc;
}

static void draw(const struct cal_llm_validate_opts *o, gsl_rng *r, double rate, struct req *rq,
                 int n, bool lengths)
{
    double t = 0;
    if (o->tr_n > 0 && lengths) {               /* the trace's requests at this mean rate */
        double span = o->tr_t[n - 1] - o->tr_t[0];
        double scale = n > 1 && span > 0 ? (double)(n - 1) / span / rate : 0;
        for (int i = 0; i < n; i++) {
            /* (the first arrives after one mean gap, as a Poisson sequence's first does) */
            rq[i].arrival = 1 / rate + (o->tr_t[i] - o->tr_t[0]) * scale;
            rq[i].prompt = o->tr_prompt[i];
            rq[i].output = o->tr_output[i];
        }
        return;
    }
    for (int i = 0; i < n; i++) {
        t += gsl_ran_exponential(r, 1 / rate);
        rq[i].arrival = t;
        if (lengths) {
            rq[i].prompt = o->prompt_lo + (int)gsl_rng_uniform_int(r, (unsigned long)(o->prompt_hi - o->prompt_lo + 1));
            rq[i].output = o->out_lo + (int)gsl_rng_uniform_int(r, (unsigned long)(o->out_hi - o->out_lo + 1));
        }
    }
}

int cal_llm_capacity(const struct cal_llm_validate_opts *o, double *rps)
{
    double pm = (o->prompt_lo + o->prompt_hi) / 2.0, om = (o->out_lo + o->out_hi) / 2.0;
    if (o->tr_n > 0) {                          /* the trace's requests that will be served */
        int n = o->requests < o->tr_n ? o->requests : o->tr_n;
        pm = om = 0;
        for (int i = 0; i < n; i++)
            pm += o->tr_prompt[i] / (double)n, om += o->tr_output[i] / (double)n;
    }
    int B = o->max_num_seqs;
    long fit = (long)floor((double)o->kv_blocks * BS / (pm + om));
    B = fit < B ? (int)(fit > 1 ? fit : 1) : B;
    int ctx = (int)(pm + om / 2);
    struct cal_dec_seq *s = calloc((size_t)B, sizeof *s);
    if (!s)
        return SIM_ENOMEM;
    for (int i = 0; i < B; i++)
        s[i] = (struct cal_dec_seq){1, ctx, NULL, NULL};
    double t_dec = 0, t_pre = 0;
    int rc = cal_dec_predict(o->d, o->profile, o->kind, s, B, &t_dec);
    struct cal_dec_seq p = {(int)pm, 0, NULL, NULL};
    if (!rc)
        rc = cal_dec_predict(o->d, o->profile, o->kind, &p, 1, &t_pre);
    free(s);
    if (!rc)
        *rps = 1e9 / (t_pre + om * t_dec / B);
    return rc;
}

int cal_llm_validate(const struct cal_llm_validate_opts *o, struct cal_llm_validate_row *rows)
{
    const struct cal_dec *d = o->d;
    int n = o->tr_n > 0 && o->tr_n < o->requests ? o->tr_n : o->requests, rc = 0;
    if (o->prompt_hi + o->out_hi > d->max_pos)
        return sim_err_set(SIM_EINVAL, "validate: prompts up to %d and outputs up to %d pass %s's "
                           "%d positions", o->prompt_hi, o->out_hi, d->name, d->max_pos);
    long most = (o->prompt_hi + o->out_hi - 1 + BS - 1) / BS;   /* the longest request's blocks */
    if (most > o->kv_blocks)
        return sim_err_set(SIM_EINVAL, "validate: a request of %d + %d tokens needs %ld KV blocks "
                           "of %d, the pool has %ld (--kv-blocks)", o->prompt_hi, o->out_hi, most,
                           BS, o->kv_blocks);
    double cap = 0;
    if ((rc = cal_llm_capacity(o, &cap)))
        return rc;
    struct server s = {.o = o};
    struct cal_dec_rt_opts ro = {.threads = o->threads, .block_size = BS, .kv_blocks = o->kv_blocks,
                                 .max_tokens = o->max_tokens, .max_seqs = o->max_num_seqs,
                                 .gpu = o->gpu, .eager = o->eager, .device = o->gpu_dev,
                                 .seed = o->seed};
    struct req *rq = calloc((size_t)n, sizeof *rq);
    s.freeb = malloc((size_t)o->kv_blocks * sizeof *s.freeb);
    s.run = calloc((size_t)n, sizeof *s.run);
    s.wait = calloc((size_t)n + 1, sizeof *s.wait);
    s.it = calloc((size_t)n, sizeof *s.it);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rq || !s.freeb || !s.run || !s.wait || !s.it || !r)
        rc = SIM_ENOMEM;
    for (int i = 0; i < n && !rc; i++) {
        rq[i].tok = calloc((size_t)(o->prompt_hi + o->out_hi), sizeof *rq[i].tok);
        rq[i].blk = calloc((size_t)((o->prompt_hi + o->out_hi) / BS + 2), sizeof *rq[i].blk);
        if (!rq[i].tok || !rq[i].blk)
            rc = SIM_ENOMEM;
    }
    if (!rc)
        rc = cal_dec_rt_create(d, &ro, &s.rt);
    for (int L = 0; L < o->nloads && !rc; L++) {
        struct cal_llm_validate_row *row = &rows[L];
        memset(row, 0, sizeof *row);
        row->load = o->loads[L];
        row->rate_rps = o->loads[L] * cap;
        gsl_rng_set(r, (unsigned long)(o->seed * 1000003u + (uint64_t)L));
        draw(o, r, row->rate_rps, rq, n, true);
        for (int i = 0; i < n; i++) {
            int32_t *t = cal_dec_tokens(d, rq[i].prompt, o->seed * 7919u + (uint64_t)i);
            if (!t) {
                rc = SIM_ENOMEM;
                break;
            }
            memcpy(rq[i].tok, t, (size_t)rq[i].prompt * sizeof *t);
            free(t);
            rq[i].generated = rq[i].computed = rq[i].sched = rq[i].nblk = 0;
        }
        s.nfree = o->kv_blocks;
        for (long b = 0; b < o->kv_blocks; b++)
            s.freeb[b] = (int32_t)(o->kv_blocks - 1 - b);
        struct real_out ro2 = {0};
        if (!rc)
            rc = serve_real(&s, rq, n, &ro2, &row->real);
        if (!rc)
            rc = predict_logged(o, row->load, &ro2);
        if (!rc) {
            row->ratio = ro2.real_sum / ro2.pred_sum;
            /* the spread of real / profile */
            double m = gsl_stats_mean(ro2.it_ratio, 1, (size_t)ro2.nit);
            row->it_cv = ro2.nit > 1 && m > 0 ? gsl_stats_sd_m(ro2.it_ratio, 1, (size_t)ro2.nit, m) / m : 0;
            for (long i = 0; i < ro2.nit; i++)
                ro2.it_ratio[i] = fabs(ro2.it_ratio[i] - 1);
            row->it_err_p50 = cal_dec_quantile(ro2.it_ratio, (int)ro2.nit, 0.5);
            row->it_err_p90 = cal_dec_quantile(ro2.it_ratio, (int)ro2.nit, 0.9);
        }
        real_out_free(&ro2);
        if (!rc)
            rc = serve_sim(o, rq, n, 1.0, 0, &row->sim);
        if (!rc)
            rc = serve_sim(o, rq, n, row->ratio, row->it_cv, &row->obs);
        /* the noise floor: other arrival sequences of the same requests */
        double m1[NOISE_RUNS], m2[NOISE_RUNS];
        struct req *alt = rc ? NULL : malloc((size_t)n * sizeof *alt);
        if (!rc && !alt)
            rc = SIM_ENOMEM;
        for (int k = 0; k < NOISE_RUNS && !rc; k++) {
            memcpy(alt, rq, (size_t)n * sizeof *alt);
            gsl_rng_set(r, (unsigned long)(o->seed * 1000003u + 7919u * (uint64_t)(k + 1) + (uint64_t)L));
            draw(o, r, row->rate_rps, alt, n, false);
            struct cal_llm_side sd;
            if (!(rc = serve_sim(o, alt, n, 1.0, 0, &sd)))
                m1[k] = sd.ttft_mean_ms, m2[k] = sd.tpot_mean_ms;
        }
        free(alt);
        if (!rc) {
            double a1 = 0, a2 = 0, v1 = 0, v2 = 0;
            for (int k = 0; k < NOISE_RUNS; k++)
                a1 += m1[k] / NOISE_RUNS, a2 += m2[k] / NOISE_RUNS;
            for (int k = 0; k < NOISE_RUNS; k++)
                v1 += (m1[k] - a1) * (m1[k] - a1), v2 += (m2[k] - a2) * (m2[k] - a2);
            row->noise_ttft = sqrt(v1 / (NOISE_RUNS - 1)) / a1;
            row->noise_tpot = sqrt(v2 / (NOISE_RUNS - 1)) / a2;
        }
    }
    char f[1100];                                /* the files it wrote, not the folder */
    snprintf(f, sizeof f, "%s/requests.jsonl", o->scratch);
    unlink(f);
    snprintf(f, sizeof f, "%s/profile.json", o->scratch);
    unlink(f);
    for (int i = 0; rq && i < n; i++)
        free(rq[i].tok), free(rq[i].blk);
    free(rq), free(s.freeb), free(s.run), free(s.wait), free(s.it);
    gsl_rng_free(r);
    cal_dec_rt_destroy(s.rt);
    return rc;
}
