"""The architecture holds: crates depend only on the layers below them
(docs/architecture.md's table), and no two modules of a crate import each other, even
through a third (a module is a top-level file or folder of `src/`; any
`crate::name` mention counts, doc links included)."""

import json
import re
import subprocess
from pathlib import Path

from conftest import ROOT

#: Layer of each crate, lowest first: a crate may depend only on lower layers.
LAYERS = {
    "tofusim-topology": 0,
    "tofusim-routing": 1,
    "tofusim-des": 1,
    "tofusim-packet": 2,
    "tofusim-flow": 2,
    "tofusim-comm": 3,
    "tofusim-mapping": 4,
    "tofusim-workload": 5,
    "tofusim-trace": 5,
    "tofusim-experiment": 6,
    "tofusim-py": 7,
}


def _packages() -> list[dict]:
    p = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"],
                       cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(p.stdout)["packages"]


def _modules(src: Path) -> dict[str, set[str]]:
    """Top-level module → the top-level modules it mentions."""
    g: dict[str, set[str]] = {}
    for f in src.rglob("*.rs"):
        top = f.relative_to(src).parts[0].removesuffix(".rs")
        if top in ("lib", "main"):
            continue
        g.setdefault(top, set()).update(re.findall(r"crate::(\w+)", f.read_text(errors="replace")))
    return {k: {v for v in vs if v in g and v != k} for k, vs in g.items()}


def _circles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def test_every_crate_has_a_layer():
    names = {p["name"] for p in _packages()}
    assert names == set(LAYERS), names ^ set(LAYERS)


def test_crates_depend_only_downward():
    pk = _packages()
    ours = {p["name"] for p in pk}
    upward = [
        f"{p['name']} (layer {LAYERS[p['name']]}) -> {d['name']} (layer {LAYERS[d['name']]})"
        for p in pk
        for d in p["dependencies"]
        if d["name"] in ours and d.get("kind") != "dev" and LAYERS[d["name"]] >= LAYERS[p["name"]]
    ]
    assert not upward, upward


def test_the_bindings_depend_on_the_experiment_crate_only():
    """Issue 36: tofusim-py converts values and maps errors; every request
    goes through tofusim-experiment's front doors."""
    pk = {p["name"]: p for p in _packages()}
    ours = {d["name"] for d in pk["tofusim-py"]["dependencies"] if d["name"] in LAYERS}
    assert ours == {"tofusim-experiment"}, ours
    src = ROOT / "crates" / "tofusim-py" / "src"
    other = [f"{f.name}: {m}" for f in src.rglob("*.rs")
             for m in set(re.findall(r"\btofusim_(?!experiment\b)\w+::", f.read_text()))]
    assert not other, other


def test_the_engine_knows_traffic_only_through_its_trait():
    pk = {p["name"]: p for p in _packages()}
    deps = {d["name"] for d in pk["tofusim-packet"]["dependencies"]}
    assert not deps & {"tofusim-workload", "tofusim-comm", "tofusim-experiment"}, deps


def test_no_import_circles_between_modules():
    circles = {}
    for p in _packages():
        src = Path(p["manifest_path"]).parent / "src"
        found = _circles(_modules(src))
        if found:
            circles[p["name"]] = found
    assert not circles, circles


def test_exit_codes_are_decided_in_one_place():
    """Issue 36: commands raise ConfigError, Interrupted or Failed; only
    tofusim.cli.main turns them (and SystemExit) into exit codes."""
    import re

    offenders = []
    for p in (ROOT / "python" / "tofusim").rglob("*.py"):
        if p.name == "__init__.py" and p.parent.name == "cli":
            continue
        text = p.read_text(encoding="utf-8")
        # (A module's own `sys.exit(main())` entry point, as mpi_run has, is its program's one place.)
        if re.search(r"raise SystemExit|sys\.exit\((?!main\(\)\))", text):
            offenders.append(str(p.relative_to(ROOT)))
    assert not offenders, offenders


#: The Python API's modules: the only ones that call the compiled core.
#: Everything else — the commands, the reproduction cases, the report, the
#: sweeps — goes through their public functions, so a command and a call
#: from Python take the same path and the same checks (issue 36).
API_MODULES = {"__init__.py", "api.py", "mapping.py", "comm.py", "schedule.py", "trace/__init__.py", "trace/replay.py"}


def test_only_the_api_modules_call_the_core():
    import ast

    offenders = []
    base = ROOT / "python" / "tofusim"
    for p in base.rglob("*.py"):
        rel = p.relative_to(base).as_posix()
        if rel in API_MODULES:
            continue
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            # Its types (ConfigError, SampleColumn) may be imported by name.
            if isinstance(node, ast.Name) and node.id == "_core":
                offenders.append(f"{rel}:{node.lineno}")
            elif isinstance(node, ast.ImportFrom) and any(a.name == "_core" for a in node.names):
                offenders.append(f"{rel}:{node.lineno}")
            elif isinstance(node, ast.Import) and any(a.name.endswith("._core") for a in node.names):
                offenders.append(f"{rel}:{node.lineno}")
    assert not offenders, offenders


def test_the_core_stub_matches_the_compiled_module():
    """`python/tofusim/_core.pyi` (what type checkers and readers see)
    names every function of the compiled core with its parameters, in
    order: a binding changed without its stub fails here."""
    import ast

    from tofusim import _core

    tree = ast.parse((ROOT / "python" / "tofusim" / "_core.pyi").read_text(encoding="utf-8"))
    stub = {n.name: [a.arg for a in n.args.args] for n in tree.body if isinstance(n, ast.FunctionDef)}
    real = {k: v for k, v in vars(_core).items() if callable(v) and not isinstance(v, type)}
    assert set(stub) == set(real), (sorted(set(real) - set(stub)), sorted(set(stub) - set(real)))
    def names(f):
        # The core's own text signature ("(procs, class)": a keyword as a
        # parameter name is no Python signature, the stub writes class_).
        text = f.__text_signature__.strip("()")
        return [p.split("=")[0].strip().lstrip("*") for p in text.split(",") if p.strip() and p.strip() not in ("/", "*", "$module")]

    differs = {k: (names(real[k]), stub[k]) for k in real if [n.rstrip("_") for n in names(real[k])] != [n.rstrip("_") for n in stub[k]]}
    assert not differs, differs
