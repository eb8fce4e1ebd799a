#!/usr/bin/env python3
"""make_app.py — writes FA2's application for the CPU instances measured on this machine.

Input: a zoo written by
    servesim-calibrate measure inceptionv3 resnet50 mobilenetv2 ssd300 distilbert bart_base \
        wav2vec2_features wav2vec2_encoder --threads 1 --batches 1,2,4,8,12,16 --reps 8 \
        --fit-on p99 --zoo-name fa2-cpu --out calibrated.json
(one CPU thread = the paper's instance of 1 core; quadratic fits on the p99 of each batch size,
coefficients non-negative). Output:
  workloads/zoo/fa2_cpu.json   the paper's 10 DNNs as models with those profiles
  experiments/fa2/base.json    the application (6 paths) and the default experiment
Path SLAs follow the paper's rule, 5 x the path's tail (p99) processing time at batch 1, with the
paper's own CPU SLA kept as reference_sla_ms. Each DNN's stand-in network is named in the zoo
and in experiments/fa2/README.md. Re-run after re-measuring:
    python3 experiments/fa2/make_app.py calibrated.json
"""
import json
import os
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
APP = os.path.join(ROOT, "..", "shared", "data", "fa2_app.json")

# DNN -> the calibrated networks that stand in for it (run one after the other)
STAND_IN = {
    "OBJD": (["Inception-V3"], "InceptionV2 detector: Inception-V3 (the closest calibrated Inception)"),
    "OBJR": (["ResNet-50"], "ResNet50"),
    "NSFW": (["MobileNetV2"], "MobileNetV2"),
    "ALPR": (["SSD300-VGG16"], "SSD: SSD300 with the VGG-16 backbone"),
    "FACR": (["ResNet-50"], "ResNet50"),
    "IMGS": (["MobileNetV2"], "MobileNetV2 (the segmentation head is left out)"),
    "QUAN": (["DistilBERT"], "DistilBERT at 128 tokens"),
    "SUMR": (["BART-base"], "BART-base, one encoder-decoder pass at 128+128 tokens"),
    "TCLS": (["DistilBERT"], "DistilBERT at 128 tokens"),
    "AUTT": (["Wav2Vec2-base features", "Wav2Vec2-base encoder"],
             "Wav2Vec2-base on 1 s of audio: conv feature encoder + 12-layer transformer"),
}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    cal = json.load(open(sys.argv[1]))
    kind = cal["executor_kind"]
    nets = {}
    for m in cal["models"]:
        meas = m["profiles"][kind]["measured"]
        quad = [f for f in meas["fits"] if f["form"] == "quadratic"][0]
        nets[m["name"]] = {"a": quad["a_ms"], "b": quad["b_ms"], "c": quad["c_ms"],
                           "p99_1": meas["p99_ms"][meas["batch"].index(1)],
                           "max_rel_err": quad["max_rel_err"], "weights_mb": m["weights_mb"]}
    app = json.load(open(APP))
    models, d1 = [], {}
    for dnn in app["dnns"]:
        parts, note = STAND_IN[dnn["id"]]
        a = sum(nets[p]["a"] for p in parts)
        b = sum(nets[p]["b"] for p in parts)
        c = sum(nets[p]["c"] for p in parts)
        d1[dnn["id"]] = sum(nets[p]["p99_1"] for p in parts)
        err = max(nets[p]["max_rel_err"] for p in parts)
        models.append({"name": dnn["id"],
                       "notes": "%s (%s in the paper); measured as %s; quadratic fit within %.1f%% "
                                "of the measured p99s" % (dnn["task"], dnn["model"], note, 100 * err),
                       "max_batch": 16,
                       "weights_mb": round(sum(nets[p]["weights_mb"] for p in parts), 1),
                       "profile": {"form": "quadratic", "a_ms": round(a, 6), "b_ms": round(b, 6),
                                   "c_ms": round(c, 6)}})
    paths = []
    for p in app["paths"]:
        sla = 5 * sum(d1[s] for s in p["stages"])
        paths.append({"name": "-".join(s.lower() for s in p["stages"]), "description": p["description"],
                      "stages": p["stages"], "sla_ms": round(sla), "reference_sla_ms": p["sla_cpu_ms"]})
    for m in models:   # slo_ms (required of a model): the tightest SLA of a path through it
        m["slo_ms"] = min(p["sla_ms"] for p in paths if m["name"] in p["stages"])
    zoo = {"format": "servesim-zoo/2", "name": "fa2_cpu",
           "source": "FA2 (RTAS 2022) application, profiles measured by servesim-calibrate: " + cal["source"],
           "notes": "One executor = one CPU core (oneDNN, 1 thread). Quadratic fits d(b) = a b^2 + b b + c "
                    "on the p99 of each measured batch size (1, 2, 4, 8, 12, 16), coefficients non-negative; "
                    "stand-in networks per DNN in its notes (a sum of networks is run back to back); "
                    "slo_ms = the tightest SLA of a path through the DNN",
           "executor_kind": kind, "provenance": cal.get("provenance", {}), "models": models}
    with open(os.path.join(ROOT, "workloads", "zoo", "fa2_cpu.json"), "w") as f:
        json.dump(zoo, f, indent=1)
        f.write("\n")
    base = {"name": "fa2-steady-8", "description": "FA2's application on 1-core CPU instances, "
            "steady Poisson arrivals at 8 req/s, paths uniformly at random",
            "seed": 1, "duration_s": 600, "warmup_s": 60, "drain_s": 120,
            "cluster": {"gpus": 1, "max_gpus": 1000, "gpu_kind": kind},
            "models": [{"zoo": "fa2_cpu"}],
            "application": {"name": "fa2", "description": "FA2 Tables II/III: 10 DNNs, 6 paths; "
                            "SLAs = 5 x the path's p99 at batch 1 on these profiles",
                            "paths": paths},
            "workload": {"rate_rps": 8},
            "metrics": {"sample_period_s": 1},
            "policy": {"name": "fa2", "params": {"interval_s": 10, "cold_start_s": 6}}}
    with open(os.path.join(ROOT, "experiments", "fa2", "base.json"), "w") as f:
        json.dump(base, f, indent=1)
        f.write("\n")
    for p in paths:
        print("%-16s SLA %6d ms (paper %5d ms)" % (p["name"], p["sla_ms"], p["reference_sla_ms"]))


if __name__ == "__main__":
    main()
