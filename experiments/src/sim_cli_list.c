/* sim_cli_list — the `servesim` commands that list what the code declares: `keys` (every
 * config key, or a policy's params: sim/util/sim_param.h tables) and `policies` (the
 * registry, presets and params); docs/config.md and docs/policies.md are generated from
 * them (scripts/gen-config-doc.sh). */
#include <stdio.h>
#include <string.h>

#include "policy.h"
#include "sim_cli_int.h"
#include "sim_config.h"
#include "sim_err.h"
#include "sim_param.h"
#include "sim_sweep.h"
#include "wl_zoo.h"

/* `keys`: the config's tables (sim_config_keys) or a policy's (policy_ops.params). */
int cmd_keys(const struct opts *o)
{
    const struct sim_param *t = sim_config_keys();
    const char *prefix = "";
    if (o->format && o->policy_given)
        return cli_fail(sim_err_set(SIM_EUSAGE, "--format: not with --policy"));
    if (o->format && strcmp(o->format, "sweep") == 0)
        t = sim_sweep_keys;
    else if (o->format && strcmp(o->format, "zoo") == 0)
        t = wl_zoo_keys;
    else if (o->format && strcmp(o->format, "config") != 0)
        return cli_fail(sim_err_set(SIM_EUSAGE, "--format: expected config, sweep or zoo, got "
                                    "\"%s\"", o->format));
    if (o->policy_given) {
        const struct policy_ops *p = policy_find(o->policy);
        if (!p) {
            char list[512];
            policy_names(list, sizeof list);
            return cli_fail(sim_err_set(SIM_EUSAGE, "--policy: expected one of %s, got \"%s\"",
                                    list, o->policy));
        }
        t = p->params;
        prefix = o->markdown ? "" : "policy.params";
    }
    if (o->own && !o->policy_given)
        return cli_fail(sim_err_set(SIM_EUSAGE, "--own: only with --policy"));
    if (o->markdown) {
        if (o->policy_given && sim_params_count(t) == 0) {
            printf("Policy %s takes no params.\n", o->policy);
            return 0;
        }
        printf("| %s | type, default | meaning |\n|---|---|---|\n",
               o->policy_given ? "param" : "key");
        for (const struct sim_param *r = t; r && r->key; r++) {
            struct sim_param one[2] = {*r, {NULL}};     /* one row at a time: --own skips */
            if (!(o->own && r->type == SIM_P_INCLUDE))  /* the shared (included) ones */
                sim_params_markdown(one, prefix, stdout);
        }
        return 0;
    }
    int shown = 0;
    if (o->own) {                       /* the policy's own rows, not the shared ones */
        for (const struct sim_param *r = t; r && r->key; r++) {
            struct sim_param one[2] = {*r, {NULL}};
            if (r->type != SIM_P_INCLUDE)
                shown += sim_params_text(one, prefix, o->config, stdout);
        }
    } else {
        shown = sim_params_text(t, prefix, o->config, stdout);
    }
    if (shown == 0 && (o->config || !o->policy_given))
        return cli_fail(sim_err_set(SIM_EUSAGE, "keys: no key starts with \"%s\"%s%s", o->config,
                                o->policy_given ? " among the params of " : "",
                                o->policy_given ? o->policy : ""));
    return 0;
}

/* `policies --markdown`: docs/policies.md's generated reference, a section per policy */
static void policies_markdown(void)
{
    for (int i = 0; i < policy_count(); i++) {
        const struct policy_ops *p = policy_at(i);
        printf("### %s\n\n%s.\n\n", p->name, p->summary);
        for (int k = 0; k < policy_preset_count(); k++) {
            const struct policy_preset *ps = policy_preset_at(k);
            if (strcmp(ps->policy, p->name) == 0)
                printf("* preset `%s`%s: %s (%s)\n", ps->name,
                       ps->is_default ? " (default)" : "", ps->summary, ps->source);
        }
        if (sim_params_count(p->params) == 0) {
            printf("\nIt takes no params.\n\n");
            continue;
        }
        printf("\n| param | type, default | meaning |\n|---|---|---|\n");
        sim_params_markdown(p->params, "", stdout);
        printf("\n");
    }
}

int cmd_policies(const struct opts *o)
{
    if (o->markdown) {
        policies_markdown();
        return 0;
    }
    for (int i = 0; i < policy_count(); i++) {
        const struct policy_ops *p = policy_at(i);
        printf("%-12s %s\n", p->name, p->summary);
        if (sim_params_count(p->params)) {
            char keys[2048];
            sim_params_key_list(p->params, keys, sizeof keys);
            printf("  params: %s\n", keys);
        }
        for (int k = 0; k < policy_preset_count(); k++) {
            const struct policy_preset *ps = policy_preset_at(k);
            if (strcmp(ps->policy, p->name) == 0)
                printf("  preset %-10s%s %s\n      source: %s\n      params: %s\n", ps->name,
                       ps->is_default ? " (default)" : "", ps->summary, ps->source, ps->params);
        }
    }
    printf("\nSelect a preset with \"policy\": {\"name\": ..., \"preset\": ...}; keys in "
           "policy.params override it.\n");
    return 0;
}

