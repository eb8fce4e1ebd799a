"""claims_why.py — for each claim of claims.py that does not hold, its measured cause in one
line (printed after "no" in the claim table). Written from the runs of run.sh and the
investigations recorded in README.md ("Where servesim differs, and why"); a cause is shown
only while its claim fails, so a claim that starts to hold drops it. Keep each to what was
measured."""

_NEXUS_ZOO = ("the worst model sets the goodput, and under Nexus's per-GPU queues some model "
              "always misses >1% at any load: a model whose SLO is under ~2x its batch-1 latency "
              "(A100 DenseNet121: l(1) 10.6 ms, SLO 21 ms; 2.4% missed at 16 req/s) must arrive "
              "at an idle GPU, and a heavy long-SLO model (EfficientNetV2M/B5, SSD) sits on one "
              "saturated GPU plus a GPU shared round-robin, dropping 3-4% from 34 req/s each "
              "while 26 of 64 GPUs idle (the planner packs, it does not spread); EfficientNetV2M "
              "alone on one GPU at its 28.5 req/s share misses 1.3-2.7% under either drop rule "
              "and multiplier. Symphony's central queue sends such a request to any idle GPU")
_SEE = "as 5.1-all-1080ti-nexus: the worst model under Nexus's per-GPU queues"

WHY = {
    "3-F1": ("8 frontends cost 52-55% at SLO 25 ms with Poisson arrivals and nothing within the "
             "search's 3% step elsewhere: at SLO 100 ms the accumulated batches absorb the "
             "routing bursts, and under Gamma(0.1) arrivals the arrivals' own bursts limit 1 and "
             "8 frontends alike; the paper's 5-40% spans 1-37 models, this sweep has 4"),
    "5.1-a": ("worst: 8 frontends cost 0-10% on the 1080Ti zoo and 53-96% on the A100 zoo, "
              "whose SLOs near 2x the batch-1 latency leave no room for the burstier per-GPU "
              "arrivals; Nexus's goodput there is its worst model's few hundred req/s (row "
              "5.1-all). aggregate: 3-37% on four of the six sets, within the paper's range, "
              "but 80% (1080Ti) and 90% (A100) on beta/alpha < 2, where 8 frontends leave "
              "Nexus 635 and 568 req/s of 3,121 and 5,480"),
    "5.1-all-1080ti-nexus": ("worst: " + _NEXUS_ZOO + ". aggregate: 1.47x (Symphony "
                             "6,402, Nexus 4,353 req/s), just under the 1.5x that 2.0x less 25% "
                             "allows; on the A100 zoo the same rule gives 2.1x"),
    "5.1-all-a100-nexus": _SEE,
    "5.1-gt2-1080ti-nexus": _SEE,
    "5.1-gt2-a100-nexus": _SEE,
    "5.1-lt2-1080ti-nexus": _SEE,
    "5.1-lt2-a100-nexus": _SEE,
    "5.2.2-d": ("ResNet50 holds; on IRv2 the staggered ideal batch at SLO 70 ms is 8 "
                "(floor((70/1.125 - 18.368)/5.09)) and Symphony runs 64% of its requests in "
                "batches of 8 and 15% of 9 (78% at >= 8): 'larger than 8' exceeds the analytic "
                "best, so the paper's figure likely reads '8 or more'"),
    "5.2.2-e": ("servesim's Nexus reaches 88% / 81% of the uncoordinated throughput, and at that "
                "load a GPU's share (497 / 73 req/s) fills batches of 5.2 / 2.1 (44% of ResNet50's "
                "requests at >= 6, 33% of IRv2's at 3); batches above 6 and 3 need more than "
                "B_max/l(B_max) per GPU, i.e. a goodput at or above the uncoordinated reference, "
                "which servesim's Nexus does not reach before early drops pass 1%"),
    "5.2.2-f": ("IRv2 holds (48% of requests above 1, spread over sizes 2-6); on ResNet50 at SLO "
                "25 ms Clockwork's code constants (schedule_ahead 10 ms, buffer 5 ms) leave a "
                "batch 10 - l(b) ms to gather (3.9 ms for b = 1, 0.7 ms for b = 4), so 93% of its "
                "requests run alone: the code's behaviour, read in try_dequeue"),
    "5.3-a": ("Symphony and Nexus hold; Clockwork stays at its top: under overload every "
              "batch is its max_batch 16 (24 x 16 / l(16) = 17,518 req/s, exactly what it "
              "serves at 1.2x-2x) and each finishes on time, since emulated durations are the "
              "profile's (its predictions are exact); with the controller's and the host's "
              "measured costs (resnet10_controller.sweep.json, controller_cost/) its 5 infer "
              "threads keep up through 2x (91.6% busy at 35,000 req/s) and saturate only "
              "near 2.2x; what made the paper's Clockwork fall from 1x is not known"),
}
