/* presets — named sets of policy.params: how a published system's authors (or the paper
 * that compared against it) configured it, each with its source.
 *
 * A config selects one with "policy": {"name": ..., "preset": ...}; keys given in
 * policy.params override the preset's. A policy's default preset holds exactly the values the
 * policy uses when no params are given (tests/policies check that both runs are identical), so
 * the table documents the defaults too. Sources and what the settings give on the Symphony
 * paper's single-model setups: docs/policies.md, "How the baselines' authors ran them". */
#include "policy.h"

#include <stdio.h>
#include <string.h>

#include "sim_err.h"
#include "sim_json.h"

static const struct policy_preset presets[] = {
    {"symphony", "nexuslb", true,
     "Symphony as its authors' harness runs it (rankmt in abcdabcd987/nexuslb)",
     "abcdabcd987/nexuslb dbb9043: src/rankmt/",
     "{\"work_conserving\": false, \"overload_drop\": true, \"rate_window_ms\": 1000,"
     " \"bad_rate_threshold\": 0.01, \"sub_clusters\": 1}"},
    {"nexus", "nexuslb", false,
     "Nexus as the Symphony paper's harness runs it: sleep# profiles x1.0, every model "
     "starts on one GPU at rate 0, 30-s epochs, 1-s beacons, 10-s EWMA",
     "abcdabcd987/nexuslb dbb9043: src/nexus/ (tools/nexus_scheduler, model_db.cpp)",
     "{\"profile_multiplier\": 1.0, \"epoch_schedule\": true, \"initial_rate\": \"zero\","
     " \"model_load\": \"preloaded\", \"drop_policy\": \"sliding_window\", \"beacon_s\": 1,"
     " \"epoch_s\": 30, \"min_epoch_s\": 10, \"avg_interval_s\": 10,"
     " \"backend_batch\": \"planned\"}"},
    {"nexus", "paper", true,
     "Nexus as the Symphony paper measured it: the original's planner (profiles x1.15, "
     "models loaded when assigned) with backends that dispatch the requests accumulated so "
     "far, not at most the planned batch (its section 5 and Figure 8: Nexus batches above "
     "the planner's largest)",
     "Chen et al., Symphony (arXiv 2308.07470), section 5; "
     "planner: uwsampl/nexus src/nexus/scheduler/",
     "{\"profile_multiplier\": 1.15, \"epoch_schedule\": true, \"initial_rate\": \"zero\","
     " \"model_load\": \"on_assign\", \"drop_policy\": \"sliding_window\", \"beacon_s\": 1,"
     " \"epoch_s\": 30, \"min_epoch_s\": 10, \"avg_interval_s\": 10,"
     " \"backend_batch\": \"accumulated\"}"},
    {"nexus", "original", false,
     "the original Nexus (SOSP'19 code): profiles x1.15 (its headroom), models loaded when "
     "a schedule assigns them, a backend runs at most the planned batch",
     "uwsampl/nexus: src/nexus/common/model_db.cpp (FLAGS_profile_multiplier), "
     "src/nexus/backend/model_exec.cpp (GetBatchTaskSlidingWindow)",
     "{\"profile_multiplier\": 1.15, \"epoch_schedule\": true, \"initial_rate\": \"zero\","
     " \"model_load\": \"on_assign\", \"drop_policy\": \"sliding_window\", \"beacon_s\": 1,"
     " \"epoch_s\": 30, \"min_epoch_s\": 10, \"avg_interval_s\": 10,"
     " \"backend_batch\": \"planned\"}"},
    {"clockwork", "paper", true,
     "Clockwork as the Symphony paper ran it: INFER4 with the constants of its code, but "
     "arbitrary batch sizes 1-16 (the authors added them) and no input transfer (workers "
     "make the inputs; the controller would otherwise be the bandwidth bottleneck)",
     "Chen et al., Symphony (arXiv 2308.07470), section 5; "
     "INFER4: malixian/clockwork src/clockwork/controller/",
     "{\"scheduler\": \"infer4\", \"schedule_ahead_ms\": 10, \"max_batch\": 16,"
     " \"batch_sizes\": \"all\", \"max_exec_ms\": 250, \"default_slo_ms\": 100,"
     " \"preload\": false, \"inputs\": \"none\"}"},
    {"clockwork", "infer4", false,
     "Clockwork's INFER4 controller with the constants of its code: schedule_ahead 10 ms, "
     "batches 1-16 in powers of two, max_exec 250 ms, cold GPUs, inputs sent by the "
     "controller with each INFER",
     "malixian/clockwork (2020 fork of the OSDI'20 code): src/clockwork/controller/infer4/",
     "{\"scheduler\": \"infer4\", \"schedule_ahead_ms\": 10, \"max_batch\": 16,"
     " \"batch_sizes\": \"pow2\", \"max_exec_ms\": 250, \"default_slo_ms\": 100,"
     " \"preload\": false, \"inputs\": \"network\"}"},
    {"clockwork", "infer5", false,
     "Clockwork's INFER5 controller: one queue copy per batch size, max batch 8",
     "malixian/clockwork: src/clockwork/controller/infer5/",
     "{\"scheduler\": \"infer5\", \"schedule_ahead_ms\": 10, \"max_batch\": 8,"
     " \"batch_sizes\": \"pow2\", \"max_exec_ms\": 250, \"default_slo_ms\": 100,"
     " \"preload\": false, \"inputs\": \"network\"}"},
    {"shepherd", "paper", true,
     "Shepherd's Flex scheduler as its paper describes it: preemption factor 3.03, the "
     "timeout scan reads each queue from its oldest request",
     "Zhang et al., NSDI'23, Algorithm 1",
     "{\"lambda\": 3.03, \"drop_scan\": \"head\"}"},
    {"shepherd", "nexuslb", false,
     "Shepherd as the Symphony paper's harness re-implements it: the timeout scan reads the "
     "newest request of each queue",
     "abcdabcd987/nexuslb dbb9043: src/shepherd/",
     "{\"lambda\": 3.03, \"drop_scan\": \"nexuslb_tail\"}"},
    /* DynamoML's four configurations (paper Table 2). The HPA is the autoscale section
     * (autoscale.kind "hpa"), which a preset cannot switch on: k8s-scaling and dynamoml refuse
     * to run without it. */
    {"dynamoml", "k8s", false,
     "native Kubernetes: whole-GPU notebooks, jobs' pods bound one at a time to random nodes, "
     "one inference pod",
     "Chiang and Chou, DynamoML, CLOSER 2021, Table 2",
     "{\"sharing\": false, \"scheduling\": false, \"autoscaling\": false}"},
    {"dynamoml", "k8s-sharing", false,
     "Kubernetes with DynamoML's fractional-GPU allocator for notebooks",
     "Chiang and Chou, DynamoML, CLOSER 2021, Table 2",
     "{\"sharing\": true, \"scheduling\": false, \"autoscaling\": false}"},
    {"dynamoml", "k8s-scaling", false,
     "Kubernetes with the HPA on request rate (needs autoscale.kind \"hpa\"), native "
     "placement, no preemption",
     "Chiang and Chou, DynamoML, CLOSER 2021, Table 2",
     "{\"sharing\": false, \"scheduling\": false, \"autoscaling\": true}"},
    {"dynamoml", "dynamoml", false,
     "all three operators: sharing, the training-job scheduler, the HPA (needs "
     "autoscale.kind \"hpa\") with preemption of training workers",
     "Chiang and Chou, DynamoML, CLOSER 2021, Table 2",
     "{\"sharing\": true, \"scheduling\": true, \"autoscaling\": true}"},
    {"vllm", "v1", true,
     "vLLM v1's scheduler as vLLM 0.10 runs it behind its OpenAI API server: chunked prefill "
     "on, prefix caching on, no long-prefill cap, the batch limits of its defaults for the GPU",
     "vllm-project/vllm v0.10: vllm/v1/core/sched/scheduler.py (Scheduler.schedule), "
     "vllm/v1/core/kv_cache_manager.py, vllm/engine/arg_utils.py (EngineArgs: "
     "enable_prefix_caching, get_batch_defaults)",
     "{\"enable_chunked_prefill\": true, \"enable_prefix_caching\": true, "
     "\"long_prefill_token_threshold\": 0, \"router\": \"round_robin\"}"},
    {"vllm", "v1-no-chunking", false,
     "vLLM v1's scheduler with chunked prefill disabled: a prompt runs whole or waits",
     "vllm-project/vllm v0.10: vllm/v1/core/sched/scheduler.py (the waiting loop's "
     "`not chunked_prefill_enabled` branch)",
     "{\"enable_chunked_prefill\": false}"},
    {"vllm", "sarathi-serve", false,
     "Sarathi-Serve's stall-free batching: chunked prefill under a token budget of 512, the "
     "budget its authors use for strict latency SLOs (2048 for relaxed ones)",
     "Agrawal et al., Sarathi-Serve, OSDI 2024, section 5 (token budgets)",
     "{\"enable_chunked_prefill\": true, \"max_num_batched_tokens\": 512}"},
    {"distserve", "even", true,
     "half the GPUs prefill, KV over one 400 Gb/s NIC (50 GB/s, 10 us); DistServe searches "
     "the split and places the phases per SLO, which this preset does not",
     "Zhong et al., DistServe, OSDI 2024 (the architecture); the split and the link are "
     "servesim's defaults (docs/llm.md)",
     "{\"prefill_share\": 0.5, \"kv_link_gbs\": 50, \"kv_link_us\": 10, "
     "\"router\": \"least_tokens\"}"},
};

int policy_preset_count(void)
{
    return (int)(sizeof presets / sizeof presets[0]);
}

const struct policy_preset *policy_preset_at(int i)
{
    return (i >= 0 && i < policy_preset_count()) ? &presets[i] : NULL;
}

const struct policy_preset *policy_preset_find(const char *policy, const char *name)
{
    for (int i = 0; i < policy_preset_count(); i++)
        if (strcmp(presets[i].policy, policy) == 0 && strcmp(presets[i].name, name) == 0)
            return &presets[i];
    return NULL;
}

const struct policy_preset *policy_preset_default(const char *policy)
{
    for (int i = 0; i < policy_preset_count(); i++)
        if (strcmp(presets[i].policy, policy) == 0 && presets[i].is_default)
            return &presets[i];
    return NULL;
}

void policy_preset_names(const char *policy, char *buf, size_t size)
{
    buf[0] = '\0';
    for (int i = 0; i < policy_preset_count(); i++) {
        if (strcmp(presets[i].policy, policy) != 0)
            continue;
        size_t l = strlen(buf);
        snprintf(buf + l, size - l, "%s\"%s\"", l ? ", " : "", presets[i].name);
    }
}

int policy_preset_apply(const struct policy_preset *ps, cJSON *params)
{
    cJSON *pre = NULL;
    int rc = sim_json_parse(ps->params, "preset", &pre);
    if (rc == SIM_ENOMEM)
        return rc;
    if (rc || !cJSON_IsObject(pre)) {
        cJSON_Delete(pre);
        return sim_err_set(SIM_EINVAL, "preset %s/%s: its params are not a JSON object (a bug)",
                           ps->policy, ps->name);
    }
    cJSON *it = pre->child;
    while (it) {
        cJSON *next = it->next;
        if (!cJSON_GetObjectItemCaseSensitive(params, it->string)) {
            cJSON_DetachItemViaPointer(pre, it);
            if (!cJSON_AddItemToObject(params, it->string, it)) {
                cJSON_Delete(it);
                cJSON_Delete(pre);
                return sim_err_set(SIM_ENOMEM, "out of memory applying preset %s/%s",
                                   ps->policy, ps->name);
            }
        }
        it = next;
    }
    cJSON_Delete(pre);
    return 0;
}
