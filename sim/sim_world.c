/* sim_world — evaluating profiles and reading the world config (see sim_world.h). */
#include "sim_world.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

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

void sim_service_at(const struct sim_service *v, int b, double *cv, double *shift)
{
    *cv = v->ncv ? v->cv[(b <= v->ncv ? b : v->ncv) - 1] : 0;
    if (*cv < SIM_SVC_CV_MIN)
        *cv = 0;
    *shift = v->nshift ? v->shift[(b <= v->nshift ? b : v->nshift) - 1] : 0;
}

void sim_service_xparams(enum sim_svc_dist d, double cv, double shift, double *p1, double *p2)
{
    double m = 1 - shift, c = cv / m;  /* X: mean m, coefficient of variation c */
    if (d == SIM_SVC_LOGNORMAL) {
        *p2 = sqrt(log1p(c * c));
        *p1 = log(m) - *p2 * *p2 / 2;
    } else {
        *p1 = 1 / (c * c);
        *p2 = m / *p1;
    }
}

double sim_service_quantile(const struct sim_service *v, int b, double q)
{
    double cv, f, p1, p2;
    sim_service_at(v, b, &cv, &f);
    if (v->dist == SIM_SVC_NONE || cv <= 0)
        return 1;
    sim_service_xparams(v->dist, cv, f, &p1, &p2);
    return f + (v->dist == SIM_SVC_LOGNORMAL ? gsl_cdf_lognormal_Pinv(q, p1, p2)
                                             : gsl_cdf_gamma_Pinv(q, p1, p2));
}

void sim_model_cfg_free(struct sim_model_cfg *m)
{
    for (int k = 0; k < m->nprof; k++) {
        free(m->prof[k].table_ms);
        m->prof[k].table_ms = NULL;
        free(m->prof[k].svc.cv);
        free(m->prof[k].svc.shift);
        m->prof[k].svc = (struct sim_service){0};
    }
    m->nprof = 0;
    if (m->llm_on && m->llm.prof == SIM_LLM_TABLE) {
        sim_llm_table_free(m->llm.table);
        m->llm.table = NULL;
        m->llm.prof = SIM_LLM_ROOFLINE;
    }
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
