#!/usr/bin/env bash
# The wheel a user installs: built with maturin (the compiled core, and the
# MPI tracer that `make tracer` put into python/tofusim/lib/), installed
# into a fresh virtualenv outside the repository, then the README tour's
# quick commands run from there. `make test` runs it (make test-wheel).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/tofusim-wheel.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$repo"
# The core links OTF2 (reading traces): the wheel expects the system's
# library (Debian: libopen-trace-format2), as the tracer expects Open MPI;
# `--auditwheel skip` because bundling it would patchelf cargo's own
# artefact in place (a hard link) and break the next build.
.venv/bin/maturin build --release --quiet --auditwheel skip --out "$work/dist" >/dev/null
wheel="$(ls "$work"/dist/tofusim-*.whl)"
echo "wheel: $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel"
cd "$work"
# Nothing of the repository on the path: the installed package only.
export PYTHONPATH=
tofusim="$work/venv/bin/tofusim"
"$work/venv/bin/python" - <<'PY'
import pathlib, tofusim
root = pathlib.Path(tofusim.__file__).parent
assert "site-packages" in str(root), root
assert (root / "lib" / "libtofusim_tracer.so").is_file(), "the wheel lacks the MPI tracer"
print("installed:", root)
PY
"$tofusim" topo k > "$work/topo.txt"
head -3 "$work/topo.txt"
cat > "$work/uniform.toml" <<'TOML'
[network]
system = "bgl:4x4x4"
[workload]
pattern = "uniform"
load = 0.2
[run]
cycles = 4000
warmup = 1000
seed = 1
TOML
"$tofusim" run "$work/uniform.toml" --json | "$work/venv/bin/python" -c 'import json, sys; r = json.load(sys.stdin); assert r["accepted_load"] > 0; print("run: accepted", round(r["accepted_load"], 4))'
"$tofusim" coll allreduce --algo ring --size 64KiB --system k:1x1x1 > "$work/coll.txt"
tail -2 "$work/coll.txt"
echo "wheel check: ok"
