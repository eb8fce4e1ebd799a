#!/usr/bin/env python3
"""llm-zoo -- measured decoder profiles (servesim-llm-profile/1, as `servesim-calibrate
llm-measure --out` writes them) into one zoo (servesim-zoo/2): a model per profile, named by its
architecture, whose `llm` section names the architecture and GPU, holds the profile inline and
the SLOs given here. A config then takes them as any zoo's models:
{"zoo": "h100_llm", "select": ["llama-3-8b"]} (docs/llm.md, docs/calibrate.md).

    scripts/llm-zoo.py --out ZOO.json [--ttft-slo-ms 500] [--tpot-slo-ms 50] [--notes TEXT]
                       [--kv-blocks N] PROFILE.json...

Every profile must be of the same GPU kind; the zoo is written whole or not at all.
"""
import argparse
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="the zoo file to write")
    ap.add_argument("--ttft-slo-ms", type=float, default=500)
    ap.add_argument("--tpot-slo-ms", type=float, default=50)
    ap.add_argument("--notes", default="", help="added to the zoo's notes (how it was measured)")
    ap.add_argument("--kv-blocks", type=int, default=0,
                    help="each model's KV pool in blocks (a device without memory arithmetic, "
                         "a cpu, needs one; a GPU's comes from its memory)")
    ap.add_argument("profiles", nargs="+")
    a = ap.parse_args()
    profs = []
    for f in a.profiles:
        try:
            p = json.load(open(f))
        except (OSError, ValueError) as e:
            sys.exit("llm-zoo: %s: %s" % (f, e))
        if not isinstance(p, dict) or p.get("format") != "servesim-llm-profile/1":
            sys.exit("llm-zoo: %s: format: expected \"servesim-llm-profile/1\", got %r"
                     % (f, p.get("format") if isinstance(p, dict) else type(p).__name__))
        for k in ("model", "gpu", "provenance"):
            if k not in p:
                sys.exit("llm-zoo: %s: %s: required" % (f, k))
        profs.append(p)
    kinds = sorted({p["gpu"] for p in profs})
    if len(kinds) != 1:
        sys.exit("llm-zoo: the profiles are of %s: a zoo is of one GPU kind" % ", ".join(kinds))
    # one provenance for the zoo: the profiles must share device, dtype and how they ran
    for key, get in (("device", lambda p: p["provenance"].get("device", "")),
                     ("dtype", lambda p: p.get("dtype", "")),
                     ("exec_mode", lambda p: p["provenance"].get("exec_mode", ""))):
        vals = sorted({get(p) for p in profs})
        if len(vals) != 1:
            sys.exit("llm-zoo: the profiles differ in %s (%s): one zoo, one way of measuring"
                     % (key, " / ".join(vals)))
    if kinds[0] == "cpu" and a.kv_blocks <= 0:
        sys.exit("llm-zoo: cpu profiles need --kv-blocks: a CPU has no memory arithmetic for "
                 "the KV pool")
    names = [p["model"] for p in profs]
    if len(set(names)) != len(names):
        sys.exit("llm-zoo: two profiles of one model: %s" % ", ".join(names))
    pv = profs[0]["provenance"]
    zoo = {"format": "servesim-zoo/2",
           "name": os.path.basename(a.out)[:-5] if a.out.endswith(".json") else os.path.basename(a.out),
           "source": "servesim-calibrate llm-measure on %s, %s: each decoder's iteration-time "
                     "profile, measured (docs/calibrate.md, \"Decoders\")"
                     % (pv.get("device", "?"), profs[0].get("dtype", "?")),
           "notes": "LLM models: each llm section names the architecture and GPU and holds the "
                    "measured profile inline; SLOs %g ms TTFT, %g ms TPOT"
                    % (a.ttft_slo_ms, a.tpot_slo_ms) + (". " + a.notes if a.notes else ""),
           "executor_kind": kinds[0],
           "provenance": {"tool": "servesim-calibrate llm-measure, scripts/llm-zoo.py",
                          "device": pv.get("device", ""), "versions": pv.get("versions", ""),
                          "libraries": pv.get("libraries", ""), "exec": pv.get("exec_mode", ""),
                          "measured": {p["model"]: {"date": p["provenance"].get("measured", ""),
                                                    "rounds": p["provenance"].get("rounds", 0)}
                                       for p in profs}},
           "models": [{"name": p["model"],
                       "llm": {"model": p["model"], "gpu": p["gpu"],
                               "ttft_slo_ms": a.ttft_slo_ms, "tpot_slo_ms": a.tpot_slo_ms,
                               "profile": p}} for p in profs]}
    if a.kv_blocks > 0:
        for m in zoo["models"]:
            m["llm"]["kv_blocks"] = a.kv_blocks
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(zoo, f, indent=1)
        f.write("\n")
    os.replace(tmp, a.out)
    print("llm-zoo: wrote %s: %s on %s" % (a.out, ", ".join(names), kinds[0]))


if __name__ == "__main__":
    main()
