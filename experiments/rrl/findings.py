#!/usr/bin/env python3
"""findings.py DB [--readme README.md] — RRL's comparisons with its deep-RL comparators, seed by
seed, and the spec's findings 3-6 (specs/rrl.md "What to reproduce": finding | servesim |
holds? | why not) from a results database of the E3-E6 sweeps here (README.md: how to make
it; each experiment present is judged, the others are listed as not run).

A comparison holds where the policy `rrl` (the case "rrl", the default parameters) beats the
comparator on the experiment's measure in at least 4 of 5 seeds (the issue's criterion; with n
seeds, at least 0.8 n): the run's mean slot cost (E3, E4: the mean over slots of the mean
latency of the requests that ended in the slot, a request dropped at a restart or after
max_wait_slots counted at its wait — what the authors' trials measured; the run's mean latency
of completed requests would favour a policy that loses more at the restarts), the share of slots whose p95 exceeds
the strict SLO (E5), the share of slots within the SLO (E6). With --readme the tables replace
the text between the README's findings markers."""
import json
import math
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import report_cli  # noqa: E402  (experiments/report_cli.py)

EXPS = [  # sweep, label, measure
    ("rrl_e3_wiki", "E3 WiKi, CPU", "slot"), ("rrl_e4_dynamic", "E4 Dynamic, CPU", "slot"),
    ("rrl_e3_wiki_gpu", "E3 WiKi, GPU", "slot"), ("rrl_e4_dynamic_gpu", "E4 Dynamic, GPU", "slot"),
    ("rrl_e3_wiki_ds", "E3 WiKi, DeepSpeech-like", "slot"),
    ("rrl_e4_dynamic_ds", "E4 Dynamic, DeepSpeech-like", "slot"),
    ("rrl_e5_tail", "E5 strict SLO, CPU", "viol"), ("rrl_e5_tail_gpu", "E5 strict SLO, GPU", "viol"),
    ("rrl_e6_resource", "E6 resource, CPU", "met"), ("rrl_e6_resource_gpu", "E6 resource, GPU", "met"),
    ("rrl_e6_resource_ds", "E6 resource, DeepSpeech-like", "met"),
    ("rrl_e3_wiki_paper_rate", "E3 WiKi at the paper's 14 req/s, CPU", "slot"),
    ("rrl_e4_dynamic_paper_rate", "E4 Dynamic at the paper's 14 req/s, CPU", "slot"),
    ("rrl_e5_tail_paper_rate", "E5 strict SLO at the paper's 14 req/s, CPU", "viol"),
    ("rrl_e6_resource_paper_rate", "E6 resource at the paper's 14 req/s, CPU", "met"),
]
DRL = [("capes", "CAPES-like (DQN)"), ("deeprm", "DeepRM-like (REINFORCE)")]
LOWER_IS_BETTER = {"slot": True, "viol": True, "met": False}


def load(db):
    con = report_cli.connect(db)
    runs = {}
    for rid, sweep, case, seed, mean, p99, cfg in report_cli.rows(con, 
            "SELECT p.run_id, p.sweep, json_extract(p.settings_json, '$.case'), "
            "json_extract(p.settings_json, '$.seed'), m.mean_ms, m.p99_ms, r.config_json "
            "FROM sweep_points p JOIN model_stats m ON m.run_id = p.run_id "
            "JOIN runs r ON r.id = p.run_id"):
        slo = json.loads(cfg).get("policy", {}).get("params", {}).get("slo_ms") if cfg else None
        runs[rid] = dict(sweep=sweep.split("@")[0], case=case, seed=seed, mean=mean, p99=p99,
                         slo=slo, cost=[], util=[])
    for rid, series, v in report_cli.rows(con, 
            "SELECT run_id, series, value FROM timeseries WHERE series IN ('rrl.cost', 'rrl.util') "
            "ORDER BY run_id, t_s"):
        if rid in runs:
            runs[rid]["cost" if series == "rrl.cost" else "util"].append(v)
    for r in runs.values():
        c = r["cost"]
        r["slot"] = sum(c) / len(c) if c else None
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
    return "{:,.0f} ms".format(v) if measure == "slot" else "%.0f%%" % (100 * v)


def paper_rate_rows(con):
    """Finding 1 at the paper's 14 req/s (e1_paper_rate.sweep.json), per one-core speed: the
    best configuration against sequential [1, 1, 1] (served or overloaded) and against the
    paper's Fig. 4 slice (k 1, p 1 at t 10)."""
    land = defaultdict(dict)
    for st, mean, off, done in report_cli.rows(
            con, "SELECT s.settings_json, m.mean_ms, m.offered, m.on_time + m.late "
                 "FROM sweep_points s JOIN model_stats m ON m.run_id = s.run_id "
                 "WHERE s.sweep LIKE 'rrl_e1_paper_rate@%'"):
        st = json.loads(st)
        l1 = st["models[0]"]["profiles"]["cpu-amd-epyc@1core"]["alpha_ms"]
        cfg = tuple(st["policy.params.config[%d]" % i] for i in range(3))
        land[l1][cfg] = (mean, done / off if off else 0.0)
    if not land:
        return ["| 1b. Landscape at the paper's 14 req/s (e1_paper_rate) | not run in this "
                "database | - | |"]
    cells, served_ok, many = [], [], []
    for l1 in sorted(land):
        L = land[l1]
        best = min(L, key=lambda k: L[k][0])
        seq, frac = L[(1, 1, 1)]
        served = frac >= 0.99
        f4 = L.get((1, 1, 10), (float("nan"),))[0]
        cells.append("one core %.0f ms: best %s %.1f ms; [1, 1, 1] %s ms (%s) = %s the best; "
                     "[1, 1, 10] %.1f ms" % (
                         l1, list(best), L[best][0], format(round(seq), ","),
                         "served" if served else "overloaded: %.0f%% served" % (100 * frac),
                         "%.1fx" % (seq / L[best][0]), f4))
        if served:
            served_ok.append(l1)
            many.append(seq / L[best][0] >= 10)
    ok = bool(served_ok) and all(many)
    if served_ok and max(served_ok) < 109:
        cells.append("[1, 1, 1] keeps up only with a one-core time under this VM's measured "
                     "109 ms, faster than the evidence allows (the paper's Xeon E5-2630 v4 is "
                     "not faster per core)")
    why = ("at the paper's 14 req/s [1, 1, 1] is overloaded at this VM's one-core time (109 ms) "
           "and slower; only a core 2x faster than this VM's (outside the evidence) serves it, "
           "and there the best is %s" % ("many times faster" if ok else "not 10x faster"))
    return ["| 1b. At the paper's 14 req/s (10 cores) the best configuration is many times "
            "faster than a sequential one that keeps up (rule: many times = 10x or more, judged "
            "only where [1, 1, 1] serves 99%% of its requests) | %s | %s | %s |" % (
                "; ".join(cells), "yes" if ok else "no", "" if ok else why)]


def other_findings(runs, db):
    """Rows for findings 1 (E1 and the oracle's table), 2 (E2 radius), 4 (E4: after each
    change of load) and 7 (a unit test)."""
    out = []
    con = report_cli.connect(db)
    land = {}
    for k, p, t, mean in report_cli.rows(con, 
            "SELECT json_extract(s.settings_json, '$.\"policy.params.config[0]\"'), "
            "json_extract(s.settings_json, '$.\"policy.params.config[1]\"'), "
            "json_extract(s.settings_json, '$.\"policy.params.config[2]\"'), m.mean_ms "
            "FROM sweep_points s JOIN model_stats m ON m.run_id = s.run_id "
            "WHERE s.sweep LIKE 'rrl_e1_landscape@%'"):
        land[(k, p, t)] = mean
    best = min(land.values()) if land else None
    if land:
        seq, dflt = land.get((1, 1, 1)), land.get((10, 10, 10))
        by_d = defaultdict(list)
        keys = sorted(land)
        for i, a in enumerate(keys):
            for b in keys[i + 1:]:
                d = round(math.dist(a, b))
                if 1 <= d <= 8:
                    by_d[d].append(abs(math.log(land[a]) - math.log(land[b])))
        med = [sorted(v)[len(v) // 2] for _, v in sorted(by_d.items())]
        grows = all(b >= a for a, b in zip(med, med[1:]))
        here = os.path.dirname(os.path.abspath(__file__))
        tab = json.load(open(os.path.join(here, "oracle_table.json")))
        g = tab["grid"]
        n1, n2 = len(g[1]), len(g[2])
        bests = set()
        for row in tab["cost"]:
            c = min((x, i) for i, x in enumerate(row) if x is not None)[1]
            bests.add((g[0][c // (n1 * n2)], g[1][c // n2 % n1], g[2][c % n2]))
        moves = len(bests) > 1
        ok = seq / best >= 10 and dflt > 2 * best and grows and moves is not False
        out.append("| 1. Landscape: the best configuration is many times faster than "
                   "sequential; over-parallel is worse than moderate; the optimum moves with load; "
                   "median \\|Δ latency\\| grows with distance (rule: many times = sequential "
                   "over 10x the best; over-parallel [10, 10, 10] over 2x; medians non-decreasing "
                   "in distance; more than one best configuration over the oracle's loads) | best %.1f ms, sequential %s ms, "
                   "[10, 10, 10] %s ms; median \\|Δ ln latency\\| at distance 1-8: %s; %s | %s | %s |" % (
                       best, format(round(seq), ","), format(round(dflt), ","),
                       " ".join("%.2f" % m for m in med),
                       "%d different best configurations over the oracle's %d loads" % (
                           len(bests), len(tab["cost"])), "yes" if ok else "no",
                       "" if ok else "see the values"))
    else:
        out.append("| 1. Landscape (E1) | not run in this database | - | |")
    out.extend(paper_rate_rows(con))
    radius = defaultdict(list)
    for rid, r in report_cli.rows(con, 
            "SELECT s.run_id, json_extract(s.settings_json, '$.\"policy.params.radius\"') "
            "FROM sweep_points s WHERE s.sweep LIKE 'rrl_e2_radius@%'"):
        cost = [v for (v,) in report_cli.rows(con, "SELECT value FROM timeseries WHERE run_id = ? "
                                              "AND series = 'rrl.cost' ORDER BY t_s", rid)]
        radius[r].append(cost)
    if radius and best:
        def conv(c):                    # first slot from which the 100-slot moving mean stays
            mm, last = [], None         # within 1.5x the best static configuration's latency
            for i in range(100, len(c) + 1):
                mm.append(sum(c[i - 100:i]) / 100)
            for i in range(len(mm) - 1, -1, -1):
                if mm[i] > 1.5 * best:
                    return i + 101 if i + 1 < len(mm) else None
            return 100
        stats = {}
        for r, cs in sorted(radius.items()):
            cv = [conv(c) for c in cs]
            gap = sum(sum(c[-200:]) / 200 / best - 1 for c in cs) / len(cs)
            done = [x for x in cv if x is not None]
            stats[r] = (sum(done) / len(done) if done else None, len(done), len(cs), gap)
        rs = sorted(stats)
        val = "; ".join("δ %.3g: %s (%d of %d), gap %+.0f%%" % (
            r, "%.0f" % stats[r][0] if stats[r][0] else "never", stats[r][1], stats[r][2],
            100 * stats[r][3]) for r in rs)
        c0, c1 = stats.get(0, (None,))[0], stats.get(1, (None,))[0]
        faster = c1 is not None and (c0 is None or c1 <= c0 / 3)
        smallest = min(rs, key=lambda r: stats[r][3]) == 0
        out.append("| 2. Convergence falls steeply with δ; δ 1 several times faster than δ 0, "
                   "which has the smallest final gap (rule: several times = δ 1's convergence "
                   "slot at most a third of δ 0's; δ 0's final gap the smallest) | convergence slot (100-slot moving mean "
                   "within 1.5x the best static): %s | %s | %s |" % (
                       val, "yes" if faster and smallest else "no",
                       "" if faster and smallest else "; ".join(w for w, bad in (
                           ("δ 1 is not three times as fast as δ 0", not faster),
                           ("δ 0's final gap (%+.0f%%) is not the smallest: every radius ends "
                            "within %.0f%% of the best static configuration, inside the noise "
                            "of 100-request slots (about 10%%), so the gaps' order is not "
                            "resolved" % (100 * stats[0][3] if 0 in stats else float("nan"),
                                          100 * max(abs(stats[r][3]) for r in rs)),
                            not smallest and max(abs(stats[r][3]) for r in rs) <= 0.1),
                           ("δ 0 (Q-learning over 1,000 configurations from optimistic values) "
                            "has not finished its sweep at 2,000 slots, so its final gap is not "
                            "its converged one",
                            not smallest and max(abs(stats[r][3]) for r in rs) > 0.1)) if bad)))
    else:
        out.append("| 2. Convergence against δ (E2) | not run in this database | - | |")
    # 4: the 20 slots after each change of load (E4, CPU): cost over the oracle's, and spread
    cases = per_case(runs, "rrl_e4_dynamic")
    if "rrl" in cases and "oracle" in cases:
        def after(r):
            c = r["cost"]
            return [c[i] for i in range(len(c)) if i % 100 < 20]
        def ratio(case, seed):
            a, o = after(cases[case][seed]), after(cases["oracle"][seed])
            return (sum(a) / len(a)) / (sum(o) / len(o))
        def sd(case, seed):
            a = after(cases[case][seed])
            m = sum(a) / len(a)
            return math.sqrt(sum((x - m) ** 2 for x in a) / len(a))
        seeds = sorted(cases["rrl"])
        cmp = {c: (sum(ratio("rrl", sd_) < ratio(c, sd_) for sd_ in seeds),
                   sum(sd("rrl", sd_) < sd(c, sd_) for sd_ in seeds)) for c, _ in DRL if c in cases}
        ok = all(x >= math.ceil(0.8 * len(seeds)) and y >= math.ceil(0.8 * len(seeds))
                 for x, y in cmp.values())
        mean_ratio = lambda c: sum(ratio(c, x) for x in seeds) / len(seeds)
        out.append("| 4. After each load change RRL recovers faster and varies less (E4, CPU: "
                   "the 20 slots after each change; rule: lower cost and less spread than each "
                   "comparator in at least 0.8 of the seeds) | cost / the oracle's there: rrl %.1f, %s; "
                   "seeds rrl lower, less spread: %s | %s | %s |" % (
                       mean_ratio("rrl"), ", ".join("%s %.1f" % (c, mean_ratio(c)) for c in cmp),
                       ", ".join("%s %d and %d of %d" % (c, x, y, len(seeds)) for c, (x, y) in cmp.items()),
                       "yes" if ok else "no", "" if ok else "; ".join(
                           "%s: %s" % (c, "its cost after a change is lower than rrl's in "
                                       "%d seeds" % (len(seeds) - x) if x < math.ceil(0.8 * len(seeds))
                                       else "it varies less in %d of %d seeds while costing "
                                       "%.1fx the oracle's there against rrl's %.1fx: %s, so it "
                                       "moves little after a change" % (
                                           len(seeds) - y, len(seeds), mean_ratio(c),
                                           mean_ratio("rrl"),
                                           "REINFORCE changes its policy once per 20-slot episode"
                                           if c == "deeprm" else "the DQN steps one knob a slot"))
                           for c, (x, y) in cmp.items()
                           if x < math.ceil(0.8 * len(seeds)) or y < math.ceil(0.8 * len(seeds)))))
    out.append("| 7. Theory: with costs perturbed by ±Δ, \\|Q − Q_exact\\| <= Δ/(1−γ) at every step "
               "| a unit test, not a run: `test_rrl.perturbed_costs_bound` | yes (tested) | |")
    return out


def report(db):
    runs = load(db)
    lines = ["| experiment | measure | rrl | " + " | ".join(l for _, l in DRL) +
             " | rrl_per_bin (seeds it beats CAPES, DeepRM) |", "|---|---|---|---|---|---|"]
    rows, signs = [], {}
    for sweep, label, measure in EXPS:
        cases = per_case(runs, sweep)
        if "rrl" not in cases:
            continue
        name = {"slot": "mean slot cost", "viol": "slots with p95 over the SLO",
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
    out = [report_cli.seeds_line([r["seed"] for r in runs.values()], len(runs)) +
           " Seed by seed (the comparators' value, and in how many seeds `rrl` beats it):\n",
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
        out.append("| %s (rule: rrl better than each comparator in at least 0.8 of the seeds) | "
                   "rrl better than CAPES, DeepRM in %s | %s | %s |" % (
            name, val, "yes" if holds else "no",
            "" if holds else "; ".join(spread) + (". " + why[0].upper() + why[1:] if spread else why)))
    finding("3. RRL has lower run-mean latency (mean slot cost) than the DRL comparators on "
            "WiKi and Dynamic, CPU", ("rrl_e3_wiki", "rrl_e4_dynamic"),
            "REINFORCE makes one update per 20-slot episode (100 in a run), so its result is "
            "mostly its seed's walk over the knobs; where slots are not trials "
            "(policy.params.restart false), RRL's exploratory slots leave a backlog that the "
            "next slots pay for")
    finding("3. ... and at the paper's 14 req/s (WiKi and Dynamic, CPU)",
            ("rrl_e3_wiki_paper_rate", "rrl_e4_dynamic_paper_rate"),
            "the seeds where a comparator wins are listed above; no cause was measured")
    finding("3. ... and on the GPU", ("rrl_e3_wiki_gpu", "rrl_e4_dynamic_gpu"),
            "the mean over seeds is lowest for rrl, but the GPU landscape is flat near the "
            "optimum (at the mean rate 495 of its 1,210 configurations cost within 1.5x the "
            "best, against 129 of the CPU node's 1,000: oracle_table*.json), so the seeds' "
            "spread is wider than the gaps between the learners")
    finding("3. ... and on the DeepSpeech-like CPU model", ("rrl_e3_wiki_ds", "rrl_e4_dynamic_ds"),
            "wide service times (cv 0.6) make slot costs noisy, so seeds decide the order")
    finding("5. Strict SLO: fewer p95 violations than the DRL comparators", ("rrl_e5_tail", "rrl_e5_tail_gpu"),
            "Dynamic's periods above the mean rate make the strict SLO unreachable in a quarter "
            "of the oracle's own slots; the learners differ by exploration noise there")
    finding("5. ... and at the paper's 14 req/s (CPU)", ("rrl_e5_tail_paper_rate",),
            "the seeds where a comparator wins are listed above; no cause was measured")
    finding("6. Objective 2: RRL meets the SLO in more slots than the DRL comparators",
            ("rrl_e6_resource", "rrl_e6_resource_gpu", "rrl_e6_resource_ds"),
            "where the sign splits both meet the SLO in most slots, and the difference is "
            "smaller than the seeds' spread")
    finding("6. ... and at the paper's 14 req/s (CPU)", ("rrl_e6_resource_paper_rate",),
            "the seeds where a comparator wins are listed above; no cause was measured")
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
                           "; ".join(w for w, bad in (
                               ("exploration costs slots over the SLO", met < 0.9),
                               ("a comparator keeps as few or fewer busy (see the values)",
                                not less)) if bad)))
    out.extend(other_findings(runs, db))
    cpu = [r["cv"] for s, _, _, cases in rows if s in ("rrl_e3_wiki", "rrl_e4_dynamic")
           for r in cases.get("oracle", {}).values()]
    gpu = [r["cv"] for s, _, _, cases in rows if s in ("rrl_e3_wiki_gpu", "rrl_e4_dynamic_gpu")
           for r in cases.get("oracle", {}).values()]
    if cpu and gpu:
        c, g = sum(cpu) / len(cpu), sum(gpu) / len(gpu)
        out.append("| 3. GPU curves are noisier than CPU (the oracle's slot cost, coefficient of "
                   "variation; rule: the GPU's above the CPU's) | GPU %.2f, CPU %.2f | %s | %s |" % (
                       g, c, "yes" if g > c else "no", "" if g > c else
                       "a CPU slot of 100 requests spans 2.2 s of Poisson arrivals at 46 req/s, "
                       "a GPU slot 0.36 s of batches: both are averages of 100 requests"))
    return "\n".join(out)


if __name__ == "__main__":
    report_cli.main(report)
