#!/usr/bin/env bash
# Stages (git add) what a reader or a resumed grid needs of an experiment grid, for committing
# a long grid as it goes: per finished run (a directory with metrics.json) its config.json,
# metrics.json and, where written, parameter_counts.json, reused_from.json and
# encoder_fingerprint.json; and the grid's spec.json (and the specs it replaced,
# spec_history.jsonl), attempts.jsonl, configs/ and report files.
# Logs, per-epoch metrics, vocabularies, weights and encoders stay out (.gitignore too);
# results/README.md says how to regenerate a run's log. Unfinished runs are left out; nothing
# is committed.
#
#   bash scripts/stage_finished_runs.sh results/adapters_cpu/experiment
set -euo pipefail
cd "$(dirname "$0")/.."
grid=${1:?usage: stage_finished_runs.sh EXPERIMENT_DIR}
run_files=(config.json metrics.json parameter_counts.json reused_from.json encoder_fingerprint.json)
find "$grid" -name metrics.json -not -path '*/encoder/*' -print0 |
  while IFS= read -r -d '' metrics; do
    run=$(dirname "$metrics")
    for name in "${run_files[@]}"; do
      if [[ -e $run/$name ]]; then git add -- "$run/$name"; fi
    done
  done
for name in spec.json spec_history.jsonl attempts.jsonl configs results.md runs.csv paired.csv scores.png; do
  if [[ -e $grid/$name ]]; then git add -- "$grid/$name"; fi
done
