#!/usr/bin/env python3
"""table2.py — the Symphony paper's Table 2 (section 3), a statistical simulation of
distributed dispatch: 100 backends fed round robin by 1 or by 25 frontends, each frontend's
arrivals Poisson (exponential gaps) at 1/F of the total rate, each with its own round-robin
pointer (started at a random backend). Counts the requests each backend receives per window
and prints the standard deviation of those counts, for windows holding on average 4, 8, 16
and 32 requests per backend. With one frontend a backend gets every 100th request (Erlang-100
gaps, nearly regular); with 25 the superposition of 25 such streams is close to Poisson, so
the spread of a backend's load per window grows several-fold — the burstiness that makes
Nexus's per-GPU batches overflow.

Deterministic (seeded); a pure function of its arguments. Output: TSV on stdout,
`frontends  mean_per_window  std  std_poisson` (std_poisson = sqrt(mean), the limit).

usage: table2.py [--backends 100] [--windows 2000] [--seed 1]
"""
import argparse
import math
import random


def per_window_std(backends, frontends, mean, windows, rng):
    """Std of per-backend request counts per window (all backends, all windows)."""
    rate = backends * mean              # requests per window, all frontends together
    counts = [[0] * windows for _ in range(backends)]
    for _ in range(frontends):
        t = 0.0
        ptr = rng.randrange(backends)
        while True:
            t += rng.expovariate(rate / frontends)
            w = int(t)
            if w >= windows:
                break
            counts[ptr][w] += 1
            ptr = (ptr + 1) % backends
    n = backends * windows
    s = sum(sum(c) for c in counts)
    s2 = sum(x * x for c in counts for x in c)
    m = s / n
    return math.sqrt(max(0.0, s2 / n - m * m))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backends", type=int, default=100)
    ap.add_argument("--windows", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    print("frontends\tmean_per_window\tstd\tstd_poisson")
    for mean in (4, 8, 16, 32):
        for f in (1, 25):
            rng = random.Random(a.seed * 1000003 + f * 101 + mean)
            sd = per_window_std(a.backends, f, mean, a.windows, rng)
            print(f"{f}\t{mean}\t{sd:.3f}\t{math.sqrt(mean):.3f}")


if __name__ == "__main__":
    main()
