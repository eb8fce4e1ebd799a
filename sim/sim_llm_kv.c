/* sim_llm_kv — an LLM replica's KV block pool: a count, or with prefix caching vLLM v1's
 * block pool (cached blocks by key, reference counts, a free queue evicted oldest first); the
 * semantics are in sim_llm_kv.h. */
#include "sim_llm_kv.h"

#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_grow.h"
#include "sim_types.h"

struct kv_blk {
    uint64_t ka, kb;             /* its key, while cached */
    int32_t ref;                 /* requests referring to it */
    uint32_t fser;               /* times it was freed: its live ring entry has this serial */
    bool cached;                 /* holds a key (valid until the block is reused) */
    bool in_tab;                 /* a shared key, in the table */
};

struct kv_entry {
    int32_t id;
    uint32_t ser;
};

#define OWN_KEY (UINT64_C(1) << 63)   /* a request's own key: (OWN_KEY | its id, index) */

void llm_kv_init(struct llm_kv *kv, long total, long block_size, bool prefix)
{
    memset(kv, 0, sizeof *kv);
    kv->total = total;
    kv->bs = block_size;
    kv->prefix = prefix;
}

void llm_kv_free(struct llm_kv *kv)
{
    free(kv->blk);
    free(kv->tab);
    free(kv->ring);
    kv->blk = NULL;
    kv->tab = NULL;
    kv->ring = NULL;
}

void llm_kv_blocks_free(struct llm_kv_blocks *b)
{
    free(b->id);
    b->id = NULL;
    b->cap = 0;
}

long llm_kv_blocks_for(const struct llm_kv *kv, long tokens)
{
    return (tokens + kv->bs - 1) / kv->bs;
}

/* ---------------------------------------------------------------- keys and the table */

/* Block k of request r: keyed by the trace's id of the prompt block holding its last token
 * where the prompt has ids that far (that id names every token before it), else by r and k. */
static void block_key(const struct llm_kv *kv, const struct sim_request *r, long prompt, long k,
                      uint64_t *a, uint64_t *b)
{
    const struct sim_prefix *px = r->prefix;
    long end = (k + 1) * kv->bs;              /* one past its last token */
    if (px && px->unit > 0 && end <= prompt && end <= (long)px->n * (long)px->unit) {
        *a = px->ids[(end - 1) / (long)px->unit];
        *b = (uint64_t)k;
        return;
    }
    *a = OWN_KEY | r->id;                     /* trace ids are below 2^32: no clash */
    *b = (uint64_t)k;
}

static uint64_t mix(uint64_t x)               /* splitmix64's finaliser */
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

static long slot_of(const struct llm_kv *kv, uint64_t a, uint64_t b)
{
    return (long)(mix(a ^ mix(b + UINT64_C(0x9e3779b97f4a7c15))) & (uint64_t)(kv->tcap - 1));
}

/* The first cached block under (a, b), or -1. */
static int32_t find(const struct llm_kv *kv, uint64_t a, uint64_t b)
{
    if (!kv->tcap)
        return -1;
    for (long i = slot_of(kv, a, b);; i = (i + 1) & (kv->tcap - 1)) {
        int32_t x = kv->tab[i];
        if (x < 0)
            return -1;
        if (kv->blk[x].ka == a && kv->blk[x].kb == b)
            return x;
    }
}

static void tab_put(struct llm_kv *kv, int32_t x)
{
    long i = slot_of(kv, kv->blk[x].ka, kv->blk[x].kb);
    while (kv->tab[i] >= 0)
        i = (i + 1) & (kv->tcap - 1);
    kv->tab[i] = x;
}

/* Room for one more key: the table at most half full (doubled and refilled). */
static int tab_room(struct llm_kv *kv)
{
    if (2 * (kv->ncached + 1) <= kv->tcap)
        return 0;
    long cap = kv->tcap ? 2 * kv->tcap : 64;
    int32_t *t = malloc((size_t)cap * sizeof *t);
    if (!t)
        return SIM_ENOMEM;
    int32_t *old = kv->tab;
    long ocap = kv->tcap;
    kv->tab = t;
    kv->tcap = cap;
    memset(t, 0xff, (size_t)cap * sizeof *t);
    for (long i = 0; i < ocap; i++)
        if (old[i] >= 0)
            tab_put(kv, old[i]);
    free(old);
    return 0;
}

/* Block x's key dropped (out of the table for a shared one: linear probing, the run after it
 * shifted back). */
static void uncache(struct llm_kv *kv, int32_t x)
{
    struct kv_blk *k = &kv->blk[x];
    k->cached = false;
    if (!k->in_tab)
        return;
    k->in_tab = false;
    long i = slot_of(kv, k->ka, k->kb);
    while (kv->tab[i] != x)
        i = (i + 1) & (kv->tcap - 1);
    long m = kv->tcap - 1;
    for (long j = (i + 1) & m;; j = (j + 1) & m) {
        int32_t y = kv->tab[j];
        if (y < 0)
            break;
        long h = slot_of(kv, kv->blk[y].ka, kv->blk[y].kb);
        /* y may fill the hole at i unless its home lies cyclically in (i, j] */
        if (((j - h) & m) >= ((j - i) & m)) {
            kv->tab[i] = y;
            i = j;
        }
    }
    kv->tab[i] = -1;
    kv->ncached--;
}

/* ---------------------------------------------------------------- the free queue */

static bool live(const struct llm_kv *kv, struct kv_entry en)
{
    return kv->blk[en.id].ref == 0 && kv->blk[en.id].fser == en.ser;
}

/* The ring at capacity cap (>= its entries), its entries in order from index 0. */
static int ring_grow(struct llm_kv *kv, long cap)
{
    struct kv_entry *r = malloc((size_t)cap * sizeof *r);
    if (!r)
        return SIM_ENOMEM;
    for (long i = 0; i < kv->rlen; i++)
        r[i] = kv->ring[(kv->rhead + i) % kv->rcap];
    free(kv->ring);
    kv->ring = r;
    kv->rcap = cap;
    kv->rhead = 0;
    return 0;
}

/* A full ring without its stale entries, order kept. The ring holds at least twice the blocks
 * made (llm_kv_alloc), and at most that many are free, so this always leaves room. */
static void ring_compact(struct llm_kv *kv)
{
    long n = 0;
    for (long i = 0; i < kv->rlen; i++) {
        struct kv_entry en = kv->ring[(kv->rhead + i) % kv->rcap];
        if (live(kv, en))
            kv->ring[(kv->rhead + n++) % kv->rcap] = en;
    }
    kv->rlen = n;
}

/* Block x (ref now 0) to the queue's tail. */
static void fq_append(struct llm_kv *kv, int32_t x)
{
    if (kv->rlen == kv->rcap)
        ring_compact(kv);
    if (kv->rlen == kv->rcap)
        SIM_BUG("KV free queue full: %ld entries, %ld blocks made", kv->rlen, kv->nblk);
    kv->ring[(kv->rhead + kv->rlen++) % kv->rcap] = (struct kv_entry){x, ++kv->blk[x].fser};
    kv->nfree++;
}

/* The oldest free block, out of the queue (there is one: nfree > 0). */
static int32_t fq_pop(struct llm_kv *kv)
{
    for (;;) {
        struct kv_entry en = kv->ring[kv->rhead];
        kv->rhead = (kv->rhead + 1) % kv->rcap;
        kv->rlen--;
        if (live(kv, en)) {
            kv->nfree--;
            /* the blocks after it were freed long ago, out of the caches: ask for them now */
            for (long i = 1; i <= 2 && i <= kv->rlen; i++)
                __builtin_prefetch(&kv->blk[kv->ring[(kv->rhead + i) % kv->rcap].id], 1);
            return en.id;
        }
    }
}

/* A block never used while there are such (vLLM's free queue starts with all of them, in
 * order, ahead of any freed one), else the oldest freed, its key evicted. */
static int32_t take_block(struct llm_kv *kv)
{
    int32_t x;
    if (kv->nblk < kv->total) {
        x = (int32_t)kv->nblk++;
        kv->blk[x] = (struct kv_blk){0, 0, 0, 0, false, false};
    } else {
        x = fq_pop(kv);
        if (kv->blk[x].cached)
            uncache(kv, x);
    }
    kv->blk[x].ref = 1;
    kv->used++;
    return x;
}

/* ---------------------------------------------------------------- requests' blocks */

/* The cached block holding block k of request r (b: the blocks it held, or NULL), or -1. */
static int32_t lookup(const struct llm_kv *kv, const struct llm_kv_blocks *b,
                      const struct sim_request *r, long prompt, long k)
{
    uint64_t ka, kb;
    block_key(kv, r, prompt, k, &ka, &kb);
    if (!(ka & OWN_KEY))
        return find(kv, ka, kb);
    if (!b || k >= b->nold)
        return -1;
    int32_t x = b->id[k];
    const struct kv_blk *c = &kv->blk[x];
    return c->cached && c->ka == ka && c->kb == kb ? x : -1;
}

long llm_kv_match(const struct llm_kv *kv, const struct llm_kv_blocks *b,
                  const struct sim_request *r, long prompt, long tokens)
{
    if (!kv->prefix || tokens < 2)
        return 0;
    long most = (tokens - 1) / kv->bs, k = 0;
    while (k < most && lookup(kv, b, r, prompt, k) >= 0)
        k++;
    return k;
}

/* Block k of b (just filled) cached under r's key, unless one is already (vLLM keeps
 * duplicates too; a lookup finds the first). */
static int cache_full(struct llm_kv *kv, struct llm_kv_blocks *b, const struct sim_request *r,
                      long prompt, long tokens)
{
    long full = tokens / kv->bs;
    for (long k = b->ncached; k < full; k++) {
        struct kv_blk *x = &kv->blk[b->id[k]];
        if (x->cached)
            SIM_BUG("KV block %d cached twice", b->id[k]);
        block_key(kv, r, prompt, k, &x->ka, &x->kb);
        x->cached = true;
        if (x->ka & OWN_KEY)
            continue;                           /* its own: found through its block list */
        if (tab_room(kv))
            return SIM_ENOMEM;
        x->in_tab = true;
        kv->ncached++;
        tab_put(kv, b->id[k]);
    }
    if (full > b->ncached)
        b->ncached = (int32_t)full;
    return 0;
}

int llm_kv_alloc(struct llm_kv *kv, struct llm_kv_blocks *b, const struct sim_request *r,
                 long prompt, long hits, long tokens)
{
    long need = llm_kv_blocks_for(kv, tokens) - b->n;
    if (!kv->prefix) {
        if (need <= 0)
            return 1;
        if (need > kv->total - kv->used)
            return 0;
        kv->used += need;
        kv->refs += need;
        b->n += need;
        return 1;
    }
    if (hits > 0 && b->n > 0)
        SIM_BUG("KV cache hits for a request already holding %ld blocks", b->n);
    need -= hits;                             /* new blocks beyond the hits */
    long evictable = 0;                       /* hits no request holds: they leave the queue */
    for (long k = 0; k < hits; k++) {
        int32_t x = lookup(kv, b, r, prompt, k);
        if (x < 0)
            SIM_BUG("KV cache hit %ld of request %llu vanished", k, (unsigned long long)r->id);
        evictable += kv->blk[x].ref == 0;
    }
    if ((need > 0 ? need : 0) + evictable > kv->total - kv->used)
        return 0;
    long want = b->n + hits + (need > 0 ? need : 0);
    if (want > b->cap && sim_grow(&b->id, &b->cap, want, sizeof *b->id, 16))
        return SIM_ENOMEM;
    long most = kv->nblk + (need > 0 ? need : 0);   /* blocks made, at most */
    if (most > kv->total)
        most = kv->total;
    if (most > kv->blkcap) {
        int cap = (int)kv->blkcap;
        if (sim_grow(&kv->blk, &cap, most, sizeof *kv->blk, 64))
            return SIM_ENOMEM;
        kv->blkcap = cap;
    }
    if (2 * most > kv->rcap && ring_grow(kv, 2 * kv->blkcap))
        return SIM_ENOMEM;
    if (b->n == 0)
        b->ncached = (int32_t)hits;           /* a request starting: its hits are cached */
    for (long k = 0; k < hits; k++) {        /* touch: the hits gain a reference */
        int32_t x = lookup(kv, b, r, prompt, k);  /* (a hit of its own is at b->id[k]) */
        if (kv->blk[x].ref++ == 0) {          /* out of the free queue: its entry is stale */
            kv->nfree--;
            kv->used++;
        }
        b->id[b->n++] = x;
    }
    for (long i = 0; i < need; i++)
        b->id[b->n++] = take_block(kv);
    kv->refs += hits + (need > 0 ? need : 0);
    return cache_full(kv, b, r, prompt, tokens) ? SIM_ENOMEM : 1;
}

void llm_kv_release(struct llm_kv *kv, struct llm_kv_blocks *b)
{
    kv->refs -= b->n;
    if (!kv->prefix) {
        kv->used -= b->n;
        b->n = 0;
        return;
    }
    for (long k = b->n - 1; k >= 0; k--) {    /* tail first: evicted first */
        int32_t x = b->id[k];
        if (--kv->blk[x].ref == 0) {
            kv->used--;
            fq_append(kv, x);
        }
    }
    b->nold = b->ncached;                     /* its cached blocks, to be found again */
    b->n = 0;
    b->ncached = 0;
}

int llm_kv_check(const struct llm_kv *kv)
{
    if (kv->used < 0 || kv->used > kv->total || kv->refs < kv->used ||
        (!kv->prefix && kv->refs != kv->used))
        return sim_err_set(SIM_EINVAL, "KV pool: %ld blocks in use, %ld references, %ld in all",
                           kv->used, kv->refs, kv->total);
    if (!kv->prefix)
        return 0;
    long used = 0, refs = 0, cached = 0, nfree = 0;
    for (long x = 0; x < kv->nblk; x++) {
        used += kv->blk[x].ref > 0;
        refs += kv->blk[x].ref;
        if (kv->blk[x].in_tab) {
            cached++;
            if (!kv->blk[x].cached || find(kv, kv->blk[x].ka, kv->blk[x].kb) < 0)
                return sim_err_set(SIM_EINVAL, "KV pool: block %ld cached but not found", x);
        } else if (kv->blk[x].cached && !(kv->blk[x].ka & OWN_KEY)) {
            return sim_err_set(SIM_EINVAL, "KV pool: block %ld holds a shared key outside the "
                               "table", x);
        }
    }
    for (long i = 0; i < kv->rlen; i++) {     /* each free block once, by its latest serial */
        struct kv_entry en = kv->ring[(kv->rhead + i) % kv->rcap];
        if (en.id < 0 || en.id >= kv->nblk)
            return sim_err_set(SIM_EINVAL, "KV pool: free queue entry %ld names block %d of "
                               "%ld", i, en.id, kv->nblk);
        nfree += live(kv, en);
    }
    if (used != kv->used || refs != kv->refs || cached != kv->ncached || nfree != kv->nfree ||
        nfree != kv->nblk - used)
        return sim_err_set(SIM_EINVAL, "KV pool: counted %ld in use, %ld references, %ld "
                           "cached, %ld free; kept %ld, %ld, %ld, %ld", used, refs, cached,
                           nfree, kv->used, kv->refs, kv->ncached, kv->nfree);
    return 0;
}
