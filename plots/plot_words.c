/* plot_words — what a figure says instead of the simulator's names: a config key as an axis
 * title ("workload.rate_rps" -> "offered load (req/s)"), a setting in words ("frontends" = 8 ->
 * "8 frontends", "search.rule" = "aggregate" -> "aggregate rule"), a policy's or a model's
 * display name, and each policy's one colour. One table of known keys; any other key is said
 * by its last name, underscores as spaces, so that no label shows a config path, "[" or "=". */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "plot_int.h"

/* A known key (array indices written "[]": "models[0].slo_ms" and "models[*].slo_ms" alike):
 * its axis title, and its value in words: pre + value + post (post1 where the value is 1). */
struct word {
    const char *key, *axis, *pre, *post, *post1;
};

static const struct word words[] = {
    {"workload.rate_rps", "offered load (req/s)", "", " req/s", NULL},
    {"workload.rate_scale", "load scale", "load x", "", NULL},
    {"cluster.gpus", "GPUs", "", " GPUs", " GPU"},
    {"cluster.gpu_kind", "GPU", "", "", NULL},
    {"frontends", "frontends", "", " frontends", " frontend"},
    {"search.rule", "goodput rule", "", " rule", NULL},
    {"models[].slo_ms", "SLO (ms)", "SLO ", " ms", NULL},
    {"models[].zoo", "model zoo", "", " zoo", NULL},
    {"models[].latency_scale", "latency scale", "latency x", "", NULL},
    {"models[].stack_scale", "serving stack scale", "stack x", "", NULL},
    {"workload.arrival", "arrivals", "", " arrivals", NULL},
    {"workload.popularity", "popularity", "", " popularity", NULL},
    {"duration_s", "duration (s)", "", " s", NULL},
    {"warmup_s", "warm-up (s)", "warm-up ", " s", NULL},
    {"policy.preset", "preset", "", " preset", NULL},
    {"policy.params.radius", "search radius", "radius ", "", NULL},
    {"policy.params.est_steps", "estimator steps", "", " estimator steps", NULL},
    {"network.ctrl_us", "control message delay (us)", "control ", " us", NULL},
};

/* Display names of the names a config uses (policies, GPU kinds, zoo models). */
static const char *const display[][2] = {
    {"symphony", "Symphony"}, {"nexus", "Nexus"}, {"clockwork", "Clockwork"},
    {"shepherd", "Shepherd"}, {"fifo", "FIFO"}, {"dynamoml", "DynamoML"}, {"roma", "ROMA"},
    {"fa2", "FA2"}, {"fa2-optimal", "FA2 (optimal)"}, {"grandslam", "GrandSLAm"},
    {"inferline", "InferLine"}, {"ds2", "DS2"}, {"rrl", "RRL"}, {"rr-ct", "RR-CT"},
    {"rr-rules", "RR-Rules"}, {"rr-max", "RR-Max"}, {"rr-min", "RR-Min"},
    {"a100", "A100"}, {"h100", "H100"}, {"h200", "H200"}, {"v100", "V100"}, {"t4", "T4"},
    {"1080ti", "GTX 1080 Ti"}, {"k80", "K80"}, {"m60", "M60"}, {"p100", "P100"},
    {"resnet50", "ResNet50"}, {"resnet101", "ResNet101"}, {"resnet152", "ResNet152"},
    {"inceptionresnetv2", "InceptionResNetV2"}, {"inceptionv3", "InceptionV3"},
    {"vgg16", "VGG16"}, {"vgg19", "VGG19"}, {"mobilenet", "MobileNet"},
    {"densenet121", "DenseNet121"}, {"xception", "Xception"}, {"bert", "BERT"},
    {"poisson", "Poisson"}, {"zipf", "Zipf"}, {"target_util", "target utilisation (HPA)"},
};

/* One colour per policy in every figure (Tableau 20, the strong ten first): the systems of
 * the Symphony paper first, then the other families. */
static const char *const policy_colour[][2] = {
    {"symphony", "#4e79a7"}, {"nexus", "#f28e2b"}, {"clockwork", "#e15759"},
    {"shepherd", "#76b7b2"}, {"fifo", "#59a14f"}, {"dynamoml", "#edc948"},
    {"roma", "#b07aa1"}, {"fa2", "#ff9da7"}, {"rrl", "#9c755f"}, {"fa2-optimal", "#bab0ac"},
    {"grandslam", "#a0cbe8"}, {"inferline", "#ffbe7d"}, {"ds2", "#8cd17d"},
    {"rr-ct", "#b6992d"}, {"rr-rules", "#499894"}, {"rr-max", "#86bcb6"},
    {"rr-min", "#d37295"},
};
static const char *const spare_colour[] = {"#fabfd2", "#d4a6c8", "#9d7660", "#d7b5a6",
                                           "#79706e", "#f1ce63", "#ff9d9a"};

void plot_policy_shade(const char *policy, int i, int n, char out[8])
{
    unsigned rgb = 0;
    sscanf(plot_policy_colour(policy) + 1, "%6x", &rgb);
    /* from darker (-0.55, towards black) to lighter (+0.3, towards white: a light colour's
     * lightest shade stays visible on white), evenly */
    double t = n > 1 ? -0.55 + 0.85 * i / (n - 1) : 0;
    unsigned c[3] = {rgb >> 16 & 255, rgb >> 8 & 255, rgb & 255};
    for (int k = 0; k < 3; k++)
        c[k] = (unsigned)(t < 0 ? c[k] * (1 + t) : c[k] + (255 - c[k]) * t + 0.5);
    snprintf(out, 8, "#%02x%02x%02x", c[0] & 255, c[1] & 255, c[2] & 255);
}

const char *plot_display_name(const char *name)
{
    for (size_t i = 0; i < sizeof display / sizeof *display; i++)
        if (strcmp(display[i][0], name) == 0)
            return display[i][1];
    return name;
}

const char *plot_policy_colour(const char *policy)
{
    for (size_t i = 0; i < sizeof policy_colour / sizeof *policy_colour; i++)
        if (strcmp(policy_colour[i][0], policy) == 0)
            return policy_colour[i][1];
    unsigned h = 5381;                  /* a policy outside the table: a fixed spare colour */
    for (const char *c = policy; *c; c++)
        h = h * 33 + (unsigned char)*c;
    return spare_colour[h % (sizeof spare_colour / sizeof *spare_colour)];
}

/* key with its array indices as "[]" ("models[0].slo_ms", "models[*].slo_ms" ->
 * "models[].slo_ms") */
static void normal_key(const char *key, char *out, size_t size)
{
    size_t n = 0;
    for (const char *c = key; *c && n + 1 < size; c++) {
        out[n++] = *c;
        if (*c == '[') {
            while (c[1] && c[1] != ']')
                c++;
        }
    }
    out[n] = '\0';
}

static const struct word *known(const char *key)
{
    char k[256];
    normal_key(key, k, sizeof k);
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strcmp(words[i].key, k) == 0)
            return &words[i];
    for (size_t i = 0; !strchr(k, '.') && i < sizeof words / sizeof *words; i++) {
        const char *leaf = strrchr(words[i].key, '.');  /* a leaf alone ("gpus"): its key's */
        if (leaf && strcmp(leaf + 1, k) == 0)
            return &words[i];
    }
    return NULL;
}

/* The key's last name in words: "policy.params.work_conserving" -> "work conserving",
 * "policy.params.config[1]" -> "config 2" (arrays count from 1 here). */
static void leaf_words(const char *key, char *out, size_t size)
{
    const char *dot = strrchr(key, '.');
    const char *leaf = dot ? dot + 1 : key;
    size_t n = 0;
    for (const char *c = leaf; *c && n + 12 < size; c++) {
        if (*c == '[') {
            long i = 0;
            bool num = isdigit((unsigned char)c[1]);
            for (c++; *c && *c != ']'; c++)
                i = i * 10 + (*c - '0');
            if (num)
                n += (size_t)snprintf(out + n, size - n, " %ld", i + 1);
            if (!*c)
                break;
            continue;
        }
        out[n++] = *c == '_' || *c == '.' ? ' ' : *c;
    }
    out[n] = '\0';
}

void plot_word_axis(const char *key, char *out, size_t size)
{
    const struct word *w = known(key);
    if (w) {
        snprintf(out, size, "%s", w->axis);
        return;
    }
    char leaf[128];                     /* a unit suffix becomes the unit: "slo ms" -> "slo (ms)" */
    leaf_words(key, leaf, sizeof leaf);
    static const char *const units[] = {" ms", " us", " s", " rps", " mb", " gb"};
    for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
        size_t l = strlen(leaf), u = strlen(units[i]);
        if (l > u && strcmp(leaf + l - u, units[i]) == 0) {
            leaf[l - u] = '\0';
            snprintf(out, size, "%s (%s)", leaf, strcmp(units[i], " rps") ? units[i] + 1 : "req/s");
            return;
        }
    }
    snprintf(out, size, "%s", leaf);
}

/* The time series the engine and the policies record (docs/results.md, `timeseries`), in
 * words for an axis or a title. */
static const char *const series_words[][2] = {
    {"offered_rps", "offered load (req/s)"}, {"ontime_rps", "on-time throughput (req/s)"},
    {"model_offered_rps", "offered load (req/s)"},
    {"model_ontime_rps", "on-time throughput (req/s)"},
    {"path_offered_rps", "offered load (req/s)"},
    {"bad_rate", "late or dropped (fraction)"}, {"path_bad_rate", "late or dropped (fraction)"},
    {"idle_frac", "GPU time idle (fraction)"}, {"executors", "executors"},
    {"gpus_billed", "GPUs billed"}, {"cores_busy", "cores busy"},
    {"autoscale.add", "executors the autoscaler adds"},
    {"autoscale.remove", "executors the autoscaler removes"},
    {"symphony.add_gpus", "GPUs Symphony asks for"},
    {"symphony.release_gpus", "GPUs Symphony would release"},
    {"symphony.repartitions", "re-partitionings"}, {"symphony.gpus_moved", "GPUs moved"},
    {"symphony.models_moved", "models moved"}, {"symphony.sub_cluster", "sub-cluster"},
    {"nexus_rps_estimate", "Nexus's rate estimate (req/s)"},
    {"roma.cores", "cores"}, {"roma.response_s", "response time (s)"},
    {"roma.eta", "η (load per core)"}, {"roma.cpu_rps", "served on CPUs (req/s)"},
    {"roma.gpu_rps", "served on GPUs (req/s)"}, {"node.cores", "cores in use"},
    {"node.eta", "η (load per core)"}, {"hpa.desired", "pods the HPA asks for"},
    {"gpus.inference", "GPUs serving inference"}, {"gpus.training", "GPUs training"},
    {"gpus.modeling", "GPUs of notebooks"}, {"gpus.idle", "GPUs idle"},
    {"gpus.pending", "executors waiting for a GPU"}, {"job.workers", "workers"},
    {"clients", "clients"}, {"rrl.cost", "cost"}, {"rrl.epsilon", "ε (exploration)"},
    {"rrl.est_loss", "estimator loss"}, {"rrl.load_rps", "load (req/s)"},
    {"rrl.pg_loss", "policy-gradient loss"}, {"rrl.state", "state"},
    {"rrl.td_loss", "TD loss"}, {"rrl.util", "utilisation"},
    {"llm.kv_util", "KV cache in use (fraction)"}, {"llm.waiting", "requests waiting"},
    {"llm.batch_tokens", "tokens per iteration"}, {"llm.preemptions", "preemptions"},
};

void plot_word_series(const char *name, char *out, size_t size)
{
    for (size_t i = 0; i < sizeof series_words / sizeof *series_words; i++)
        if (strcmp(series_words[i][0], name) == 0) {
            snprintf(out, size, "%s", series_words[i][1]);
            return;
        }
    plot_word_axis(name, out, size);    /* its last name, a unit suffix as the unit */
}

static void append(char *out, size_t size, const char *sep, const char *s)
{
    size_t n = strlen(out);
    snprintf(out + n, size - n, "%s%s", n ? sep : "", s);
}

/* A value alone in words: a number as %g, a string by its display name, true / false. */
static void value_words(const cJSON *v, char *out, size_t size)
{
    if (cJSON_IsNumber(v))
        snprintf(out, size, "%g", v->valuedouble);
    else if (cJSON_IsString(v))
        snprintf(out, size, "%s", plot_display_name(v->valuestring));
    else if (cJSON_IsBool(v))
        snprintf(out, size, "%s", cJSON_IsTrue(v) ? "yes" : "no");
    else
        out[0] = '\0';
}

/* An object in words: its "name" or "kind" first (a model, an arrival process), then each
 * other member as "leaf value"; an array: its values joined by "/". */
static void object_words(const cJSON *v, char *out, size_t size)
{
    out[0] = '\0';
    if (cJSON_IsArray(v)) {
        const cJSON *it;
        cJSON_ArrayForEach(it, v) {
            char one[64];
            value_words(it, one, sizeof one);
            append(out, size, "/", one);
        }
        return;
    }
    const cJSON *head = cJSON_GetObjectItemCaseSensitive(v, "name");
    if (!cJSON_IsString(head))
        head = cJSON_GetObjectItemCaseSensitive(v, "kind");
    if (cJSON_IsString(head))
        append(out, size, " ", plot_display_name(head->valuestring));
    bool named = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(v, "name"));
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        if (it == head || (named && cJSON_IsNumber(it)))  /* a named model: its name says it */
            continue;
        char one[160], leaf[64], val[96];
        leaf_words(it->string, leaf, sizeof leaf);
        if (cJSON_IsObject(it) || cJSON_IsArray(it))
            object_words(it, val, sizeof val);
        else
            value_words(it, val, sizeof val);
        size_t l = strlen(leaf);        /* a number's unit after it: "ctrl 20 us" */
        size_t ul = l > 3 && leaf[l - 3] == ' ' && (strcmp(leaf + l - 2, "us") == 0 ||
                                                    strcmp(leaf + l - 2, "ms") == 0) ? 2
                    : l > 2 && strcmp(leaf + l - 2, " s") == 0 ? 1 : 0;
        const char *unit = cJSON_IsNumber(it) && ul ? leaf + l - ul : NULL;
        if (cJSON_IsBool(it))
            snprintf(one, sizeof one, "%s%s", cJSON_IsTrue(it) ? "" : "no ", leaf);
        else if (unit)
            snprintf(one, sizeof one, "%.*s %s %s", (int)(l - ul - 1), leaf, val, unit);
        else if (strcmp(it->string, "params") == 0 && cJSON_IsObject(it))
            snprintf(one, sizeof one, "%s", val);   /* a policy's parameters: themselves */
        else
            snprintf(one, sizeof one, "%s %s", leaf, val);
        append(out, size, ", ", one);
    }
}

void plot_word_setting(const char *key, const cJSON *v, char *out, size_t size)
{
    char k[256], val[200];
    normal_key(key, k, sizeof k);
    out[0] = '\0';
    if (strcmp(k, "models[].select") == 0 && (cJSON_IsObject(v) || cJSON_IsString(v))) {
        const cJSON *gt = cJSON_GetObjectItemCaseSensitive(v, "beta_alpha_gt");
        const cJSON *lt = cJSON_GetObjectItemCaseSensitive(v, "beta_alpha_lt");
        if (cJSON_IsString(v) && strcmp(v->valuestring, "all") == 0)
            snprintf(out, size, "all models");
        else if (cJSON_IsNumber(gt))
            snprintf(out, size, "β/α > %g", gt->valuedouble);
        else if (cJSON_IsNumber(lt))
            snprintf(out, size, "β/α < %g", lt->valuedouble);
        if (out[0])
            return;
    }
    if ((strcmp(k, "policy.params.work_conserving") == 0 || strcmp(k, "work_conserving") == 0) &&
        cJSON_IsBool(v)) {
        snprintf(out, size, "%s", cJSON_IsTrue(v) ? "work-conserving" : "non-work-conserving");
        return;
    }
    if (strcmp(k, "policy.name") == 0 && cJSON_IsString(v)) {
        snprintf(out, size, "%s", plot_display_name(v->valuestring));
        return;
    }
    if (strcmp(k, "case") == 0 && cJSON_IsString(v)) {
        snprintf(out, size, "%s", v->valuestring);
        return;
    }
    if (cJSON_IsObject(v) || cJSON_IsArray(v)) {  /* "Nexus, preset nexuslb", "ResNet50" */
        object_words(v, val, sizeof val);
        const struct word *w = known(key);
        char leaf[128];
        leaf_words(key, leaf, sizeof leaf);
        if (strcmp(k, "policy") == 0 || strcmp(k, "models[]") == 0)
            snprintf(out, size, "%s", val);
        else                            /* "arrivals: gamma, shape 0.1" */
            snprintf(out, size, "%s: %s", w ? w->axis : leaf, val);
        return;
    }
    value_words(v, val, sizeof val);
    const struct word *w = known(key);
    if (w) {
        bool one = cJSON_IsNumber(v) && v->valuedouble == 1 && w->post1;
        snprintf(out, size, "%s%s%s", w->pre, val, one ? w->post1 : w->post);
        return;
    }
    char leaf[128];
    leaf_words(key, leaf, sizeof leaf);
    if (cJSON_IsBool(v))
        snprintf(out, size, "%s%s", cJSON_IsTrue(v) ? "" : "no ", leaf);
    else
        snprintf(out, size, "%s %s", leaf, val);
}
