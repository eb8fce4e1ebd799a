#!/usr/bin/env bash
# report.sh DB [--readme README.md] — ROMA's Table 2, the spec's findings (finding | servesim |
# holds? | why not) and, with gpu_speed.sweep.json in DB, which findings hold in which GPU
# speed regime; report.py here does the work (README.md here says how DB is made).
exec python3 "$(dirname "$0")/report.py" "$@"
