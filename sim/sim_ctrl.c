/* sim_ctrl — the central controller's own time (world.ctrl): decisions on scheduler threads
 * that queue when all are busy, and the delay their work adds to what they dispatch. Every
 * policy callback is bracketed by sim_ctrl_begin/end (sim_int.h); a callback that charges
 * nothing costs nothing and waits for no thread, so executor-local decisions (a Nexus
 * backend's loop) and policies without costs are unchanged. */
#include "sim_err.h"
#include "sim_int.h"

void sim_ctrl_begin(struct sim *s)
{
    if (s->dec_depth++ == 0)
        s->dec_assigned = false, s->dec_cost = 0;
}

void sim_ctrl_charge(struct sim *s, int64_t ns)
{
    if (s->ctrl_threads <= 0 || s->dec_depth == 0)
        return;
    if (!s->dec_assigned) {             /* the first free thread takes the decision */
        int k = 0;
        for (int i = 1; i < s->ctrl_threads; i++)
            if (s->ctrl_free[i] < s->ctrl_free[k])
                k = i;
        s->dec_thread = k;
        s->dec_start = s->ctrl_free[k] > s->now ? s->ctrl_free[k] : s->now;
        s->dec_assigned = true;
        int64_t wait = s->dec_start - s->now;
        s->ctrl_wait_ns += wait;
        if (wait > s->ctrl_wait_max_ns)
            s->ctrl_wait_max_ns = wait;
        s->ctrl_decisions++;
    }
    s->dec_cost += ns;
}

int64_t sim_ctrl_ready(const struct sim *s)
{
    return s->dec_depth > 0 && s->dec_assigned ? s->dec_start + s->dec_cost : s->now;
}

void sim_ctrl_end(struct sim *s)
{
    if (--s->dec_depth > 0 || !s->dec_assigned)
        return;
    int64_t end = s->dec_start + s->dec_cost, upto = end < s->duration ? end : s->duration;
    s->ctrl_free[s->dec_thread] = end;
    if (upto > s->dec_start)            /* busy time within the run's [0, duration) */
        s->ctrl_busy_ns += upto - s->dec_start;
    s->dec_assigned = false;
}

bool sim_ctrl_on(const struct sim *s)
{
    return s->ctrl_threads > 0;
}

void sim_ctrl_examine(struct sim *s, int n)
{
    if (n > 0)
        sim_ctrl_charge(s, s->ctrl_cand_ns * n);
}
