#!/usr/bin/env bash
# The GPU device check (README.md beside this file), on the GPU machine, as one command that ends
# within 9 minutes; the machine needs Python 3.12 with torch 2.11 and no network:
#
#   bash benchmarks/gpu/run.sh OUT        # writes OUT/device_check.json and OUT/run.log
#
# 1. installs benchmarks/gpu/kit/wheels (prepare.sh) into a scratch folder that shadows the
#    machine's packages, with stand-ins for the packages of absent.txt that the machine lacks;
# 2. writes a random-init BERT-base from kit/bert_base;
# 3. runs `pytest -m gpu` (tests/gpu: CUDA placement of every model family, fp32/fp16/bf16 step
#    losses, the distributed configs through `allennlp train`, NCCL, --recover after a kill);
# 4. measures tokens/s and MFU of the injection, GLUE and bare encoder steps of BERT-base at
#    batch 32 and 128, length 128 (benchmarks/gpu_benchmark.py);
# 5. the same for the injection and bare steps with the speed options (fused AdamW, compiled
#    encoders, CUDA graphs) at batch 100 (the paper's) and 256;
# 6. `allennlp train` of the injection config end to end at batch 100 and 256, as shipped and
#    with the options (fused AdamW, pinned batches), timed batch by batch by the trainer
#    (benchmarks/train_run_benchmark.py): wordpieces/s, MFU, peak memory.
# TFT_GPU_REHEARSAL=cpu runs it all on the CPU (small benchmark batches), to rehearse the kit.
set -uo pipefail
started=$SECONDS
cd "$(dirname "$0")/../.."
out=${1:?usage: bash benchmarks/gpu/run.sh OUTPUT_FOLDER}
mkdir -p "$out" && out=$(cd "$out" && pwd)
exec > >(tee "$out/run.log") 2>&1
python=${PYTHON:-python3}
kit=benchmarks/gpu/kit
scratch=$(mktemp -d)
site=$scratch/site
stand_ins=$scratch/stand_ins
rehearsal=${TFT_GPU_REHEARSAL:-}
step() { echo "== $(( SECONDS - started ))s: $*"; }

step "installing $(ls "$kit"/wheels/*.whl | wc -l) wheels into $site"
[ -d "$kit/wheels" ] || { echo "run.sh: no $kit/wheels: run benchmarks/gpu/prepare.sh first" >&2; exit 1; }
if "$python" -m pip --version >/dev/null 2>&1; then
  "$python" -m pip install --quiet --no-index --no-deps --no-compile --disable-pip-version-check \
    --target "$site" "$kit"/wheels/*.whl || exit 1
else  # a wheel is a zip of the installed files
  "$python" - "$site" "$kit"/wheels/*.whl <<'PY' || exit 1
import pathlib, shutil, sys, zipfile
site = pathlib.Path(sys.argv[1])
for wheel in sys.argv[2:]:
    zipfile.ZipFile(wheel).extractall(site)
for data in site.glob("*.data"):
    for part in ("purelib", "platlib"):
        if (data / part).is_dir():
            shutil.copytree(data / part, site, dirs_exist_ok=True)
PY
fi
mkdir -p "$stand_ins"
cp benchmarks/gpu/absent_package.py "$stand_ins/tft_absent_package.py"
for name in $(sed -e 's/#.*//' benchmarks/gpu/absent.txt); do
  if "$python" -c "import $name" 2>/dev/null; then
    echo "the machine has $name: using it"
  else
    mkdir -p "$stand_ins/$name"
    printf 'from tft_absent_package import stand_in\n\nstand_in(__name__)\n' > "$stand_ins/$name/__init__.py"
  fi
done
# The plugin's start-up hook, which pip would install as a .pth file in site-packages (the kit's
# folders are no site directories): the stack's host patches before anything imports AllenNLP.
# Without deferred imports (tft_allennlp_lazy), which would look for the real submodules of the
# stand-ins (boto3.dynamodb); start-up time is not measured here.
printf 'import tft_allennlp_autoload\n' > "$stand_ins/sitecustomize.py"
export PYTHONPATH="$site:$stand_ins:$PWD:$PWD/harness" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export TFT_LAZY_IMPORTS=0
export TOKENIZERS_PARALLELISM=false PYTHONDONTWRITEBYTECODE=1
"$python" - "$kit/tiny_bert" "$rehearsal" <<'PY' | tee "$scratch/environment.json" || exit 1
import json, platform, sys
import numpy, torch, transformers, allennlp.version, tft_allennlp
from transformers import AutoModel, AutoTokenizer
locked = [line.split("==")[1].split()[0] for line in open("requirements-py312.lock.txt")
          if line.startswith("transformers==")]
assert [transformers.__version__] == locked, f"the kit's transformers is shadowed: {transformers.__file__}"
cuda = torch.cuda.is_available()
if not cuda and sys.argv[2] != "cpu":
    sys.exit("run.sh: torch sees no CUDA device (TFT_GPU_REHEARSAL=cpu rehearses on the CPU)")
device = "cuda" if cuda else "cpu"
tokenizer, model = AutoTokenizer.from_pretrained(sys.argv[1]), AutoModel.from_pretrained(sys.argv[1])
batch = tokenizer(["a man is playing a flute"], return_tensors="pt").to(device)
assert model.to(device)(**batch).last_hidden_state.isfinite().all()
print(json.dumps({
    "device": torch.cuda.get_device_name(0) if cuda else "cpu",
    "capability": list(torch.cuda.get_device_capability(0)) if cuda else None,
    "python": platform.python_version(), "torch": torch.__version__,
    "cuda": torch.version.cuda, "nccl": list(torch.cuda.nccl.version()) if cuda else None,
    "transformers": transformers.__version__, "numpy": numpy.__version__,
    "allennlp": allennlp.version.VERSION,
}))
PY

step "writing a random-init BERT-base"
"$python" benchmarks/gpu/checkpoints.py weights "$kit/bert_base" "$scratch/bert_base" || exit 1

# Time limits that keep the whole run within 9 minutes on the GPU; the CPU rehearsal is slower.
limits=(240 110 140 100)
[ "$rehearsal" = cpu ] && limits=(3600 1800 1800 1800)

step "pytest -m gpu"
# SIGINT: pytest stops where it is and still writes its report.
TFT_GPU_REPORT="$scratch/report.jsonl" timeout -s INT -k 15 "${limits[0]}" "$python" -m pytest -m gpu tests/gpu \
  -p no:cacheprovider -q --durations=10 --junitxml="$scratch/pytest.xml"
pytest_status=$?

step "throughput and MFU of BERT-base"
if [ "$rehearsal" = cpu ]; then
  sizes=(--device cpu --batch-sizes 1 --steps 1 --warmup 0)
else
  sizes=(--batch-sizes 32 128 --steps 20 --warmup 5)
fi
timeout -k 15 "${limits[1]}" "$python" benchmarks/gpu_benchmark.py --model "$scratch/bert_base" --length 128 \
  "${sizes[@]}" --json "$scratch/benchmark.json"
benchmark_status=$?

step "the speed options: fused AdamW, compiled encoders, CUDA graphs"
if [ "$rehearsal" = cpu ]; then
  options=(--device cpu --batch-sizes 1 --steps 1 --warmup 1 --variants fused compiled --backend aot_eager)
else
  options=(--batch-sizes 100 256 --steps 20 --warmup 5 --variants fused compiled cudagraphs)
fi
# Each batch size is written as it finishes: a time limit keeps what was measured.
timeout -k 15 "${limits[2]}" "$python" benchmarks/gpu_benchmark.py --model "$scratch/bert_base" --length 128 \
  --sides injection bare "${options[@]}" --json "$scratch/options.json"
options_status=$?

step "allennlp train end to end: the injection config at batch 100 and 256"
if [ "$rehearsal" = cpu ]; then
  runs=(--device cpu --batch-sizes 2 --batches 2 --warmup 1)
else
  runs=(--batch-sizes 100 256 --batches 20 --warmup 5)
fi
# Each run is written as it finishes: a time limit keeps what was measured.
timeout -k 15 "${limits[3]}" "$python" benchmarks/train_run_benchmark.py --model "$scratch/bert_base" \
  --length 128 "${runs[@]}" --json "$scratch/train_run.json"
train_run_status=$?

step "writing $out/device_check.json"
"$python" - "$scratch" "$out/device_check.json" "$pytest_status" "$benchmark_status" \
  "$(( SECONDS - started ))" "$options_status" "$train_run_status" <<'PY'
import json, pathlib, sys
import xml.etree.ElementTree as ElementTree
scratch, path = pathlib.Path(sys.argv[1]), sys.argv[2]
pytest_status, benchmark_status, seconds = map(int, sys.argv[3:6])
def load(name):
    file = scratch / name
    return json.loads(file.read_text()) if file.exists() else None
tests = {"exit_status": pytest_status}
if (scratch / "pytest.xml").exists():
    suite = ElementTree.parse(scratch / "pytest.xml").getroot().find("testsuite")
    tests.update({key: int(suite.get(key)) for key in ("tests", "failures", "errors", "skipped")})
    tests["seconds"] = float(suite.get("time"))
    tests["not_passed"] = [
        f"{case.get('classname')}::{case.get('name')}" for case in suite.iter("testcase")
        if case.find("failure") is not None or case.find("error") is not None
    ]
report = scratch / "report.jsonl"
tracks = [json.loads(line) for line in report.read_text().splitlines()] if report.exists() else []
result = {
    "environment": load("environment.json"),
    "wall_seconds": seconds,
    "pytest": tests,
    "loss_tracks": tracks,
    "benchmark": dict(load("benchmark.json") or {}, exit_status=benchmark_status),
    "speed_options": dict(load("options.json") or {}, exit_status=int(sys.argv[6])),
    "train_run": dict(load("train_run.json") or {}, exit_status=int(sys.argv[7])),
}
pathlib.Path(path).write_text(json.dumps(result, indent=2) + "\n")
print(json.dumps({k: result[k] for k in ("wall_seconds", "pytest")}))
PY
rm -rf "$scratch"
step "done"
[ "$pytest_status" = 0 ] && [ "$benchmark_status" = 0 ]
