#!/usr/bin/env bash
# The layering test (ctest layers.*): the tree obeys docs/architecture.md's include rule, and
# check_includes.sh does catch each kind of violation, naming file and line (and a cycle
# between folders, naming an include each way).
#   test_layers.sh tree SRC       the real tree is clean
#   test_layers.sh catches SRC    a made-up tree with one violation of each kind fails
set -uo pipefail
case=$1 src=$2
check=$src/tests/layers/check_includes.sh
fail() { echo "FAIL: $*"; exit 1; }
case $case in
tree)
  out=$(bash "$check" "$src") || fail "the tree breaks the layering:"$'\n'"$out"
  echo "$out" ;;
catches)
  t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
  mkdir -p "$t"/{sim/util,policies,workloads,experiments/src,calibrate,traces,plots,tests}
  touch "$t"/sim/util/sim_json.h "$t"/sim/util/sim_err.h "$t"/policies/policy.h \
        "$t"/experiments/src/sim_config.h "$t"/workloads/wl_zoo.h
  printf '#include "sim.h"\n' > "$t"/sim/sim_ok.c
  printf '#include "sim_err.h"\n#include "policy.h"\n' > "$t"/sim/sim.h
  printf '/* x */\n#include "../policies/policy.h"\n' > "$t"/sim/sim_rel.c
  printf '#include <cjson/cJSON.h>\n#include "sim_json.h"\n' > "$t"/sim/sim_json_use.c
  printf '#include "sim.h"\n#include "sim_config.h"\n' > "$t"/workloads/wl_up.c
  printf '#include "wl_zoo.h"\n' > "$t"/calibrate/cal_net.c
  printf '#include "nowhere.h"\n' > "$t"/plots/plot.c
  touch "$t"/plots/plot.h              # the servesim command (tools) draws figures, and a
  printf '#include "plot.h"\n' > "$t"/experiments/src/sim_cli.c    # figure reads the
  printf '#include "sim_config.h"\n' > "$t"/plots/plot_up.c         # experiment layer: a cycle
  out=$(bash "$check" "$t"); rc=$?
  [ $rc = 1 ] || fail "exit $rc on a tree with violations (want 1):"$'\n'"$out"
  for want in 'sim/sim.h:2: includes "policy.h" (policies/policy.h, layer policies) from layer engine' \
              'sim/sim_rel.c:2: includes "../policies/policy.h" by a relative path' \
              'sim/sim_json_use.c:1: the engine includes <cjson/cJSON.h>' \
              'sim/sim_json_use.c:2: the engine includes sim_json.h' \
              'workloads/wl_up.c:2: includes "sim_config.h" (experiments/src/sim_config.h, layer experiment) from layer inputs' \
              'calibrate/cal_net.c:1: includes "wl_zoo.h" (workloads/wl_zoo.h, layer inputs) from layer cal' \
              'plots/plot.c:1: includes "nowhere.h", which is nowhere in the tree' \
              'plots/plot_up.c:1: includes "sim_config.h" (experiments/src/sim_config.h, layer experiment) from layer plots' \
              'folders experiments and plots include each other (a cycle): experiments/src/sim_cli.c:1 includes plots/plot.h; plots/plot_up.c:1 includes experiments/src/sim_config.h' \
              'check_includes: 10 include(s) break the layering'; do
    grep -qF "$want" <<<"$out" || fail "missing: $want"$'\n'"got:"$'\n'"$out"
  done
  grep -q 'sim_ok.c' <<<"$out" && fail "flagged a legal include:"$'\n'"$out"
  echo "every kind of violation caught with its file and line" ;;
*) fail "unknown case $case" ;;
esac
