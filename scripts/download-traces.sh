#!/usr/bin/env bash
# Downloads public request traces into DIR for `servesim --trace-dir DIR` (needs internet and
# curl). Never run by the build or the tests: the repository ships no trace data.
#   scripts/download-traces.sh DIR [--azure-functions]
# What it makes is what the shipped configs read (experiments/traces/):
#   DIR/azure_llm_inference_2023/AzureLLMInferenceTrace_{code,conv}.csv   azure_llm_conv.json
#   DIR/wikimedia_projectcounts/projectcounts-*   Wikimedia's hourly files of 2014-03-03..16
#   DIR/wikipedia_en_hourly/en_wikipedia_hourly_2014-03-03_to_2014-03-16.csv
#       the English Wikipedia's hourly requests built from those files (`hour_end_utc,requests`,
#       the hour that ends at the file's time): wikipedia_day.json, bench_wikipedia_24h.json
#   DIR/mooncake/{conversation,synthetic}_trace.jsonl   Mooncake's FAST'25 traces (3 and 1 MB):
#       experiments/llm/mooncake_conv_h100.json
#   DIR/azure_functions_2019/ (with --azure-functions): the Azure Functions 2019 day files
# A file already there is kept (a rerun downloads only what is missing; with every file there
# it needs no network). Sources and licenses: traces/README.md.
set -euo pipefail
dir=${1:?usage: download-traces.sh DIR [--azure-functions]}
shift
azf=0
while [ $# -gt 0 ]; do
  case $1 in
    --azure-functions) azf=1 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
# get URL FILE: downloads URL to FILE unless FILE is there already
get() {
  [ -s "$2" ] && return 0
  command -v curl > /dev/null || { echo "needs curl (apt-get install curl) for $1" >&2; exit 2; }
  curl -fL --retry 3 -o "$2.part" "$1" && mv "$2.part" "$2"
}
mkdir -p "$dir/azure_llm_inference_2023" "$dir/wikimedia_projectcounts" "$dir/wikipedia_en_hourly" \
  "$dir/mooncake"
raw=https://raw.githubusercontent.com/Azure/AzurePublicDataset/master/data
for f in code conv; do
  get "$raw/AzureLLMInferenceTrace_$f.csv" "$dir/azure_llm_inference_2023/AzureLLMInferenceTrace_$f.csv"
done
for f in conversation synthetic; do
  get "https://raw.githubusercontent.com/kvcache-ai/Mooncake/main/FAST25-release/traces/${f}_trace.jsonl" \
    "$dir/mooncake/${f}_trace.jsonl"
done

# Wikipedia: 336 hours, 2014-03-03 00:00 to 2014-03-17 00:00 UTC; a projectcounts file is
# named by the end of its hour (a few upstream are a second or two late: ...-010001)
csv="$dir/wikipedia_en_hourly/en_wikipedia_hourly_2014-03-03_to_2014-03-16.csv"
rows="hour_end_utc,requests"
for i in $(seq 1 336); do
  end=$(date -u -d "2014-03-03 00:00:00 UTC + $i hour" +%Y%m%d-%H%M%S)
  ymd=${end%%-*}
  found=
  for s in 0 1 2 3 4 5; do
    f="$dir/wikimedia_projectcounts/projectcounts-${end%??}0$s"
    if [ -s "$f" ] || get "https://dumps.wikimedia.org/other/pagecounts-raw/${ymd:0:4}/${ymd:0:4}-${ymd:4:2}/$(basename "$f")" "$f" 2> /dev/null; then
      found=$f
      break
    fi
  done
  [ -n "$found" ] || { echo "projectcounts for the hour ending $end: not found upstream" >&2; exit 1; }
  n=$(awk '$1 == "en" { print $3; exit }' "$found")
  [ -n "$n" ] || { echo "$found: no line for the project en" >&2; exit 1; }
  rows+=$'\n'"$(date -u -d "2014-03-03 00:00:00 UTC + $i hour" '+%Y-%m-%d %H:%M:%S'),$n"
done
printf '%s\n' "$rows" > "$csv.part" && mv "$csv.part" "$csv"

if [ $azf = 1 ]; then
  mkdir -p "$dir/azure_functions_2019"
  get https://azurecloudpublicdataset2.blob.core.windows.net/azurepublicdatasetv2/azurefunctions_dataset2019/azurefunctions-dataset2019.tar.xz \
    "$dir/azure_functions_2019/azurefunctions-dataset2019.tar.xz"
  tar -C "$dir/azure_functions_2019" -xJf "$dir/azure_functions_2019/azurefunctions-dataset2019.tar.xz"
fi
echo "traces in $dir: use servesim run CONFIG --trace-dir $dir (experiments/traces/)"
