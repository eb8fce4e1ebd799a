#!/usr/bin/env bash
# Downloads public request traces into DIR for `servesim --trace-dir DIR` (needs internet and
# curl). Never run by the build or the tests: the repository ships no trace data.
#   scripts/download-traces.sh DIR [--azure-functions] [--wikimedia-day YYYYMMDD]
# Sources and licenses: traces/README.md.
set -euo pipefail
dir=${1:?usage: download-traces.sh DIR [--azure-functions] [--wikimedia-day YYYYMMDD]}
shift
azf=0
day=20140303
while [ $# -gt 0 ]; do
  case $1 in
    --azure-functions) azf=1 ;;
    --wikimedia-day) day=${2:?}; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
command -v curl > /dev/null || { echo "needs curl (apt-get install curl)" >&2; exit 2; }
mkdir -p "$dir/azure_llm_inference_2023" "$dir/wikimedia_projectcounts"
raw=https://raw.githubusercontent.com/Azure/AzurePublicDataset/master/data
for f in code conv; do
  curl -fL --retry 3 -o "$dir/azure_llm_inference_2023/AzureLLMInferenceTrace_$f.csv" \
    "$raw/AzureLLMInferenceTrace_$f.csv"
done
y=${day:0:4} m=${day:4:2}
for h in $(seq -w 0 23); do
  f=projectcounts-$day-${h}0000
  curl -fL --retry 3 -o "$dir/wikimedia_projectcounts/$f" \
    "https://dumps.wikimedia.org/other/pagecounts-raw/$y/$y-$m/$f" ||
    echo "warning: $f not found (some hours are named ${h}0001 etc.; check the listing)" >&2
done
if [ $azf = 1 ]; then
  mkdir -p "$dir/azure_functions_2019"
  curl -fL --retry 3 -o "$dir/azure_functions_2019/azurefunctions-dataset2019.tar.xz" \
    https://azurecloudpublicdataset2.blob.core.windows.net/azurepublicdatasetv2/azurefunctions_dataset2019/azurefunctions-dataset2019.tar.xz
  tar -C "$dir/azure_functions_2019" -xJf "$dir/azure_functions_2019/azurefunctions-dataset2019.tar.xz"
fi
echo "traces in $dir: use servesim run CONFIG --trace-dir $dir"
