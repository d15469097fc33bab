#!/usr/bin/env bash
# Runs the studies of docs/results.md (issue 5) one after the other, each with as many points at
# once as the machine has cores, into out/studies/<study>/ (study.csv, summary.json, a directory
# per point), and prints each study's summary table and wall time. Pass study names to run only
# those: scripts/run_studies.sh models_topk_dgx_h100 tile_size_nvl32
set -euo pipefail
cd "$(dirname "$0")/.."
studies=("$@")
if [ ${#studies[@]} -eq 0 ]; then
  studies=(models_topk_nvl32 models_topk_dgx_h100 gpu_count sequence_length_nvl32 routing_nvl32 tile_size_nvl32
           other_models replication_zipf replication_models replication_groups replication_broadcast
           replication_history)
fi
for study in "${studies[@]}"; do
  echo "== $study ($(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ))"
  start=$(date +%s)
  build/nvsvp study "configs/studies/$study.yaml" --jobs "$(nproc)" --out "out/studies/$study"
  echo "== $study: $(( $(date +%s) - start )) s"
done
