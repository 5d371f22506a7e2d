#!/usr/bin/env bash
# Stages (git add) what a reader or a resumed grid needs of an experiment grid, for committing
# a long grid as it goes: the grid's table of finished runs (runs.jsonl: every finished run's
# config fingerprint, metrics, times, parameter counts and an injection's encoder fingerprint),
# its spec.json (and the specs it replaced, spec_history.jsonl), attempts.jsonl, configs/ and
# report files. The run directories stay out (.gitignore too): the table records what a finished
# run says, and research/results/README.md says how to regenerate a run's config or log. Nothing
# is committed.
#
#   bash research/scripts/stage_finished_runs.sh research/results/adapters_cpu/experiment
set -euo pipefail
cd "$(dirname "$0")/../.."
grid=${1:?usage: stage_finished_runs.sh EXPERIMENT_DIR}
for name in spec.json spec_history.jsonl attempts.jsonl runs.jsonl configs results.md runs.csv \
  paired.csv scores.png; do
  if [[ -e $grid/$name ]]; then git add -- "$grid/$name"; fi
done
