#!/usr/bin/env python3
"""report.py DB [--readme README.md] — DynamoML's reference table and every finding of
specs/dynamoml.md "What to reproduce" (finding | servesim | holds? | why not), from a results
database of reference.sweep.json and sensitivity.sweep.json (README.md here says how).

Means over seeds; job times are means over each run's jobs, normalised to native Kubernetes;
SLA violations are the requests over the 128-ms SLA (runs.bad_rate); per client level, 5-s
samples are grouped by the clients active at their start over the 28-minute schedule, their
bad rates weighted by offered requests. With --readme the tables replace the text between the
README's report markers."""
import json
import os
import re
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import report_cli  # noqa: E402  (experiments/report_cli.py)

CONFIGS = ["dynamoml", "k8s-sharing", "k8s", "k8s-scaling"]
NATIVE = ["k8s", "k8s-sharing", "k8s-scaling"]
SCHEDULE_S = 28 * 60
FIRST_PEAK = (300, 540)              # the first ramp's top: 280-340-340-280 clients
REF_MNIST_ITERATIONS = 20000          # base.json's MNIST iterations: the regimes' unit
GPUS, MAX_PODS, NOTEBOOKS = 16, 12, 4   # base.json: 2 nodes x 8 GPUs, the HPA's 1-12 pods,
                                        # 4 notebooks (one shared GPU in DynamoML, one each else)


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


def regime_of(settings):
    """regimes.sweep.json's point: "cross MNIST/ResNet-50, length xL" (None elsewhere)."""
    kinds = settings.get("jobs.kinds")
    if not kinds:
        return None
    return "cross %g/%g, length x%g" % (kinds[0]["cross_node"], kinds[1]["cross_node"],
                                        kinds[0]["iterations"] / REF_MNIST_ITERATIONS)


def load(db):
    con = report_cli.connect(db)
    q = lambda sql, *a: report_cli.rows(con, sql, *a)
    runs = {}
    for rid, name, seed, mk, bad, nb, pods, sweep, st in q(
            "SELECT u.id, u.name, u.seed, u.makespan_s, u.bad_rate, u.notebook_slowdown, "
            "u.gpus_max, p.sweep, p.settings_json FROM runs u JOIN sweep_points p "
            "ON p.run_id = u.id"):
        runs[rid] = dict(name=name, seed=seed, mk=mk, bad=bad, nb=nb, pods=pods,
                         sweep=sweep.split("@")[0], jobs=[], workers=defaultdict(float),
                         ts=defaultdict(dict), p99=None, regime=regime_of(json.loads(st)))
    for rid, job, kind, arr, start, end, wait, train, ex, ev, cross in q(
            "SELECT run_id, job, kind, arrival_s, start_s, end_s, wait_s, train_s, exec_s, "
            "evictions, cross_node_s FROM job_stats"):
        runs[rid]["jobs"].append(dict(job=job, kind=kind, arr=arr, start=start, end=end,
                                      wait=wait, train=train, ex=ex, ev=ev, split=cross > 0))
    for rid, w, sec in q("SELECT run_id, workers, SUM(seconds) FROM job_workers GROUP BY run_id, workers"):
        runs[rid]["workers"][w] = sec
    for rid, series, key, t, v in q(
            "SELECT run_id, series, key, t_s, value FROM timeseries WHERE series IN ('clients', "
            "'bad_rate', 'offered_rps', 'gpus.inference', 'gpus.idle', 'job.workers')"):
        runs[rid]["ts"][(series, key)][t] = v
    for rid, p99 in q("SELECT run_id, p99_ms FROM model_stats"):
        runs[rid]["p99"] = p99
    for rid, n in q("SELECT run_id, SUM(evictions) FROM executor_stats GROUP BY run_id"):
        runs[rid]["pod_evictions"] = n or 0
    return runs


def by_config(runs, sweep):
    out = defaultdict(list)
    for r in runs.values():
        if r["sweep"] == sweep:
            out[r["name"]].append(r)
    return out


def job_means(rs, field):
    return mean(mean(j[field] for j in r["jobs"]) for r in rs)


def level_bad(rs):
    """clients -> violation share of the requests sent in 5-s samples started at that level"""
    late, sent = defaultdict(float), defaultdict(float)
    for r in rs:
        cl, bad, off = (r["ts"][(s, "")] for s in ("clients", "bad_rate", "offered_rps"))
        for t, c in cl.items():
            if t <= SCHEDULE_S and t in bad and t in off and off[t] > 0:
                start = cl.get(t - 5, c)    # the sample covers (t - 5, t]
                late[start] += bad[t] * off[t]
                sent[start] += off[t]
    return {c: late[c] / sent[c] for c in sorted(sent) if sent[c] > 0}


def table(c):
    k = c["k8s"]
    base = dict(mk=mean(r["mk"] for r in k), wait=job_means(k, "wait"), train=job_means(k, "train"),
                ex=job_means(k, "ex"))
    lines = ["| configuration | makespan s | makespan | wait | train | execution | longest "
             "execution s | SLA violations | notebook slowdown | pods | jobs split across nodes |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in sorted(CONFIGS, key=lambda n: mean(r["mk"] for r in c[n])):
        rs = c[name]
        mk = mean(r["mk"] for r in rs)
        lines.append("| %s | %.1f | %.3f | %.3f | %.3f | %.3f | %.1f | %.4f | %.2f | %.1f | %.1f%% |" % (
            name + (" (native)" if name == "k8s" else ""), mk, mk / base["mk"],
            job_means(rs, "wait") / base["wait"], job_means(rs, "train") / base["train"],
            job_means(rs, "ex") / base["ex"], mean(max(j["ex"] for j in r["jobs"]) for r in rs),
            mean(r["bad"] for r in rs), mean(r["nb"] for r in rs), mean(r["pods"] for r in rs),
            100 * mean(mean(j["split"] for j in r["jobs"]) for r in rs)))
    return "\n".join(lines)


def findings(c, s):
    mk = {n: mean(r["mk"] for r in c[n]) for n in CONFIGS}
    jm = {n: {f: job_means(c[n], f) for f in ("wait", "train", "ex")} for n in CONFIGS}
    out = []
    add = lambda name, rule, val, ok, why="": out.append((name, rule, val, ok, why))
    mkv = ", ".join("%s %.0f s" % (n, mk[n]) for n in sorted(CONFIGS, key=mk.get))
    add("Makespan: DynamoML shortest", "the lowest mean makespan of the four", mkv, min(mk, key=mk.get) == "dynamoml")
    add("Makespan: K8S+Scaling longest", "the highest mean makespan of the four", mkv, max(mk, key=mk.get) == "k8s-scaling")
    add("Makespan: K8S+Sharing close to native", "close: within 5% of native's", "%.3f x native" % (mk["k8s-sharing"] / mk["k8s"]),
        abs(mk["k8s-sharing"] / mk["k8s"] - 1) <= 0.05)
    def rel(n, f):                      # x native; a zero of native's: 1 if equal, else inf
        a, b = jm[n][f], jm["k8s"][f]
        return a / b if b > 0 else 1.0 if a == b else float("inf")
    add("Training times: DynamoML lowest in training and execution",
        "the lowest mean training and the lowest mean execution time of the four",
        "train %.2f, execution %.2f x native; lowest of the four: %s, %s" % (
            rel("dynamoml", "train"), rel("dynamoml", "ex"), min(CONFIGS, key=lambda n: jm[n]["train"]),
            min(CONFIGS, key=lambda n: jm[n]["ex"])),
        all(min(CONFIGS, key=lambda n: jm[n][f]) == "dynamoml" for f in ("train", "ex")))
    add("DynamoML waits less than native", "mean wait below native's", "%.2f x native" % rel("dynamoml", "wait"),
        rel("dynamoml", "wait") < 1)
    add("K8S+Scaling worse than native in waiting and execution",
        "mean wait and mean execution both above native's",
        "wait %.2f, execution %.3f x native" % (rel("k8s-scaling", "wait"), rel("k8s-scaling", "ex")),
        rel("k8s-scaling", "wait") > 1 and rel("k8s-scaling", "ex") > 1)
    def split_share(n):
        js = [j for r in c[n] for j in r["jobs"]]
        return sum(j["split"] for j in js) / len(js) if js else 0.0
    add("K8S+Scaling worse than native in all three measures (waiting, training, execution)",
        "all three means above native's",
        "wait %.2f, training %.3f, execution %.3f x native" % (
            rel("k8s-scaling", "wait"), rel("k8s-scaling", "train"), rel("k8s-scaling", "ex")),
        all(rel("k8s-scaling", f) > 1 for f in ("wait", "train", "ex")),
        "its mean training is %.1f%% shorter than native's: %.0f%% of its jobs run split over "
        "both nodes against native's %.0f%% (a split job trains about twice as long)" % (
            100 * (1 - rel("k8s-scaling", "train")), 100 * split_share("k8s-scaling"),
            100 * split_share("k8s")))
    add("K8S+Sharing waits less than native", "mean wait below native's", "%.2f x native" % rel("k8s-sharing", "wait"),
        rel("k8s-sharing", "wait") < 1)
    add("K8S+Sharing's execution only slightly shorter than native's",
        "slightly: 0-20% shorter", "%.3f x native" % rel("k8s-sharing", "ex"), 0.8 <= rel("k8s-sharing", "ex") < 1,
        "its wait shrinks less than native's execution" if rel("k8s-sharing", "ex") >= 1 else "")
    longest = mean(max(j["ex"] for j in r["jobs"]) for r in c["dynamoml"])
    add("DynamoML's longest job execution shorter than native's mean execution",
        "its longest (mean over seeds) below native's mean", "%.0f s vs %.0f s" % (longest, jm["k8s"]["ex"]), longest < jm["k8s"]["ex"])
    w = defaultdict(float)
    for r in c["dynamoml"]:
        for k, v in r["workers"].items():
            w[k] += v
    tot = sum(w.values())
    share = {k: w[k] / tot for k in w}
    wv = ", ".join("%d: %.0f%%" % (k, 100 * share[k]) for k in sorted(share))
    add("Workers per job (DynamoML): all of 1..4 occur", "each of 1-4 workers for some time", wv, all(share.get(k, 0) > 0 for k in (1, 2, 3, 4)))
    le2 = share.get(1, 0) + share.get(2, 0)
    add("Most running time at <= 2 workers", "most: over half of the jobs' running time",
        "%.0f%% at <= 2" % (100 * le2), le2 > 0.5,
        "the ResNet-50 wave (minute 10) and the third (minute 20) arrive as the clients fall "
        "to 40, so DynamoML hands them the GPUs inference frees at once")
    add("A substantial share at 3-4 workers", "substantial: 20-50% (a minority, since most is "
        "at <= 2)", "%.0f%% at 3-4" % (100 * (1 - le2)), 0.2 <= 1 - le2 <= 0.5,
        "more than half the running time is at 3-4 workers, the other side of 'most at <= 2'")

    def first_peak(r, notebook_gpus, per_job):
        """(most inference pods in the first peak, what the notebooks and jobs left then)"""
        inf = r["ts"][("gpus.inference", "")]
        pts = [(v, t) for t, v in inf.items() if FIRST_PEAK[0] <= t <= FIRST_PEAK[1]]
        v, t = max(pts) if pts else (0, 0)
        jobs = [ser.get(t, 0) for (sr, _), ser in r["ts"].items() if sr == "job.workers"]
        held = sum(1 if per_job == "chief" else w for w in jobs if w > 0)
        return v, min(MAX_PODS, GPUS - notebook_gpus - held)
    dp = [first_peak(r, 1, "chief") for r in c["dynamoml"]]
    sp = [first_peak(r, NOTEBOOKS, "workers") for r in c["k8s-scaling"]]
    dfull = sum(1 for v, left in dp if v == left)
    sfull = sum(1 for v, left in sp if v == left)
    add("First peak: DynamoML's inference takes every GPU (up to 12) but the notebooks' shared "
        "one and a chief per running job; K8S+Scaling's gets what 4 whole-GPU notebooks and the "
        "2-worker jobs leave", "each reaches what it could have in at least half the seeds, "
        "K8S+Scaling's mean below DynamoML's",
        "DynamoML %.1f pods (all it could have in %d of %d seeds), K8S+Scaling %.1f (all that "
        "was left in %d of %d)" % (mean(v for v, _ in dp), dfull, len(dp), mean(v for v, _ in sp),
                                   sfull, len(sp)),
        dfull >= len(dp) / 2 and sfull >= len(sp) / 2 and mean(v for v, _ in sp) < mean(v for v, _ in dp))
    first_two = [all(j["end"] is not None and j["end"] <= 1200 for j in r["jobs"] if j["arr"] < 1200)
                 for r in c["dynamoml"]]
    reach4 = sum(1 for r in c["dynamoml"] if r["workers"].get(4, 0) > 0)
    add("As load falls DynamoML's jobs reach 4 workers and the first two groups end before the "
        "third arrives", "4 workers in every seed; the first two groups done by 1,200 s in at "
        "least half", "4 workers in %d of %d seeds; first two groups done by 1,200 s in %d" % (
            reach4, len(first_two), sum(first_two)),
        reach4 == len(first_two) and sum(first_two) >= len(first_two) / 2)
    late_idle = mean(mean(v for t, v in r["ts"][("gpus.idle", "")].items() if t >= 0.67 * r["mk"])
                     for r in c["k8s-scaling"])
    at2 = all(set(r["workers"]) <= {2} for r in c["k8s-scaling"])
    add("K8S+Scaling leaves GPUs idle late in the run while its jobs stay at 2 workers",
        "at least 1 GPU idle on average in the last third; no job ever off 2 workers",
        "%.1f GPUs idle on average in the last third; jobs only at 2 workers: %s" % (
            late_idle, "yes" if at2 else "no"), late_idle >= 1 and at2)
    ratio = {}
    for kind in ("mnist", "resnet50"):
        sp_, un = [], []
        for n in NATIVE:
            for r in c[n]:
                for j in r["jobs"]:
                    if j["kind"] == kind and j["train"] is not None:
                        (sp_ if j["split"] else un).append(j["train"])
        ratio[kind] = (mean(sp_) / mean(un), len(sp_), len(un)) if sp_ and un else None
    rv = ", ".join("%s %s" % (k, "%.2fx (%d split, %d not)" % v if v else "n/a") for k, v in ratio.items())
    add("Split jobs run much longer, MNIST most (native configurations' training time, split "
        "over not split)", "much: ResNet-50's split over 1.2x, MNIST's above ResNet-50's", rv, all(ratio.values()) and ratio["mnist"][0] > ratio["resnet50"][0] > 1.2)
    lv = {n: level_bad(c[n]) for n in CONFIGS}
    dmax = max(lv["dynamoml"].values())
    add("Inference: DynamoML has no SLA violation at any client level",
        "no late request at any level", "most at a level: %.2f%%" % (100 * dmax), dmax == 0)
    sc = lv["k8s-scaling"]
    peaks = [sc[k] for k in sc if k >= 220]
    p99s = mean(r["p99"] for r in c["k8s-scaling"])
    add("K8S+Scaling violates at the peaks, response times a few hundred ms",
        "late requests at >= 220 clients; a few hundred ms: p99 100-1000 ms", "%.1f%% of requests late at >= 220 clients; p99 %.0f ms" % (100 * mean(peaks), p99s),
        mean(peaks) > 0 and 100 <= p99s <= 1000,
        "the pods the HPA adds at the second peak wait behind the third wave's job pods, and "
        "requests queue for seconds" if p99s > 1000 else "")
    bad = {n: mean(r["bad"] for r in c[n]) for n in CONFIGS}
    p99 = mean(r["p99"] for r in c["k8s-sharing"])
    add("K8S+Sharing (one pod, as native) is worst, beyond 1 s at the peaks",
        "the highest bad rate (within 0.01) and p99 over 1 s", "violations %s; its p99 %.0f ms" % (", ".join("%s %.3f" % (n, bad[n]) for n in CONFIGS), p99),
        bad["k8s-sharing"] >= max(bad.values()) - 0.01 and p99 > 1000)

    def grows(d):
        ks = sorted(d)
        return all(d[b] >= d[a] - 0.02 for a, b in zip(ks, ks[1:]))
    g = {n: grows(lv[n]) for n in NATIVE}
    add("Violations grow with active clients for all but DynamoML",
        "native's and K8S+Scaling's late share non-decreasing in the client level (2-point "
        "tolerance)", "; ".join("%s %s" % (n, " ".join("%d:%.0f%%" % (k, 100 * v) for k, v in sorted(lv[n].items())))
                  for n in ("k8s", "k8s-scaling")), all(g.values()),
        "K8S+Scaling's depend on when a level comes, not on the level: its second peak (160-220 "
        "clients) meets the third wave's jobs holding the GPUs")
    chief = all(min((v for t, v in r["ts"][("job.workers", str(j["job"]))].items()
                     if j["start"] is not None and j["end"] is not None and j["start"] < t < j["end"]),
                    default=1) >= 1 for n in CONFIGS for r in c[n] for j in r["jobs"])
    add("Mechanism: no chief is ever removed", "every running job keeps a worker", "every job keeps >= 1 worker while it runs: %s" % (
        "yes" if chief else "no"), chief)
    pre = {n: sum(sum(j["ev"] for j in r["jobs"]) + r.get("pod_evictions", 0) for r in c[n]) for n in CONFIGS}
    add("Preemption happens only in DynamoML", "evictions in DynamoML, none elsewhere", ", ".join("%s %d" % (n, pre[n]) for n in CONFIGS),
        pre["dynamoml"] > 0 and all(pre[n] == 0 for n in NATIVE))
    if s:
        m = {n: mean(r["mk"] for r in rs) for n, rs in s.items()}
        def lead(var):                  # against native with the same cross-node factors
            k = "k8s small-factors" if "small-factors" in var else "k8s"
            return m[("dynamoml " + var).strip()] / m[k]
        lv_ = {v: lead(v) for v in ("", "stab300", "small-factors", "stab300 small-factors")}
        add("Sensitivity: DynamoML's lead needs quick release and real cross-node costs; with "
            "300-s stabilization and small factors it may vanish",
            "DynamoML / native makespan grows with 300-s stabilization, with small factors, and "
            "most with both", "DynamoML / native makespan: default %.3f, 300 s %.3f, small factors %.3f, both %.3f" % (
                lv_[""], lv_["stab300"], lv_["small-factors"], lv_["stab300 small-factors"]),
            lv_["stab300"] > lv_[""] and lv_["small-factors"] > lv_[""] and
            lv_["stab300 small-factors"] > max(lv_["stab300"], lv_["small-factors"]))
        sv = {"default": m["k8s-scaling"] / m["k8s"], "300 s": m["k8s-scaling stab300"] / m["k8s"],
              "small factors": m["k8s-scaling small-factors"] / m["k8s small-factors"]}
        add("Sensitivity: K8S+Scaling stays worse than native",
            "worse: K8S+Scaling's makespan at least 1% above native's in all three variants (a "
            "smaller gap is within the seeds' spread)",
            ", ".join("%s %.4f" % kv for kv in sv.items()), all(v >= 1.01 for v in sv.values()),
            "with small factors native's split jobs lose little, and K8S+Scaling's HPA pods no "
            "longer cost it more than they save")
    return out


def report(db):
    runs = load(db)
    c = by_config(runs, "dynamoml_reference")
    if not all(n in c for n in CONFIGS):
        sys.exit("report.py: %s lacks a configuration of reference.sweep.json" % db)
    s = by_config(runs, "dynamoml_sensitivity")
    out = [report_cli.seeds_line([r["seed"] for r in runs.values()], len(runs)) +
           " %d seeds per configuration.\n" % len(c["k8s"]), table(c),
           "\n| finding (specs/dynamoml.md) | rule | servesim | holds? | why not |\n"
           "|---|---|---|---|---|"]
    f = findings(c, s)
    for name, rule, val, ok, why in f:
        out.append("| %s | %s | %s | %s | %s |" % (name, rule, val, "yes" if ok else "no",
                                                   "" if ok else why))
    out.append("\n%d of %d findings hold%s." % (sum(x[3] for x in f), len(f),
                                                "" if s else " (no sensitivity sweep in the database)"))
    regimes = defaultdict(lambda: defaultdict(list))
    for r in runs.values():
        if r["sweep"] == "dynamoml_regimes" and r["regime"]:
            regimes[r["regime"]][r["name"]].append(r)
    if regimes:
        names = sorted(regimes, key=lambda k: [float(x) for x in
                                               re.findall(r"[0-9.]+", k)])
        table_ = {k: findings(regimes[k], None) for k in names
                  if all(n in regimes[k] for n in CONFIGS)}
        out.append("\nWhich findings hold in which regime of `regimes.sweep.json` (cross-node "
                   "factors MNIST/ResNet-50, job lengths times the reference's; %d seeds):\n" %
                   len(next(iter(regimes.values()))["k8s"]))
        out.append("| finding | " + " | ".join(names) + " |\n|---|" + "---|" * len(names))
        for i, x in enumerate(f):
            if x[0].startswith("Sensitivity"):
                continue
            out.append("| %s | %s |" % (x[0], " | ".join(
                ("yes" if table_[k][i][3] else "no") if k in table_ else "-" for k in names)))
        out.append("| DynamoML / native makespan | %s |" % " | ".join(
            "%.3f" % (mean(r["mk"] for r in regimes[k]["dynamoml"]) /
                      mean(r["mk"] for r in regimes[k]["k8s"])) for k in names))
        out.append("| **findings that hold** | %s |" % " | ".join(
            "%d of %d" % (sum(x[3] for x in table_[k]), len(table_[k])) if k in table_ else "-"
            for k in names))
    return "\n".join(out)


if __name__ == "__main__":
    report_cli.main(report)
