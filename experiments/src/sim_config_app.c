/* sim_config_app — the config's `application` section: parsed and checked into the world's
 * sim_app (DAG pipelines; sim_world.h has the semantics, docs/config.md the keys). */
#include "sim_config_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_json.h"
#include "sim_param.h"

static int model_index(const struct sim_config *c, const char *name)
{
    for (int m = 0; m < c->world.nmodels; m++)
        if (!strcmp(c->world.models[m].name, name))
            return m;
    return -1;
}

/* Kahn's algorithm over the union of the paths' edges; fails on a cycle. */
static int check_acyclic(const struct sim_config *c, const struct sim_app *a)
{
    int n = c->world.nmodels, rc = SIM_ENOMEM;
    int *indeg = calloc((size_t)n, sizeof *indeg);
    char *edge = calloc((size_t)n * (size_t)n, 1);
    if (!indeg || !edge)
        goto out;
    for (int p = 0; p < a->npaths; p++)
        for (int i = 0; i + 1 < a->paths[p].nstages; i++) {
            int u = a->paths[p].stages[i], v = a->paths[p].stages[i + 1];
            if (!edge[u * n + v])
                edge[u * n + v] = 1, indeg[v]++;
        }
    int done = 0;
    for (int round = 0; done < n && round <= n; round++)
        for (int m = 0; m < n; m++)
            if (indeg[m] == 0) {
                done++;
                indeg[m] = -1;
                for (int v = 0; v < n; v++)
                    if (edge[m * n + v])
                        indeg[v]--;
            }
    rc = 0;
    if (done < n) {
        int m = 0;
        while (indeg[m] < 0)
            m++;
        rc = sim_err_set(SIM_EINVAL, "application.paths: expected the paths to form a DAG, got "
                         "a cycle through model \"%s\"", c->world.models[m].name);
    }
out:
    free(indeg);
    free(edge);
    return rc;
}

/* application and its paths[], as given */
struct path_in {
    const char *name;
    const cJSON *stages;
    double sla_ms, weight, reference_sla_ms;
};
#define PI(f, type) SIM_P_AT(struct path_in, f, type)
static const struct sim_param PATH_KEYS[] = {
    {"name", SIM_P_STR, PI(name, const char *), .def_doc = "its stages joined by `>`",
     .doc = "unique among the paths"},
    {"description", SIM_P_HAND, .type_doc = "string", .def_doc = "", .doc = "free text"},
    {"stages", SIM_P_ARR, PI(stages, const cJSON *), .flags = SIM_P_REQUIRED,
     .type_doc = "array of 1 to 16 model names",
     .doc = "the models in order; a model appears at most once on a path"},
    {"sla_ms", SIM_P_NUM, PI(sla_ms, double), .cons = SIM_J_POS, .flags = SIM_P_REQUIRED,
     .doc = "the path's end-to-end SLA (the FA2 family: at most 1e6 ms)"},
    {"weight", SIM_P_NUM, PI(weight, double), .cons = SIM_J_NONNEG, .def = 1,
     .doc = "the path's probability is weight / the sum of weights"},
    {"reference_sla_ms", SIM_P_NUM, PI(reference_sla_ms, double), .cons = SIM_J_POS,
     .def_doc = "", .doc = "free documentation (e.g. a paper's figure)"},
    {NULL}};
#undef PI
struct app_in {
    const char *name;
    const cJSON *paths;
};
const struct sim_param sim_config_app_keys[] = {
    {"name", SIM_P_STR, SIM_P_AT(struct app_in, name, const char *), .sdef = "application",
     .doc = "its name"},
    {"description", SIM_P_HAND, .type_doc = "string", .def_doc = "", .doc = "free text"},
    {"paths", SIM_P_SECTION, .rows = PATH_KEYS, .flags = SIM_P_EACH, .def_doc = "required",
     .doc = "execution paths: 1 to 256"},
    {NULL}};

int sim_config_parse_app(struct sim_config *c, const cJSON *root)
{
    const cJSON *o, *paths;
    struct app_in in;
    int rc;
    if ((rc = sim_json_obj(root, "", "application", false, &o)) || !o)
        return rc;
    if ((rc = sim_params_read(sim_config_app_keys, o, "application", &in)) ||
        (rc = sim_json_arr(o, "application", "paths", true, &paths)))
        return rc;
    const char *name = in.name;
    int np = cJSON_GetArraySize(paths);
    if (np == 0 || np > SIM_APP_MAX_PATHS)
        return sim_err_set(SIM_EINVAL, "application.paths: expected 1 to %d paths, got %d",
                           SIM_APP_MAX_PATHS, np);
    struct sim_app *a = calloc(1, sizeof *a);
    if (!a || !(a->paths = calloc((size_t)np, sizeof *a->paths))) {
        sim_app_free(a);
        return SIM_ENOMEM;
    }
    c->app = a;
    c->world.app = a;
    snprintf(a->name, sizeof a->name, "%s", name);
    a->npaths = np;
    double wsum = 0;
    const cJSON *po = sim_json_first(paths);
    for (int p = 0; p < np; p++, po = po->next) {
        char pp[SIM_JPATH_MAX], sp[SIM_JPATH_MAX];
        const cJSON *st, *s;
        struct sim_app_path *ap = &a->paths[p];
        sim_jpath_idx(pp, sizeof pp, "application.paths", p);
        if (!cJSON_IsObject(po))
            return sim_json_expected(pp, "{stages, sla_ms}", po);
        struct path_in pin;
        if ((rc = sim_params_read(PATH_KEYS, po, pp, &pin)))
            return rc;
        const char *pname = pin.name;
        st = pin.stages;
        ap->sla_ms = pin.sla_ms;
        ap->weight = pin.weight;
        sim_jpath(sp, sizeof sp, pp, "stages");
        int ns = cJSON_GetArraySize(st);
        if (ns < 1 || ns > SIM_APP_MAX_STAGES)
            return sim_err_set(SIM_EINVAL, "%s: expected 1 to %d model names, got %d", sp,
                               SIM_APP_MAX_STAGES, ns);
        char auto_name[SIM_NAME_MAX] = "";
        int i = 0;
        cJSON_ArrayForEach(s, st) {
            char ip[SIM_JPATH_MAX];
            sim_jpath_idx(ip, sizeof ip, sp, i);
            if (!cJSON_IsString(s))
                return sim_json_expected(ip, "a model name", s);
            int m = model_index(c, s->valuestring);
            if (m < 0)
                return sim_err_set(SIM_EINVAL, "%s: expected the name of a model of this "
                                   "config, got \"%s\"", ip, s->valuestring);
            for (int j = 0; j < i; j++)
                if (ap->stages[j] == m)
                    return sim_err_set(SIM_EINVAL, "%s: model \"%s\" appears twice on the "
                                       "path", ip, s->valuestring);
            ap->stages[i++] = m;
            size_t len = strlen(auto_name);
            snprintf(auto_name + len, sizeof auto_name - len, "%s%s", len ? ">" : "",
                     s->valuestring);
        }
        ap->nstages = ns;
        snprintf(ap->name, sizeof ap->name, "%s", pname ? pname : auto_name);
        for (int q = 0; q < p; q++)
            if (!strcmp(a->paths[q].name, ap->name))
                return sim_err_set(SIM_EINVAL, "%s.name: path \"%s\" appears twice", pp,
                                   ap->name);
        wsum += ap->weight;
    }
    if (!(wsum > 0))
        return sim_err_set(SIM_EINVAL, "application.paths: expected some path with a positive "
                           "weight, got all zero");
    for (int p = 0; p < np; p++)
        a->paths[p].prob = a->paths[p].weight / wsum;
    for (int m = 0; m < c->world.nmodels; m++) {
        bool on = false;
        for (int p = 0; p < np && !on; p++)
            for (int i = 0; i < a->paths[p].nstages; i++)
                on |= a->paths[p].stages[i] == m;
        if (!on)
            return sim_err_set(SIM_EINVAL, "application.paths: model \"%s\" is on no path "
                               "(remove it from models or add it to a path)", c->world.models[m].name);
    }
    return check_acyclic(c, a);
}
