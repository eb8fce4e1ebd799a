/* sim_world — evaluating profiles and reading the world config (see sim_world.h). */
#include "sim_world.h"

#include <stdlib.h>
#include <string.h>

double sim_profile_ms(const struct sim_profile *p, int b)
{
    double x = b;
    switch (p->form) {
    case SIM_PROF_LINEAR:
        return p->alpha_ms * x + p->beta_ms;
    case SIM_PROF_QUADRATIC:
        return p->a_ms * x * x + p->b_ms * x + p->c_ms;
    case SIM_PROF_TABLE:
        if (b <= p->table_n)
            return p->table_ms[b - 1];
        if (p->table_n == 1)
            return p->table_ms[0] * x;
        /* extend with the slope of the last two entries */
        return p->table_ms[p->table_n - 1] +
               (p->table_ms[p->table_n - 1] - p->table_ms[p->table_n - 2]) * (x - p->table_n);
    }
    return 0;
}

int sim_model_cfg_kind(const struct sim_model_cfg *m, const char *kind)
{
    for (int k = 0; k < m->nprof; k++)
        if (strcmp(m->prof_kind[k], kind) == 0)
            return k;
    return -1;
}

void sim_model_cfg_free(struct sim_model_cfg *m)
{
    for (int k = 0; k < m->nprof; k++) {
        free(m->prof[k].table_ms);
        m->prof[k].table_ms = NULL;
    }
    m->nprof = 0;
}

void sim_app_free(struct sim_app *a)
{
    if (!a)
        return;
    free(a->paths);
    free(a);
}

double sim_app_model_rate(const struct sim_app *a, int m, double rate)
{
    double r = 0;
    for (int p = 0; p < a->npaths; p++)
        for (int i = 0; i < a->paths[p].nstages; i++)
            if (a->paths[p].stages[i] == m)
                r += rate * a->paths[p].prob;
    return r;
}
