#!/usr/bin/env bash
# report.sh DB [--readme README.md] — DynamoML's reference table and every finding of the
# spec (finding | servesim | holds? | why not) from the reference and sensitivity sweeps in
# DB; report.py here does the work (README.md here says how DB is made).
exec python3 "$(dirname "$0")/report.py" "$@"
