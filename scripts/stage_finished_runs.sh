#!/usr/bin/env bash
# Stages (git add) the small outputs of an experiment grid's finished runs, for committing a
# long grid as it goes: every file of each run directory that has metrics.json, except weights
# (*.th, model.tar.gz), injected encoders (encoder/) and locks, plus the grid's attempts.jsonl,
# configs/ and report files. Unfinished runs are left out; nothing is committed.
#
#   bash scripts/stage_finished_runs.sh results/adapters_cpu/experiment
set -euo pipefail
cd "$(dirname "$0")/.."
grid=${1:?usage: stage_finished_runs.sh EXPERIMENT_DIR}
find "$grid" -name metrics.json -print0 | while IFS= read -r -d '' metrics; do
  run=$(dirname "$metrics")
  find "$run" -type f ! -name '*.th' ! -name 'model.tar.gz' ! -name '*.lock' \
    ! -path '*/encoder/*' -print0 | xargs -0 -r git add --
done
for name in attempts.jsonl configs spec.json results.md runs.csv paired.csv scores.png; do
  if [[ -e $grid/$name ]]; then git add -- "$grid/$name"; fi
done
