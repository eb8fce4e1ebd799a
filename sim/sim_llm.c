/* sim_llm — LLM replicas: waiting and running requests, the KV block pool, vLLM v1's batch
 * formation, iterations as events, tokens and their times (the semantics are in sim_llm.h).
 * Calls down to sim_base.c and sim_request.c. */
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_grow.h"
#include "sim_int.h"
#include "sim_llm_kv.h"

/* A request on a replica. `computed` is vLLM's num_computed_tokens: tokens whose KV is in the
 * cache (reset by a preemption); the request's tokens are its prompt and its output so far. */
struct llm_rq {
    struct sim_request *r;
    int32_t prompt, output, generated, computed;
    int32_t sched;               /* tokens scheduled in the iteration in flight (0: not in it) */
    bool started;                /* scheduled once: its queueing is over */
    struct llm_kv_blocks kb;     /* KV blocks held */
    int64_t t_first, t_last;     /* first and last token, as the client sees them */
};
_Static_assert(sizeof(struct llm_rq) <= SIM_LLM_RQ_SIZE, "SIM_LLM_RQ_SIZE holds an llm_rq");

struct sim_llm_rep {
    struct sim_llm_state pub;
    const struct sim_llm_cfg *cfg;
    struct sim_llm_sched sc;
    struct llm_kv kv;            /* its block pool (pub.blocks_* mirror it) */
    struct llm_rq **wait;        /* ring: the waiting queue (preempted ones return to its head) */
    int wcap, whead;
    struct llm_rq **run;         /* running, in admission order */
    int rcap;
    struct llm_rq **it;          /* the iteration in flight, and its sequences' shapes */
    struct sim_llm_seq *seqs;
    int itn, itcap;
    struct llm_rq **done;        /* [itcap]: those an iteration finished, ended after it */
    int64_t it_start;            /* the iteration in flight's start */
    uint64_t serial;
    int *ranks, nranks;          /* its GPU executors, the replica's own first */
    int64_t link_free_at;        /* a prefill replica's link: busy with transfers until then */
    int64_t kv_since;
    double kv_area;              /* blocks used x ns, within the measured window */
    int64_t gone_at;             /* drained and down (INT64_MAX: still serving) */
};

/* The replica executor e holds a rank of (its own or another's), or NULL. */
static struct sim_llm_rep *rank_of(const struct sim *s, int e)
{
    if (!s->llm || e < 0 || e >= s->nllm)
        return NULL;
    return s->llm[e];
}

/* The replica that is executor e (its first rank), or NULL. */
static struct sim_llm_rep *rep_of(const struct sim *s, int e)
{
    struct sim_llm_rep *p = rank_of(s, e);
    return p && p->ranks[0] == e ? p : NULL;
}

const struct sim_llm_cfg *sim_model_llm(const struct sim *s, int m)
{
    const struct sim_model_cfg *mc = s->models[m].cfg;
    return mc->llm_on ? &mc->llm : NULL;
}

const struct sim_llm_stats *sim_model_llm_stats(const struct sim *s, int m)
{
    return s->ms[m].llm;
}

const struct sim_llm_state *sim_llm_state(const struct sim *s, int e)
{
    struct sim_llm_rep *p = rep_of(s, e);
    return p ? &p->pub : NULL;
}

/* The part of [a, b) inside the measured window [warm-up, duration), ns. */
static double in_window(const struct sim *s, int64_t a, int64_t b)
{
    int64_t lo = a > s->warmup ? a : s->warmup, hi = b < s->duration ? b : s->duration;
    return hi > lo ? (double)(hi - lo) : 0;
}

static void kv_mark(struct sim *s, struct sim_llm_rep *p)
{
    p->kv_area += (double)p->pub.blocks_used * in_window(s, p->kv_since, s->now);
    p->kv_since = s->now;
}

double sim_llm_kv_util(const struct sim *s, int e)
{
    struct sim_llm_rep *p = rep_of(s, e);
    double span = p ? in_window(s, 0, s->now < p->gone_at ? s->now : p->gone_at) : 0;
    if (!p || p->pub.blocks_total <= 0 || span <= 0)
        return 0;
    double area = p->kv_area + (double)p->pub.blocks_used * in_window(s, p->kv_since, s->now);
    return area / ((double)p->pub.blocks_total * span);
}

int sim_llm_replica(struct sim *s, int e, int m, const struct sim_llm_sched *sc)
{
    return sim_llm_replica_tp(s, &e, 1, m, sc);
}

/* Every rank's entry in s->llm points at its replica (rep_of: the replica's own; rank_of:
 * any rank's): taken, so that no second replica uses it. */
int sim_llm_replica_tp(struct sim *s, const int *execs, int k, int m,
                       const struct sim_llm_sched *sc)
{
    int e = k > 0 ? execs[0] : -1;
    if (m < 0 || m >= s->nmodels)
        return sim_err_set(SIM_EINVAL, "model %d out of range (%d models)", m, s->nmodels);
    const struct sim_llm_cfg *c = sim_model_llm(s, m);
    if (!c)
        return sim_err_set(SIM_EINVAL, "model %s is not an LLM model: it has no replicas",
                           s->models[m].cfg->name);
    if (e < 0 || e >= s->nexecs || s->execs[e].cpu || s->execs[e].state != SIM_EXEC_UP)
        return sim_err_set(SIM_EINVAL, "executor %d is not a GPU executor that is up", e);
    if (c->block_size < 1 || c->tp < 1)
        return sim_err_set(SIM_EINVAL, "model %s: block_size and tp must be at least 1 (got %d "
                           "and %d)", s->models[m].cfg->name, c->block_size, c->tp);
    if (k != c->tp)
        return sim_err_set(SIM_EINVAL, "model %s: a replica of tensor-parallel degree %d needs "
                           "%d GPUs, given %d", s->models[m].cfg->name, c->tp, c->tp, k);
    for (int i = 1; i < k; i++)
        if (execs[i] < 0 || execs[i] >= s->nexecs || s->execs[execs[i]].cpu ||
            s->execs[execs[i]].state != SIM_EXEC_UP)
            return sim_err_set(SIM_EINVAL, "executor %d is not a GPU executor that is up",
                               execs[i]);
    if (sc->role == SIM_LLM_PREFILL && (!s->pol->llm_decode_target || !(sc->kv_link_gbs > 0)))
        return sim_err_set(SIM_EINVAL, "a prefill replica needs a policy that names decode "
                           "replicas and a KV link of positive bandwidth");
    if (sc->max_tokens < 1 || sc->max_seqs < 1)
        return sim_err_set(SIM_EINVAL, "an LLM replica needs max_num_batched_tokens and "
                           "max_num_seqs of at least 1 (got %d and %d)", sc->max_tokens,
                           sc->max_seqs);
    int top = 0;
    for (int i = 0; i < k; i++) {
        top = execs[i] > top ? execs[i] : top;
        for (int j = 0; j < i; j++)
            if (execs[j] == execs[i])
                return sim_err_set(SIM_EINVAL, "executor %d given twice for one replica",
                                   execs[i]);
    }
    if (top >= s->nllm) {                       /* executors added since grow the table */
        struct sim_llm_rep **t = realloc(s->llm, (size_t)s->max_execs * sizeof *t);
        if (!t)
            return SIM_ENOMEM;
        memset(t + s->nllm, 0, (size_t)(s->max_execs - s->nllm) * sizeof *t);
        s->llm = t;
        s->nllm = s->max_execs;
    }
    for (int i = 0; i < k; i++)
        if (s->llm[execs[i]])
            return sim_err_set(SIM_EINVAL, "executor %d is already in a replica", execs[i]);
    struct sim_llm_mem mem;
    long blocks = sim_llm_memory(c, &mem);
    if (blocks < 1)
        return sim_err_set(SIM_EINVAL, "model %s: no KV block fits a GPU: %.2f GiB usable "
                           "(%.1f GiB x %.2f) - %.2f GiB of weights per GPU (tensor parallel "
                           "%d) - %.2f GiB reserved = %.2f GiB, a block needs %.0f bytes",
                           s->models[m].cfg->name, mem.usable_gib, c->gpu.mem_gib, c->mem_util,
                           mem.weights_gib, c->tp, c->reserve_gib, mem.kv_gib, mem.block_bytes);
    struct sim_llm_rep *p = calloc(1, sizeof *p);
    if (!p || !(p->ranks = malloc((size_t)k * sizeof *p->ranks))) {
        free(p);
        return SIM_ENOMEM;
    }
    memcpy(p->ranks, execs, (size_t)k * sizeof *p->ranks);
    p->nranks = k;
    for (int i = 1; i < k; i++)
        s->llm[execs[i]] = p;
    p->pub.model = m;
    p->pub.role = sc->role;
    p->pub.max_tokens = sc->max_tokens;
    p->pub.max_seqs = sc->max_seqs;
    p->pub.blocks_total = blocks;
    p->cfg = c;
    p->sc = *sc;
    /* a decode replica's requests bring their prompt's KV: nothing to look up */
    llm_kv_init(&p->kv, blocks, c->block_size, sc->prefix_caching && sc->role != SIM_LLM_DECODE);
    if (p->kv.prefix)
        s->ms[m].llm->prefix_on = true;
    p->kv_since = s->now;
    p->gone_at = INT64_MAX;
    s->llm[e] = p;
    return 0;
}

static void rep_free(struct sim_llm_rep *p)
{
    if (!p)
        return;
    llm_kv_free(&p->kv);
    free(p->ranks);
    free(p->wait);
    free(p->run);
    free(p->it);
    free(p->seqs);
    free(p->done);
    free(p);
}

void sim_llm_free(struct sim *s)
{
    for (int e = 0; e < s->nllm; e++)      /* the other ranks first: they point at it */
        if (s->llm[e] && !rep_of(s, e))
            s->llm[e] = NULL;
    for (int e = 0; e < s->nllm; e++)
        rep_free(s->llm[e]);
    free(s->llm);
    s->llm = NULL;
    s->nllm = 0;
    sim_pool_free(&s->llm_pool);
}

/* ---------------------------------------------------------------- the waiting ring */

static struct llm_rq *wait_at(const struct sim_llm_rep *p, int i)
{
    return p->wait[(p->whead + i) % p->wcap];
}

static int wait_room(struct sim_llm_rep *p)
{
    if (p->pub.waiting < p->wcap)
        return 0;
    int cap = p->wcap ? 2 * p->wcap : 16;
    struct llm_rq **w = malloc((size_t)cap * sizeof *w);
    if (!w)
        return SIM_ENOMEM;
    for (int i = 0; i < p->pub.waiting; i++)
        w[i] = wait_at(p, i);
    free(p->wait);
    p->wait = w;
    p->wcap = cap;
    p->whead = 0;
    return 0;
}

static int wait_push_back(struct sim_llm_rep *p, struct llm_rq *q)
{
    if (wait_room(p))
        return SIM_ENOMEM;
    p->wait[(p->whead + p->pub.waiting++) % p->wcap] = q;
    return 0;
}

static int wait_push_front(struct sim_llm_rep *p, struct llm_rq *q)
{
    if (wait_room(p))
        return SIM_ENOMEM;
    p->whead = (p->whead + p->wcap - 1) % p->wcap;
    p->wait[p->whead] = q;
    p->pub.waiting++;
    return 0;
}

static struct llm_rq *wait_pop_front(struct sim_llm_rep *p)
{
    struct llm_rq *q = p->wait[p->whead];
    p->whead = (p->whead + 1) % p->wcap;
    p->pub.waiting--;
    return q;
}

/* ---------------------------------------------------------------- blocks */

static long blocks_for(const struct sim_llm_rep *p, long tokens)
{
    return llm_kv_blocks_for(&p->kv, tokens);
}

/* A request back to the pool, with its block ids. */
static void rq_put(struct sim *s, struct llm_rq *q)
{
    llm_kv_blocks_free(&q->kb);
    sim_pool_put(&s->llm_pool, q);
}

/* The blocks for q's next `n` tokens, the first `hits` of q's blocks from the prefix cache
 * (q holding none): 1, 0 where the pool lacks them, SIM_ENOMEM. */
static int alloc_slots(struct sim *s, struct sim_llm_rep *p, struct llm_rq *q, long hits,
                       int32_t n)
{
    long tokens = (long)q->computed + hits * p->kv.bs + n;
    if (!hits && blocks_for(p, tokens) <= q->kb.n)
        return 1;
    kv_mark(s, p);
    int rc = llm_kv_alloc(&p->kv, &q->kb, q->r, q->prompt, hits, tokens);
    p->pub.blocks_used = p->kv.used;
    if (rc == 1 && hits > 0)
        q->computed += (int32_t)(hits * p->kv.bs);
    return rc;
}

static void free_blocks(struct sim *s, struct sim_llm_rep *p, struct llm_rq *q)
{
    kv_mark(s, p);
    llm_kv_release(&p->kv, &q->kb);
    p->pub.blocks_used = p->kv.used;
}

long sim_llm_prefix_match(const struct sim *s, int e, const struct sim_request *r)
{
    const struct sim_llm_rep *p = rep_of(s, e);
    if (!p)
        return 0;
    long tokens = (long)r->prompt_tokens + r->output_tokens;
    return llm_kv_match(&p->kv, NULL, r, r->prompt_tokens, tokens) * p->kv.bs;
}

int sim_llm_check(const struct sim *s, int e)
{
    const struct sim_llm_rep *p = rep_of(s, e);
    if (!p)
        return sim_err_set(SIM_EINVAL, "executor %d is no LLM replica", e);
    long held = 0;
    for (int i = 0; i < p->pub.running; i++)
        held += p->run[i]->kb.n;
    if (held != p->kv.refs)
        return sim_err_set(SIM_EINVAL, "LLM replica %d: its running requests hold %ld blocks, "
                           "the pool counts %ld references", e, held, p->kv.refs);
    return llm_kv_check(&p->kv);
}

/* ---------------------------------------------------------------- the iteration */

/* Room in the iteration's arrays for every running request (it, seqs and done share
 * itcap, which grows only once all three have). */
static int it_room(struct sim_llm_rep *p)
{
    int need = p->pub.running;
    if (need <= p->itcap)
        return 0;
    int cap = p->itcap ? p->itcap : 8;
    while (cap < need)
        cap *= 2;
    struct sim_llm_seq *q = realloc(p->seqs, (size_t)cap * sizeof *q);
    if (!q)
        return SIM_ENOMEM;
    p->seqs = q;
    struct llm_rq **d = realloc(p->done, (size_t)cap * sizeof *d);
    if (!d)
        return SIM_ENOMEM;
    p->done = d;
    struct llm_rq **t = realloc(p->it, (size_t)cap * sizeof *t);
    if (!t)
        return SIM_ENOMEM;
    p->it = t;
    p->itcap = cap;
    return 0;
}

static void schedule_seq(struct sim_llm_rep *p, struct llm_rq *q, int32_t n)
{
    q->sched = n;
    p->it[p->itn] = q;
    p->seqs[p->itn++] = (struct sim_llm_seq){n, q->computed};
}

/* vLLM v1's Scheduler.schedule for one iteration (sim_llm.h). Returns 0 or SIM_ENOMEM. */
static int form(struct sim *s, struct sim_llm_rep *p)
{
    const struct sim_llm_sched *sc = &p->sc;
    struct sim_llm_stats *ls = s->ms[p->pub.model].llm;
    int budget = sc->max_tokens;
    bool preempted = false;
    p->itn = 0;
    for (int i = 0; i < p->pub.running && budget > 0;) {
        struct llm_rq *q = p->run[i];
        int32_t want = q->prompt + q->generated - q->computed;
        if (sc->long_prefill > 0 && want > sc->long_prefill)
            want = sc->long_prefill;
        if (want > budget)
            want = budget;
        if (want <= 0) {
            i++;
            continue;
        }
        bool fits = true;
        int rc;
        while ((rc = alloc_slots(s, p, q, 0, want)) != 1) {     /* preempt from the tail */
            if (rc < 0)
                return rc;
            if (wait_room(p))                       /* before the request moves */
                return SIM_ENOMEM;
            struct llm_rq *v = p->run[--p->pub.running];
            free_blocks(s, p, v);
            v->computed = 0;
            p->pub.preemptions++;
            ls->preemptions++;
            preempted = true;
            wait_push_front(p, v);                  /* cannot fail: room made above */
            if (v == q) {
                fits = false;
                break;
            }
        }
        if (!fits)
            break;
        if (it_room(p))
            return SIM_ENOMEM;
        schedule_seq(p, q, want);
        budget -= want;
        i++;
    }
    if (preempted)
        return 0;
    int nskip = 0;               /* passed over (no chunking, too long for what is left) */
    while (p->pub.waiting > nskip && budget > 0 && p->pub.running < sc->max_seqs) {
        struct llm_rq *q = wait_at(p, nskip);
        /* with prefix caching, a request holding no KV starts from its cached blocks */
        long tokens = (long)q->prompt + q->generated;
        long hits = q->computed == 0 && q->kb.n == 0 ? llm_kv_match(&p->kv, &q->kb, q->r,
                                                                      q->prompt, tokens) : 0;
        int32_t want = (int32_t)(tokens - q->computed - hits * p->kv.bs);
        if (sc->long_prefill > 0 && want > sc->long_prefill)
            want = sc->long_prefill;
        if (!sc->chunked && want > budget) {
            nskip++;                                /* it keeps its place at the head */
            continue;
        }
        if (want > budget)
            want = budget;
        if (p->pub.running == p->rcap &&
            sim_grow(&p->run, &p->rcap, p->pub.running + 1, sizeof *p->run, 16))
            return SIM_ENOMEM;
        int rc = alloc_slots(s, p, q, hits, want);
        if (rc < 0)
            return rc;
        if (rc == 0)
            break;
        if (p->kv.prefix && q->r->counted) {
            ls->prefix_query += (uint64_t)tokens;
            ls->prefix_hit += (uint64_t)(hits * p->kv.bs);
        }
        /* out of the ring at position nskip, the skipped ones before it keep their order */
        for (int k = nskip; k > 0; k--)
            p->wait[(p->whead + k) % p->wcap] = wait_at(p, k - 1);
        wait_pop_front(p);
        p->run[p->pub.running++] = q;
        if (it_room(p))
            return SIM_ENOMEM;
        if (!q->started) {
            q->started = true;
            q->r->t_start = s->now;                 /* its queueing ends */
        }
        schedule_seq(p, q, want);
        budget -= want;
    }
    return 0;
}

static void start(struct sim *s, int e)
{
    struct sim_llm_rep *p = s->llm[e];
    if (p->pub.busy || s->stopping)
        return;
    if (form(s, p)) {
        sim_fail_nomem(s, "for an LLM replica's queues");
        return;
    }
    if (p->itn == 0) {
        /* with requests refused that could never fit (sim_llm_submit), an idle replica always
         * has something to run or nothing to do */
        if (p->pub.waiting > 0 && p->pub.running == 0)
            SIM_BUG("LLM replica %d formed an empty iteration with %d requests waiting", e,
                    p->pub.waiting);
        return;
    }
    for (int i = 0; i < p->itn; i++)
        p->it[i]->computed += p->it[i]->sched;  /* as vLLM counts them: at scheduling */
    /* the pool's invariant, every iteration: a running request holds exactly the blocks of
     * its computed tokens, a waiting one none, and the pool counts their sum */
    long held = 0;
    for (int i = 0; i < p->pub.running; i++) {
        const struct llm_rq *q = p->run[i];
        if (q->kb.n != blocks_for(p, q->computed))
            SIM_BUG("LLM replica %d: a request holds %ld blocks for %d tokens", e, q->kb.n,
                    q->computed);
        held += q->kb.n;
    }
    /* with prefix caching requests share blocks: they refer to `held`, fewer are in use */
    if (held != p->kv.refs || p->kv.used > p->kv.total || p->kv.used > held ||
        (!p->kv.prefix && held != p->kv.used) || p->pub.blocks_used != p->kv.used)
        SIM_BUG("LLM replica %d: %ld blocks used, the running requests hold %ld (pool %ld, "
                "%ld references)", e, p->kv.used, held, p->kv.total, p->kv.refs);
    /* its time by the profile, times cluster.exec_cv's jitter as a batch's (no draw at 0) */
    int64_t d = sim_exec_time(s, sim_ns(sim_llm_gpu_ns(p->cfg, p->seqs, p->itn) +
                                        sim_llm_host_ns(p->cfg, p->itn)));
    if (d < 1)
        d = 1;
    if (s->obs.llm_iteration)
        s->obs.llm_iteration(s->obs.ctx, s, e, p->seqs, p->itn);
    p->pub.busy = true;
    p->it_start = s->now;
    p->pub.iterations++;
    struct sim_llm_stats *ls = s->ms[p->pub.model].llm;
    ls->iterations++;
    for (int i = 0; i < p->itn; i++)
        ls->tokens_computed += (uint64_t)p->seqs[i].new_tokens;
    sim_push(s, s->now + d, SIM_EV_LLM, (uint32_t)e, ++p->serial);
}

/* q finished or was dropped: out of the running list (order kept), its blocks freed. */
static void unrun(struct sim *s, struct sim_llm_rep *p, struct llm_rq *q)
{
    for (int i = 0; i < p->pub.running; i++)
        if (p->run[i] == q) {
            memmove(&p->run[i], &p->run[i + 1],
                    (size_t)(p->pub.running - i - 1) * sizeof *p->run);
            p->pub.running--;
            break;
        }
    free_blocks(s, p, q);
}

static void hand_off(struct sim *s, int e, struct sim_llm_rep *p, struct llm_rq *q);
static void drained(struct sim *s, struct sim_llm_rep *p);

static void finish(struct sim *s, struct sim_llm_rep *p, struct llm_rq *q)
{
    const struct sim_llm_cfg *c = p->cfg;
    struct sim_request *r = q->r;
    struct sim_llm_stats *ls = s->ms[p->pub.model].llm;
    int64_t ttft = q->t_first - r->t_arrival;
    int64_t tpot = q->output > 1 ? (q->t_last - q->t_first) / (q->output - 1) : 0;
    bool ok = (c->ttft_slo_ms <= 0 || ttft <= sim_ms_to_ns(c->ttft_slo_ms)) &&
              (c->tpot_slo_ms <= 0 || tpot <= sim_ms_to_ns(c->tpot_slo_ms));
    if (r->counted) {
        sim_hist_add(&ls->ttft, ttft);
        if (q->output > 1)
            sim_hist_add(&ls->tpot, tpot);
    }
    int64_t t_last = q->t_last;
    rq_put(s, q);
    r->t_finish = t_last;
    sim_req_end(s, r, ok ? SIM_REQ_ON_TIME : SIM_REQ_LATE, t_last);
}

void sim_llm_event(struct sim *s, int e, uint64_t serial)
{
    struct sim_llm_rep *p = rep_of(s, e);
    if (!p || serial != p->serial || !p->pub.busy)
        return;                                     /* the run stopped since */
    for (int i = 0; i < p->nranks; i++) {           /* charged as it ends (samples see it) */
        s->execs[p->ranks[i]].busy_ns += s->now - p->it_start;
        s->execs[p->ranks[i]].batches++;
    }
    struct sim_llm_stats *ls = s->ms[p->pub.model].llm;
    int ndone = 0;
    int64_t t_client = s->now + sim_resp_delay_ns(s, p->pub.model);
    int nhand = 0;                                  /* leaving for a decode replica */
    for (int i = 0; i < p->itn; i++) {
        struct llm_rq *q = p->it[i];
        q->sched = 0;
        if (q->computed < q->prompt + q->generated)
            continue;                               /* a prefill chunk that is not the last */
        q->generated++;                             /* one token sampled */
        if (q->r->counted) {
            ls->tokens_out++;
            if (q->generated > 1)
                sim_hist_add(&ls->itl, t_client - q->t_last);
        }
        p->pub.tokens_out++;
        p->pub.tokens_left--;
        if (q->generated == 1)
            q->t_first = t_client;
        q->t_last = t_client;
        if (q->generated >= q->output) {
            unrun(s, p, q);                         /* out of the running list, blocks freed */
            p->pub.tokens_left -= q->prompt;
            p->done[ndone++] = q;
        } else if (p->pub.role == SIM_LLM_PREFILL) {
            unrun(s, p, q);                         /* its KV leaves with it */
            p->pub.tokens_left -= (long)q->prompt + q->output - q->generated;
            p->it[nhand++] = q;                     /* (it[] is read at i > nhand - 1 only) */
        }
    }
    p->itn = 0;
    p->pub.busy = false;
    /* ended and sent only now: a policy that hears of an end may submit here, forming an
     * iteration (which reuses it[]: the handoffs are copied out first) */
    for (int i = 0; i < nhand; i++)
        p->done[ndone + i] = p->it[i];
    for (int i = 0; i < nhand; i++)
        hand_off(s, e, p, p->done[ndone + i]);
    for (int i = 0; i < ndone; i++)
        finish(s, p, p->done[i]);
    start(s, e);
    drained(s, p);
}

/* A prefill replica's request, its first token out, goes to the decode replica the policy
 * names: its KV cache arrives after the link's latency and the prompt's KV bytes over its
 * bandwidth (sim_llm_kv_in). */
static void hand_off(struct sim *s, int e, struct sim_llm_rep *p, struct llm_rq *q)
{
    int d = s->pol->llm_decode_target(s, s->pstate, e, q->r);
    if (d < 0) {                                    /* no decode replica (all scaled away) */
        struct sim_request *r = q->r;
        rq_put(s, q);
        sim_req_end(s, r, SIM_REQ_DROPPED, s->now);
        return;
    }
    const struct sim_llm_state *ds = sim_llm_state(s, d);
    if (!ds || ds->role == SIM_LLM_PREFILL || ds->model != p->pub.model)
        SIM_BUG("policy %s sent a request of model %d to executor %d, no decode replica of it",
                s->pol->name, p->pub.model, d);
    /* the replica's link sends one cache at a time, each after the one before it */
    double bytes = (double)q->prompt * sim_llm_kv_bytes_per_token(p->cfg);
    int64_t start = s->now > p->link_free_at ? s->now : p->link_free_at;
    p->link_free_at = start + sim_ns(bytes / p->sc.kv_link_gbs);
    p->pub.handed_off++;
    struct sim_llm_rep *dp = rep_of(s, d);
    dp->pub.incoming++;                             /* a router sees it on its way */
    dp->pub.incoming_blocks += blocks_for(dp, (long)q->prompt + 1);
    sim_push(s, p->link_free_at + sim_ns(p->sc.kv_link_us * 1e3), SIM_EV_LLM_KV, (uint32_t)d,
             (uint64_t)(uintptr_t)q);
}

void sim_llm_kv_in(struct sim *s, int d, uint64_t rq)
{
    struct llm_rq *q = (struct llm_rq *)(uintptr_t)rq;
    struct sim_llm_rep *p = rep_of(s, d);
    struct sim_request *r = q->r;
    if (p) {
        p->pub.incoming--;
        p->pub.incoming_blocks -= blocks_for(p, (long)q->prompt + 1);
    }
    long most = (long)q->prompt + q->output - 1;
    bool never = p && ((!p->sc.chunked && most > p->sc.max_tokens) ||
                       blocks_for(p, most) > p->pub.blocks_total);
    bool nomem = false;
    /* a decode replica draining still takes the caches sent to it before (it holds them as
     * incoming, so it is not down yet) */
    if (!p || s->stopping ||
        (s->execs[d].state != SIM_EXEC_UP && s->execs[d].state != SIM_EXEC_DRAINING) || never ||
        (nomem = wait_push_back(p, q) != 0)) {
        if (p && never)
            p->pub.refused++;
        rq_put(s, q);
        sim_req_end(s, r, SIM_REQ_DROPPED, s->now);
        if (nomem)
            sim_fail_nomem(s, "for an LLM request");
        if (p)
            drained(s, p);                          /* it may have waited for this one only */
        return;
    }
    q->computed = q->prompt;                        /* its prompt's KV, in the waiting queue */
    q->kb.n = 0;                                    /* blocks for it when admitted */
    p->pub.tokens_left += (long)q->prompt + q->output - q->generated;
    p->pub.received++;
    start(s, d);
}

void sim_llm_submit(struct sim *s, int e, int m)
{
    struct sim_llm_rep *p = rep_of(s, e);
    if (!p || p->pub.model != m)
        SIM_BUG("sim_llm_submit: executor %d is no replica of model %d", e, m);
    if (p->pub.role == SIM_LLM_DECODE)
        SIM_BUG("sim_llm_submit: executor %d is a decode replica (requests reach it from "
                "prefill replicas)", e);
    struct sim_request *r = sim_q_pop(s, SIM_CENTRAL, m);
    int32_t prompt = r->prompt_tokens, output = r->output_tokens;
    /* The most a request ever computes at once is P + O - 1 tokens (a recompute after its
     * last preemption), and it holds the KV of as many at its end. Where that exceeds the
     * token budget without chunking, or the KV pool, it could never finish: vLLM refuses such
     * a configuration (max_model_len over the budget or the cache), here the request. So is
     * one without a prompt or an output (a trace row of 0 tokens). */
    long most = (long)prompt + output - 1;
    if (prompt < 1 || output < 1 || (!p->sc.chunked && most > p->sc.max_tokens) ||
        blocks_for(p, most) > p->pub.blocks_total) {
        p->pub.refused++;
        sim_req_end(s, r, SIM_REQ_DROPPED, s->now);
        return;
    }
    if (s->execs[e].state != SIM_EXEC_UP) {
        sim_req_end(s, r, SIM_REQ_DROPPED, s->now);
        return;
    }
    struct llm_rq *q = sim_pool_get(&s->llm_pool);
    if (q)
        memset(q, 0, sizeof *q);
    if (!q || wait_push_back(p, q)) {
        if (q)
            rq_put(s, q);
        sim_req_end(s, r, SIM_REQ_DROPPED, s->now);
        sim_fail_nomem(s, "for an LLM request");
        return;
    }
    q->r = r;
    q->prompt = prompt;
    q->output = output;
    p->pub.tokens_left += (long)prompt + output;
    start(s, e);
}

int sim_llm_set_role(struct sim *s, int e, enum sim_llm_role role)
{
    struct sim_llm_rep *p = rep_of(s, e);
    if (!p)
        return sim_err_set(SIM_EINVAL, "executor %d is no LLM replica", e);
    enum sim_llm_role was = p->pub.role;
    if (was == role)
        return 0;
    if (was != SIM_LLM_BOTH && role != SIM_LLM_BOTH)
        return sim_err_set(SIM_EINVAL, "replica %d: a role changes to or from both phases, not "
                           "from one phase to the other", e);
    if (role == SIM_LLM_PREFILL && !(p->sc.kv_link_gbs > 0))
        return sim_err_set(SIM_EINVAL, "replica %d: a prefill replica needs a KV link", e);
    p->pub.role = role;
    p->sc.role = role;
    return 0;
}

bool sim_llm_holds(const struct sim *s, int e)
{
    const struct sim_llm_rep *p = rank_of(s, e);
    return p && (p->pub.busy || p->pub.running > 0 || p->pub.waiting > 0 || p->pub.incoming > 0);
}

int sim_llm_replica_of(const struct sim *s, int e)
{
    const struct sim_llm_rep *p = rank_of(s, e);
    return p ? p->ranks[0] : -1;
}

/* A replica with a rank removed (draining) that holds nothing more: its draining ranks go
 * down (sim_exec_maybe_down), freeing their GPUs. */
static void drained(struct sim *s, struct sim_llm_rep *p)
{
    if (sim_llm_holds(s, p->ranks[0]))
        return;
    bool any = false;
    for (int i = 0; i < p->nranks; i++)
        if (s->execs[p->ranks[i]].state == SIM_EXEC_DRAINING) {
            sim_exec_maybe_down(s, p->ranks[i]);
            any = true;
        }
    if (any && p->gone_at == INT64_MAX)
        p->gone_at = s->now;                        /* its KV use is averaged up to here */
}

int64_t sim_llm_busy_now(const struct sim *s, int e)
{
    const struct sim_llm_rep *p = rank_of(s, e);
    return p && p->pub.busy ? s->now - p->it_start : 0;
}

void sim_llm_sample(struct sim *s)
{
    for (int m = 0; m < s->nmodels; m++) {
        struct sim_llm_stats *ls = s->ms[m].llm;
        if (!ls)
            continue;
        double util = 0;
        int reps = 0, waiting = 0;
        for (int e = 0; e < s->nllm; e++) {
            const struct sim_llm_rep *p = rep_of(s, e);
            if (!p || p->pub.model != m || p->gone_at != INT64_MAX)
                continue;
            reps++;
            util += (double)p->pub.blocks_used / (double)p->pub.blocks_total;
            waiting += p->pub.waiting;
        }
        uint64_t iters = ls->iterations - ls->snap_iters;
        sim_ts_add(s, "llm.kv_util", m, reps ? util / reps : 0);
        sim_ts_add(s, "llm.waiting", m, waiting);
        sim_ts_add(s, "llm.batch_tokens", m,
                   iters ? (double)(ls->tokens_computed - ls->snap_tokens) / (double)iters : 0);
        sim_ts_add(s, "llm.preemptions", m, (double)(ls->preemptions - ls->snap_preempt));
        ls->snap_tokens = ls->tokens_computed;
        ls->snap_iters = ls->iterations;
        ls->snap_preempt = ls->preemptions;
    }
}

void sim_llm_stop(struct sim *s)
{
    for (int e = 0; e < s->nllm; e++) {
        struct sim_llm_rep *p = rep_of(s, e);
        if (!p)
            continue;
        p->serial++;                                /* the iteration in flight is void */
        for (int i = 0; p->pub.busy && i < p->nranks; i++)
            s->execs[p->ranks[i]].busy_ns += s->now - p->it_start;
        p->pub.busy = false;
        p->itn = 0;
        while (p->pub.running > 0) {
            struct llm_rq *q = p->run[p->pub.running - 1];
            unrun(s, p, q);
            p->pub.tokens_left -= (long)q->prompt + q->output - q->generated;
            struct sim_request *r = q->r;
            rq_put(s, q);
            sim_req_end(s, r, SIM_REQ_DROPPED, s->now);
        }
        while (p->pub.waiting > 0) {
            struct llm_rq *q = wait_pop_front(p);
            p->pub.tokens_left -= (long)q->prompt + q->output - q->generated;
            struct sim_request *r = q->r;
            rq_put(s, q);
            sim_req_end(s, r, SIM_REQ_DROPPED, s->now);
        }
    }
}
