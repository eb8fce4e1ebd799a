#!/usr/bin/env bash
# check_includes.sh ROOT — the layering rule of docs/architecture.md, read from the sources.
#
# Every #include "..." of every C source, header, CUDA file and CMake template under ROOT is
# resolved (relative paths against the including file's folder, bare names against the
# tree, where header names are unique) and the layer of the included file must be one the
# including file's layer may use. The CMake targets already stop most upward includes from
# compiling; this also catches relative paths and what include directories cannot express:
# the engine parses no JSON (no cJSON, no sim_json.h), and calibrate's measuring library
# stands on sim/util alone. Folders must not form a circle either: a folder holding files of
# two layers (experiments/src holds the experiment layer and the servesim command) could
# otherwise include a folder that includes it back (experiments <-> plots once did), so every
# include between two folders is an edge and any cycle among folders is refused.
# Prints file:line and what was wrong for each violation.
# Exit: 0 clean, 1 violations, 2 usage.
set -euo pipefail
root=${1:?usage: check_includes.sh ROOT}
cd "$root"

# the layer of a path (empty: not part of the layered build)
layer_of() {
  case $1 in
    sim/util/*) echo util ;;
    sim/*) echo engine ;;
    traces/*|workloads/*) echo inputs ;;
    policies/*) echo policies ;;
    experiments/src/sim_cli.c) echo tools ;;
    experiments/src/*) echo experiment ;;
    results/*) echo results ;;
    plots/*) echo plots ;;
    calibrate/cal_profile.*|calibrate/cal_validate.*|calibrate/cal_dec_cal.*|calibrate/cal_dec_serve.*|calibrate/cal_cli*) echo tools ;;
    calibrate/*) echo cal ;;
    tests/*) echo tests ;;
    *) echo "" ;;
  esac
}

# what each layer may include
declare -A may=(
  [util]="util"
  [engine]="util engine"
  [inputs]="util engine inputs"
  [policies]="util engine inputs policies"
  [results]="util engine results"
  [experiment]="util engine inputs policies results experiment"
  [plots]="util engine results plots"
  [cal]="util cal"
  [tools]="util engine inputs policies results experiment plots cal tools"
  [tests]="util engine inputs policies results experiment plots cal tools tests"
)

# the folder of a path, for the folder graph (sim/util is a folder of its own)
folder_of() {
  case $1 in
    sim/util/*) echo sim/util ;;
    */*) echo "${1%%/*}" ;;
  esac
}

mapfile -t files < <(find sim traces workloads policies results experiments plots calibrate tests \
  -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.c.in' \) 2>/dev/null | sort)
declare -A where=()
for f in "${files[@]}"; do
  b=${f##*/}
  if [ -n "${where[$b]:-}" ]; then
    where[$b]="${where[$b]} $f"
  else
    where[$b]=$f
  fi
done

bad=0
report() { echo "$1"; bad=$((bad + 1)); }
declare -A edge=()                   # "A B" -> the first include that makes folder A use B
for f in "${files[@]}"; do
  from=$(layer_of "$f")
  [ -n "$from" ] || continue
  while IFS=: read -r line rest; do
    sys=0
    if [[ $rest =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]]; then
      inc=${BASH_REMATCH[1]}
    elif [[ $rest =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\<([^\>]+)\> ]]; then
      inc=${BASH_REMATCH[1]}; sys=1
    else
      continue
    fi
    if [ $sys = 1 ]; then
      if [ "$from" = engine ] && [[ $inc == cjson/* || $inc == cJSON.h ]]; then
        report "$f:$line: the engine includes <$inc>: it parses no JSON (the experiment layer turns configs into a struct sim_world)"
      fi
      continue
    fi
    if [[ $inc == */* ]]; then           # a path: resolve it against the file's folder
      target=$(realpath -m --relative-to=. "$(dirname "$f")/$inc")
      if [ ! -e "$target" ]; then
        report "$f:$line: includes \"$inc\", which resolves to $target: no such file"
        continue
      fi
      report "$f:$line: includes \"$inc\" by a relative path: name the header alone (its layer's include directory provides it)"
    else
      target=${where[$inc]:-}
      if [ -z "$target" ]; then
        [[ $f == *.in ]] && continue     # templates may include generated headers
        report "$f:$line: includes \"$inc\", which is nowhere in the tree"
        continue
      fi
      if [[ $target == *" "* ]]; then
        report "$f:$line: includes \"$inc\", a name several files have ($target): rename one"
        continue
      fi
    fi
    fa=$(folder_of "$f") fb=$(folder_of "$target")
    if [ "$fa" != "$fb" ] && [ -z "${edge["$fa $fb"]:-}" ]; then
      edge["$fa $fb"]="$f:$line includes $target"
    fi
    to=$(layer_of "$target")
    [ -n "$to" ] || { report "$f:$line: includes $target, which belongs to no layer"; continue; }
    if [[ " ${may[$from]} " != *" $to "* ]]; then
      report "$f:$line: includes \"$inc\" ($target, layer $to) from layer $from, which may include only: ${may[$from]}"
    elif [ "$from" = engine ] && [ "${inc##*/}" = sim_json.h ]; then
      report "$f:$line: the engine includes sim_json.h: it parses no JSON (the experiment layer turns configs into a struct sim_world)"
    fi
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include' "$f" || true)
done
# folder cycles: two folders that include each other, then any longer loop (tsort finds it)
pairs=0
for k in "${!edge[@]}"; do
  read -r a b <<<"$k"
  if [ -n "${edge["$b $a"]:-}" ] && [[ $a < $b ]]; then
    report "folders $a and $b include each other (a cycle): ${edge[$k]}; ${edge["$b $a"]}"
    pairs=$((pairs + 1))
  fi
done
loop=$(for k in "${!edge[@]}"; do echo "$k"; done | tsort 2>&1 >/dev/null | sed -n 's/^tsort: \([^-].*\)$/\1/p' | grep -v 'input contains a loop' | paste -sd ' ' || true)
if [ -n "$loop" ] && [ $pairs -eq 0 ]; then
  report "the folders $loop include one another in a loop"
fi
if [ $bad -gt 0 ]; then
  echo "check_includes: $bad include(s) break the layering (docs/architecture.md)"
  exit 1
fi
echo "check_includes: ${#files[@]} files, every include within its layer or below, no folder cycle"
