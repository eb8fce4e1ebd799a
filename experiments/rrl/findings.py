#!/usr/bin/env python3
"""findings.py DB [--readme README.md] — RRL's comparisons with its deep-RL comparators, seed by
seed, and the spec's findings 3-6 (specs/rrl.md "What to reproduce": finding | servesim |
holds? | why not) from a results database of the E3-E6 sweeps here (README.md: how to make
it; each experiment present is judged, the others are listed as not run).

A comparison holds where the policy `rrl` (the case "rrl", the default parameters) beats the
comparator on the experiment's measure in at least 4 of 5 seeds (the issue's criterion; with n
seeds, at least 0.8 n): the run's mean latency (E3, E4), the share of slots whose p95 exceeds
the strict SLO (E5), the share of slots within the SLO (E6). With --readme the tables replace
the text between the README's findings markers."""
import math
import os
import sqlite3
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import report_cli  # noqa: E402  (experiments/report_cli.py)

EXPS = [  # sweep, label, measure
    ("rrl_e3_wiki", "E3 WiKi, CPU", "mean"), ("rrl_e4_dynamic", "E4 Dynamic, CPU", "mean"),
    ("rrl_e3_wiki_gpu", "E3 WiKi, GPU", "mean"), ("rrl_e4_dynamic_gpu", "E4 Dynamic, GPU", "mean"),
    ("rrl_e3_wiki_ds", "E3 WiKi, DeepSpeech-like", "mean"),
    ("rrl_e4_dynamic_ds", "E4 Dynamic, DeepSpeech-like", "mean"),
    ("rrl_e5_tail", "E5 strict SLO, CPU", "viol"), ("rrl_e5_tail_gpu", "E5 strict SLO, GPU", "viol"),
    ("rrl_e6_resource", "E6 resource, CPU", "met"), ("rrl_e6_resource_gpu", "E6 resource, GPU", "met"),
    ("rrl_e6_resource_ds", "E6 resource, DeepSpeech-like", "met"),
]
DRL = [("capes", "CAPES-like (DQN)"), ("deeprm", "DeepRM-like (REINFORCE)")]
LOWER_IS_BETTER = {"mean": True, "viol": True, "met": False}


def load(db):
    con = sqlite3.connect(db)
    runs = {}
    for rid, sweep, case, seed, mean, p99, cfg in con.execute(
            "SELECT p.run_id, p.sweep, json_extract(p.settings_json, '$.case'), "
            "json_extract(p.settings_json, '$.seed'), m.mean_ms, m.p99_ms, r.config_json "
            "FROM sweep_points p JOIN model_stats m ON m.run_id = p.run_id "
            "JOIN runs r ON r.id = p.run_id"):
        slo = None
        if cfg and '"slo_ms"' in cfg:
            import json
            slo = json.loads(cfg).get("policy", {}).get("params", {}).get("slo_ms")
        runs[rid] = dict(sweep=sweep.split("@")[0], case=case, seed=seed, mean=mean, p99=p99,
                         slo=slo, cost=[], util=[])
    for rid, series, v in con.execute(
            "SELECT run_id, series, value FROM timeseries WHERE series IN ('rrl.cost', 'rrl.util') "
            "ORDER BY run_id, t_s"):
        if rid in runs:
            runs[rid]["cost" if series == "rrl.cost" else "util"].append(v)
    for r in runs.values():
        c = r["cost"]
        r["viol"] = sum(x > r["slo"] for x in c) / len(c) if c and r["slo"] else None
        r["met"] = sum(x < 1 for x in c) / len(c) if c else None
        r["busy"] = sum(r["util"]) / len(r["util"]) if r["util"] else None
        r["cv"] = (math.sqrt(sum((x - sum(c) / len(c)) ** 2 for x in c) / len(c)) / (sum(c) / len(c))
                   if c else None)
    return runs


def per_case(runs, sweep):
    out = defaultdict(dict)
    for r in runs.values():
        if r["sweep"] == sweep:
            out[r["case"]][r["seed"]] = r
    return out


def compare(cases, a, b, measure):
    """(seeds where a beats b, seeds compared, a's mean, b's mean) on the measure"""
    seeds = sorted(set(cases.get(a, {})) & set(cases.get(b, {})))
    low = LOWER_IS_BETTER[measure]
    wins = sum(1 for s in seeds if (cases[a][s][measure] < cases[b][s][measure]) == low and
               cases[a][s][measure] != cases[b][s][measure])
    avg = lambda c: sum(cases[c][s][measure] for s in seeds) / len(seeds) if seeds else float("nan")
    return wins, len(seeds), avg(a), avg(b)


def fmt(measure, v):
    return "{:,.0f} ms".format(v) if measure == "mean" else "%.0f%%" % (100 * v)


def report(db):
    runs = load(db)
    lines = ["| experiment | measure | rrl | " + " | ".join(l for _, l in DRL) +
             " | rrl_per_bin (seeds it beats CAPES, DeepRM) |", "|---|---|---|---|---|---|"]
    rows, signs = [], {}
    for sweep, label, measure in EXPS:
        cases = per_case(runs, sweep)
        if "rrl" not in cases:
            continue
        name = {"mean": "run mean latency", "viol": "slots with p95 over the SLO",
                "met": "slots within the SLO"}[measure]
        cells = []
        for comp, _ in DRL:
            w, n, ra, rb = compare(cases, "rrl", comp, measure)
            signs[(sweep, comp)] = (w, n)
            cells.append("%s (rrl better in %d of %d)" % (fmt(measure, rb), w, n))
        alt = "rrl_per_bin" if "rrl_per_bin" in cases else None
        alt_cell = "-"
        if alt:
            wa = [compare(cases, alt, comp, measure)[0] for comp, _ in DRL]
            alt_cell = "%s (%s of %d)" % (
                fmt(measure, compare(cases, alt, "rrl", measure)[2]), " and ".join(map(str, wa)),
                compare(cases, alt, "rrl", measure)[1])
        ra = compare(cases, "rrl", DRL[0][0], measure)[2]
        lines.append("| %s | %s | %s | %s | %s |" % (label, name, fmt(measure, ra), " | ".join(cells),
                                                     alt_cell))
        rows.append((sweep, label, measure, cases))
    if not rows:
        sys.exit("findings.py: %s holds none of the E3-E6 sweeps" % db)
    out = ["Seed by seed (5 seeds; the comparators' value, and in how many seeds `rrl` beats it):\n",
           "\n".join(lines), "\n| finding (specs/rrl.md) | servesim | holds? | why not |",
           "|---|---|---|---|"]
    ok4 = lambda w, n: n > 0 and w >= math.ceil(0.8 * n)

    def finding(name, exps, why):
        present = [(s, l) for s, l, m, _ in rows if s in exps]
        if not present:
            out.append("| %s | not run in this database | - | |" % name)
            return
        res = [(s, l, [signs[(s, c)] for c, _ in DRL]) for s, l in present]
        holds = all(ok4(*x) for _, _, xs in res for x in xs)
        val = "; ".join("%s: %s" % (l, ", ".join("%d/%d" % x for x in xs)) for _, l, xs in res)
        spread = []                     # where the sign splits: both sides' spread over seeds
        for s, l, xs in res:
            m = next(mm for ss, _, mm in EXPS if ss == s)
            cases = next(cs for ss, _, _, cs in rows if ss == s)
            for (c, _), x in zip(DRL, xs):
                if not ok4(*x) and c in cases:
                    rng = lambda k: "%s-%s" % (fmt(m, min(r[m] for r in cases[k].values())),
                                               fmt(m, max(r[m] for r in cases[k].values())))
                    spread.append("%s: %s %s over seeds, rrl %s" % (l, c, rng(c), rng("rrl")))
        out.append("| %s | rrl better than CAPES, DeepRM in %s | %s | %s |" % (
            name, val, "yes" if holds else "no",
            "" if holds else "; ".join(spread) + (". " if spread else "") + why))
    finding("3. RRL has lower run-mean latency than the DRL comparators on WiKi and Dynamic, CPU",
            ("rrl_e3_wiki", "rrl_e4_dynamic"),
            "REINFORCE makes one update per 20-slot episode (100 in a run), so its result is "
            "mostly its seed's walk over the knobs; RRL's worst seeds are exploration episodes "
            "whose backlog carries across slots (the authors' scripts restarted the server per "
            "trial)")
    finding("3. ... and on the GPU", ("rrl_e3_wiki_gpu", "rrl_e4_dynamic_gpu"),
            "the GPU landscape is flat near the optimum, so every learner's cost is within 2-5x "
            "the oracle's and seeds decide the order")
    finding("3. ... and on the DeepSpeech-like CPU model", ("rrl_e3_wiki_ds", "rrl_e4_dynamic_ds"),
            "wide service times (cv 0.6) make slot costs noisy, so seeds decide the order")
    finding("5. Strict SLO: fewer p95 violations than the DRL comparators", ("rrl_e5_tail", "rrl_e5_tail_gpu"),
            "Dynamic's periods above the mean rate make the strict SLO unreachable in a quarter "
            "of the oracle's own slots; the learners differ by exploration noise there")
    finding("6. Objective 2: RRL meets the SLO in more slots than the DRL comparators",
            ("rrl_e6_resource", "rrl_e6_resource_gpu", "rrl_e6_resource_ds"),
            "the DQN's configuration is near the oracle's more often late in the run")
    for s, l, m, cases in rows:
        if s.startswith("rrl_e6") and "rrl" in cases:
            met = sum(r["met"] for r in cases["rrl"].values()) / len(cases["rrl"])
            busy = {c: sum(r["busy"] for r in cases[c].values()) / len(cases[c])
                    for c in ["rrl"] + [c for c, _ in DRL] if c in cases}
            scale = 1 if "gpu" in s else 10
            less = all(busy["rrl"] < busy[c] for c, _ in DRL if c in busy)
            out.append("| 6. %s: RRL meets the SLO in nearly every slot (>= 90%%), using less "
                       "CPU/GPU than the DRL comparators | %.0f%% of slots; busy %s | %s | %s |" % (
                           l, 100 * met, ", ".join("%s %.2f" % (c, scale * v) for c, v in busy.items()),
                           "yes" if met >= 0.9 and less else "no",
                           "" if met >= 0.9 and less else
                           "exploration costs slots over the SLO, and configurations that miss it "
                           "keep more cores busy"))
    cpu = [r["cv"] for s, _, _, cases in rows if s in ("rrl_e3_wiki", "rrl_e4_dynamic")
           for r in cases.get("oracle", {}).values()]
    gpu = [r["cv"] for s, _, _, cases in rows if s in ("rrl_e3_wiki_gpu", "rrl_e4_dynamic_gpu")
           for r in cases.get("oracle", {}).values()]
    if cpu and gpu:
        c, g = sum(cpu) / len(cpu), sum(gpu) / len(gpu)
        out.append("| 3. GPU curves are noisier than CPU (the oracle's slot cost, coefficient of "
                   "variation) | GPU %.2f, CPU %.2f | %s | %s |" % (
                       g, c, "yes" if g > c else "no", "" if g > c else
                       "a CPU slot of 100 requests spans 2.2 s of Poisson arrivals at 46 req/s, "
                       "a GPU slot 0.36 s of batches: both are averages of 100 requests"))
    return "\n".join(out)


if __name__ == "__main__":
    report_cli.main(report)
