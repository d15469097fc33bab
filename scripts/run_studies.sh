#!/usr/bin/env bash
# Runs every study of configs/studies/ (the tables of docs/results.md) one after the other, each
# with as many points at once as the machine has cores, into out/studies/<study>/ (study.csv,
# summary.json, a directory per point), prints each study's summary table and wall time, and
# copies each study.csv to docs/study_results/<study>.csv, so the committed CSVs are what this
# script makes. Then the tables computed from the packet formats and from the studies' outputs
# (scripts/study_extra_tables.py) and the markdown tables of them all
# (scripts/study_tables.py, docs/study_results/tables.md). Pass study names to run only those:
#   scripts/run_studies.sh models_topk_dgx_h100 tile_size_nvl32
set -euo pipefail
cd "$(dirname "$0")/.."
studies=("$@")
if [ ${#studies[@]} -eq 0 ]; then
  for file in configs/studies/*.yaml; do studies+=("$(basename "$file" .yaml)"); done
fi
mkdir -p docs/study_results
for study in "${studies[@]}"; do
  jobs=$(nproc)
  # One point at a time where two of the study's largest points would not fit in memory together
  # (ccfuser at L-32 with 8192 tokens per GPU peaks near 16 GB: docs/performance.md).
  case $study in models_topk_nvl32|e2e_training_nvl32|e2e_inference_nvl32) jobs=1 ;; esac
  echo "== $study ($jobs of $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ))"
  start=$(date +%s)
  status=0
  build/nvsvp study "configs/studies/$study.yaml" --jobs "$jobs" --out "out/studies/$study" || status=$?
  echo "== $study: $(( $(date +%s) - start )) s, exit $status"
  cp "out/studies/$study/study.csv" "docs/study_results/$study.csv"
  case $study in
    link_utilisation_nvl32)
      scripts/study_extra_tables.py utilisation "out/studies/$study" > docs/study_results/link_utilisation_tenths.csv ;;
    models_topk_nvl32)
      scripts/study_extra_tables.py breakdown "out/studies/$study/study.csv" > docs/study_results/breakdown_models_topk_nvl32.csv ;;
  esac
done
# Payload efficiency against transfer size at 8 destinations, from the packet formats (no simulation).
build/nvsvp packet-efficiency configs/scenarios/default.yaml --set platform=gh200-nvl32 --targets 8 \
  > docs/study_results/payload_efficiency_8_destinations.csv
# The markdown tables of every study CSV (docs/results.md discusses them).
scripts/study_tables.py docs/study_results > docs/study_results/tables.md
