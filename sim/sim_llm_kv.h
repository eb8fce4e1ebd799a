/* sim_llm_kv — an LLM replica's KV block pool (engine-internal; sim_llm.c is its one user).
 *
 * Without prefix caching the pool is a count: a request holds ceil(tokens / block size)
 * blocks, and the pool the sum. With prefix caching it follows vLLM v1's BlockPool and
 * KVCacheManager (vllm/v1/core/block_pool.py, kv_cache_manager.py, vLLM 0.10):
 *   * every block a request fills is cached under a key naming its tokens and all before
 *     them: (the trace's id of the prompt block holding its last token, its index) where the
 *     request's prompt has ids (sim_prefix), else (the request, its index), which only the
 *     request itself can hit again, after a preemption. Shared keys go into a hash table;
 *     a request's own keys need none: it remembers the blocks it held, and finds one again
 *     if the block still holds its key (not reused since);
 *   * a request admitted from the waiting queue first takes the longest run of its leading
 *     blocks found in the cache, at most (tokens - 1) / block size of them, so that one token
 *     is always computed; those tokens count as computed, and the blocks gain a reference;
 *   * a block no request refers to stays cached in a free queue; new blocks come from its head
 *     (blocks never used first), evicting the key they held; a request's blocks are freed
 *     tail first, so its last blocks are evicted first;
 *   * the blocks in use are those some request refers to; several may share one.
 * Allocation asks for the new blocks plus the hits no request holds, as vLLM does. */
#ifndef SIM_LLM_KV_H
#define SIM_LLM_KV_H

#include <stdbool.h>
#include <stdint.h>

struct sim_request;

/* The blocks one request holds. */
struct llm_kv_blocks {
    long n;                      /* blocks held */
    int32_t *id;                 /* prefix caching: their ids, in token order (after a release,
                                  * the first `nold` are those it held: its own keys' blocks
                                  * are found there again) */
    int32_t cap;
    int32_t ncached;             /* prefix caching: the leading blocks cached under its keys */
    int32_t nold;
};

struct kv_blk;
struct kv_entry;

struct llm_kv {
    long total, used;            /* blocks; in use (a request refers to it) */
    long refs;                   /* the requests' blocks summed (prefix caching: >= used) */
    long bs;                     /* tokens per block */
    bool prefix;                 /* prefix caching; what follows is its state */
    struct kv_blk *blk;          /* the blocks made so far: they are taken before freed ones */
    long nblk, blkcap;
    /* the free queue, oldest first, as a ring of (block, the block's free serial then):
     * an entry whose block was taken since (a hit) or freed again later is stale and
     * skipped, so that a hit leaves the queue in O(1) and the head is read in order */
    struct kv_entry *ring;
    long rcap, rhead, rlen;
    long nfree;                  /* blocks made and free (ref 0): the ring's live entries */
    int32_t *tab;                /* open addressing: cached blocks by key (-1: empty) */
    long tcap, ncached;
};

void llm_kv_init(struct llm_kv *kv, long total, long block_size, bool prefix);
void llm_kv_free(struct llm_kv *kv);
long llm_kv_blocks_for(const struct llm_kv *kv, long tokens);
/* The leading blocks of request r (its prompt `prompt` tokens, `tokens` tokens in all; b its
 * blocks, NULL for a request that never ran here) found in the cache, at most (tokens - 1) /
 * block size; 0 without prefix caching. */
long llm_kv_match(const struct llm_kv *kv, const struct llm_kv_blocks *b,
                  const struct sim_request *r, long prompt, long tokens);
/* Request r's blocks b (held for `have` tokens) grown to hold `tokens` tokens; with b empty,
 * its first `hits` blocks are the cached ones llm_kv_match found. 1: done; 0: the pool lacks
 * the blocks (nothing changed); SIM_ENOMEM. */
int llm_kv_alloc(struct llm_kv *kv, struct llm_kv_blocks *b, const struct sim_request *r,
                 long prompt, long hits, long tokens);
/* All of b's blocks released (those no one else refers to stay cached, in the free queue). */
void llm_kv_release(struct llm_kv *kv, struct llm_kv_blocks *b);
/* b's id array freed (b holding no block). */
void llm_kv_blocks_free(struct llm_kv_blocks *b);
/* The pool's own accounting, checked in full (tests; O(blocks)): 0, or a negative code with
 * the message naming what is inconsistent. */
int llm_kv_check(const struct llm_kv *kv);

#endif
