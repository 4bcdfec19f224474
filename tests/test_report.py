"""The HTML report (issue 21, parts 4 and 5): ``tofusim report RUN_DIR`` and
``--report``, opened in headless Chromium (Debian's, driven by Playwright)
with the network cut off. Checks that the page draws without a console
error and fetches nothing, that the heat maps and the collective's
animation exist and follow their sliders and play button, and saves
screenshots (to a temporary directory, or to TOFUSIM_REPORT_SHOTS, e.g.
docs/img, to refresh the documentation's)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tofusim
from tofusim.report.network import Network, link_cells, node_cells

ROOT = Path(__file__).resolve().parents[1]
TOFUSIM = str(Path(sys.executable).parent / "tofusim")
CHROMIUM = "/usr/bin/chromium"

TORUS = """[network]
system = "bgl:4x4x4"
[workload]
pattern = "uniform"
load = 0.2
[run]
cycles = 6000
warmup = 1000
counter_period = 1000
"""

DRAGONFLY = """# every node of group i sends to group i + 1, Valiant routing
[network]
topology = "dragonfly"
form = "generic"
groups = 5
nodes_per_router = 1
routers_per_group = 4
global_links_per_router = 1
links_per_group_pair = 1
link_bandwidth = "5GB/s"
nic_bandwidth = "5GB/s"
[routing]
algorithm = "valiant"
[workload]
pattern = "group-shift"
load = 0.6
[run]
cycles = 20000
warmup = 4000
"""


def tofusim_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([TOFUSIM, *args], capture_output=True, text=True, timeout=300, cwd=ROOT)


def ok(p: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert p.returncode == 0, p.stderr
    return p


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("report")


@pytest.fixture(scope="module")
def torus_dir(work) -> Path:
    (work / "torus.toml").write_text(TORUS)
    ok(tofusim_cli("run", str(work / "torus.toml"), "--out", str(work / "torus"), "--report"))
    return work / "torus"


@pytest.fixture(scope="module")
def dragonfly_dir(work) -> Path:
    (work / "dragonfly.toml").write_text(DRAGONFLY)
    ok(tofusim_cli("run", str(work / "dragonfly.toml"), "--out", str(work / "dragonfly"), "--counter-period", "2000", "--report"))
    return work / "dragonfly"


@pytest.fixture(scope="module")
def collective_dir(work) -> Path:
    ok(tofusim_cli("coll", "bcast", "--algo", "binomial", "--size", "16KiB", "--system", "bgl:8x8x1", "--counter-period", "2000",
                   "--out", str(work / "coll"), "--report"))
    return work / "coll"


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    d = os.environ.get("TOFUSIM_REPORT_SHOTS")
    return Path(d) if d else tmp_path_factory.mktemp("report-shots")


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: make install installs it"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield b
        b.close()


class Report:
    """A report open in Chromium with every request leaving the file refused."""

    def __init__(self, browser, path: Path) -> None:
        self.errors: list[str] = []
        self.fetched: list[str] = []
        self.page = browser.new_page(viewport={"width": 1300, "height": 950})
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

        def refuse(route):
            self.fetched.append(route.request.url)
            route.abort()

        self.page.route(lambda url: not url.startswith("file:"), refuse)
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_function("() => window.Plotly && document.querySelectorAll('.js-plotly-plot .main-svg').length > 0")

    def traces(self, fig: str) -> list[dict]:
        """Type, visibility and the values drawn (NaN as None) of every trace of figure ``fig``."""
        return self.page.evaluate("""(id) => document.getElementById(id)._fullData.map(t => ({
            type: t.type, visible: t.visible === true,
            z: t.z ? Array.from(t.z, row => Array.from(row, v => Number.isFinite(v) ? v : null)) : null}))""", f"fig-{fig}")

    def drawn(self, fig: str) -> np.ndarray:
        """The values of the visible traces of ``fig``, flattened (NaN where no cell)."""
        z = [t["z"] for t in self.traces(fig) if t["visible"]]
        return np.array([np.nan if v is None else v for grid in z for row in grid for v in row], dtype=float)

    def lines(self, fig: str) -> dict[str, tuple[list, list]]:
        """Name, x and y of every line of figure ``fig``."""
        return {t["name"]: (t["x"], t["y"]) for t in self.page.evaluate(
            "(id) => document.getElementById(id)._fullData.map(t => ({name: t.name, x: Array.from(t.x), y: Array.from(t.y)}))", f"fig-{fig}")}

    def current(self, fig: str, slider: int) -> str:
        """The slider's current value, as it shows it above its rail."""
        return self.page.locator(f"#fig-{fig} .slider-group").nth(slider).locator("text.slider-label").first.text_content()

    def slide(self, fig: str, slider: int, fraction: float) -> None:
        """Clicks slider ``slider`` of ``fig`` at ``fraction`` of its rail, as a user would."""
        rail = self.page.locator(f"#fig-{fig} .slider-group").nth(slider).locator(".slider-rail-touch-rect")
        rail.scroll_into_view_if_needed()
        box = rail.bounding_box()
        self.page.mouse.click(box["x"] + 8 + fraction * (box["width"] - 16), box["y"] + box["height"] / 2)
        self.page.wait_for_timeout(150)

    def shoot(self, selector: str, path: Path) -> None:
        self.page.locator(selector).screenshot(path=str(path))

    def clean(self) -> None:
        assert self.errors == [], self.errors
        assert self.fetched == [], f"the report fetched {self.fetched}"


def test_a_torus_run_report_draws_offline_and_its_heat_map_follows_both_sliders(browser, torus_dir, shots):
    r = Report(browser, torus_dir / "report.html")
    ids = r.page.evaluate("() => Array.from(document.querySelectorAll('section'), s => s.id)")
    assert ids == ["limits", "summary", "latency", "throughput", "heatmap", "hottest", "buffers"]
    assert r.page.locator("section#limits .note").count() == 0
    assert r.page.locator("section#limits p.lead").inner_text().startswith(("Limited by", "No resource is saturated"))
    assert r.page.locator("section#heatmap .note").count() == 0
    # Four z planes of a 4x4x4 torus, one shown; 8x8 cells (nodes and the links between them).
    traces = r.traces("heatmap")
    assert [t["type"] for t in traces] == ["heatmap"] * 4
    assert [t["visible"] for t in traces] == [True, False, False, False]
    assert np.array(traces[0]["z"], dtype=float).shape == (8, 8)
    whole = r.drawn("heatmap")
    assert r.current("heatmap", 0).startswith("time: whole window")
    # The colour scale ends at the busiest link (light loads still show),
    # and no link is busier than the time that passed.
    cmax = r.page.evaluate("() => document.getElementById('fig-heatmap')._fullLayout.coloraxis.cmax")
    assert np.nanmax(whole) <= cmax <= 1.0
    # Hovering the cell between nodes (0,0,0) and (1,0,0) names the link's two directions.
    image = r.page.locator("#fig-heatmap .heatmaplayer image").first
    image.scroll_into_view_if_needed()
    box = image.bounding_box()
    r.page.mouse.move(box["x"] + box["width"] * 1.5 / 8, box["y"] + box["height"] * 7.5 / 8)
    r.page.wait_for_selector("#fig-heatmap .hovertext")
    hover = r.page.locator("#fig-heatmap .hovertext").first.text_content()
    assert "(0,0,0) x+ → (1,0,0)" in hover and "(1,0,0) x- → (0,0,0)" in hover and "utilisation" in hover
    r.page.mouse.move(0, 0)
    r.shoot("section#heatmap", shots / "report-torus-heatmap.png")
    before = r.page.locator("#fig-heatmap .heatmaplayer").screenshot()
    r.slide("heatmap", 0, 1.0)
    # The last interval between two samples (the engine samples before the run's end at 6,000).
    assert r.current("heatmap", 0).startswith("time: cycles 4,000–5,000")
    last = r.drawn("heatmap")
    assert not np.allclose(np.nan_to_num(whole), np.nan_to_num(last))
    assert r.page.locator("#fig-heatmap .heatmaplayer").screenshot() != before
    r.slide("heatmap", 1, 1.0)
    assert r.current("heatmap", 1) == "plane z: z=3"
    assert [t["visible"] for t in r.traces("heatmap")] == [False, False, False, True]
    # The utilisation drawn is the counters': the busiest link of the whole window is the table's first.
    top = float(r.page.locator("section#hottest table.data").first.locator("tbody tr").first.locator("td").nth(6).inner_text())
    r.slide("heatmap", 0, 0.0)
    busiest = []
    for k in range(4):
        r.slide("heatmap", 1, k / 3)
        busiest.append(np.nanmax(r.drawn("heatmap")))
    assert max(busiest) == pytest.approx(top, abs=1e-3)
    r.page.evaluate("window.scrollTo(0, 0)")
    r.page.screenshot(path=str(shots / "report-overview.png"))
    r.clean()


def test_a_dragonfly_report_shows_its_groups_and_global_link_matrix(browser, dragonfly_dir, shots):
    r = Report(browser, dragonfly_dir / "report.html")
    titles = r.page.locator("#fig-heatmap .annotation-text").all_text_contents()
    assert "local links by router" in titles and "global links: group → group" in titles
    traces = r.traces("heatmap")
    assert [t["visible"] for t in traces] == [True, True]
    groups, matrix = (np.array(t["z"], dtype=float) for t in traces)
    assert groups.shape == (5, 4) and matrix.shape == (5, 5)
    # Group-shift traffic with Valiant routing loads global links, and no
    # group has a global link to itself.
    assert np.nanmax(matrix) > 0.5 and np.isnan(np.diag(matrix)).all()
    before = r.drawn("heatmap")
    r.slide("heatmap", 0, 0.5)
    assert r.current("heatmap", 0).startswith("time: cycles")
    assert not np.allclose(np.nan_to_num(before), np.nan_to_num(r.drawn("heatmap")))
    r.shoot("section#heatmap", shots / "report-dragonfly-heatmap.png")
    r.clean()


def test_the_vc_buffers_section_draws_the_vc_samples(browser, dragonfly_dir, shots):
    """The per-VC samples (vc_samples.parquet) in the report, checked
    against the file: the buffers' mean fill per VC and sample, the VC
    buffers full at the most samples, which VCs of each stalled port were
    full, and the VCs of the port that stalled most over time."""
    import pandas as pd
    import pyarrow.parquet as pq

    vcs = pd.read_parquet(dragonfly_dir / "vc_samples.parquet")
    # The whole window's counters (the last sample comes before the run's end).
    ports = pd.read_csv(dragonfly_dir / "ports.csv")
    cap = int(pq.read_schema(dragonfly_dir / "vc_samples.parquet").metadata[b"vc_buffer_chunks"])
    samples = vcs["cycle"].nunique()
    # The dragonfly's three escape VCs (hop classes) are three VCs in the file,
    # named as the static deadlock check names them.
    classes = ["escape-class-0.0", "escape-class-1.0", "escape-class-2.0"]
    assert sorted(vcs["vc"].unique()) == classes
    assert not vcs.duplicated(["cycle", "router", "port", "vc"]).any()
    r = Report(browser, dragonfly_dir / "report.html")
    assert r.page.locator("section#buffers .note").count() == 0
    fill = r.lines("vc-fill")
    assert sorted(fill) == classes
    mean = vcs.groupby(["vc", "cycle"], observed=True)["held_chunks"].mean() / cap
    for vc, (x, y) in fill.items():
        assert x == sorted(vcs["cycle"].unique()) and y == pytest.approx(mean[vc].to_numpy(), rel=1e-6)
    # The table's first row: the VC buffer full at the most samples.
    full = (vcs.assign(full=vcs["held_chunks"] >= cap).groupby(["router", "port", "vc"], observed=True)["full"].sum())
    assert full.max() > 0
    head = r.page.locator("section#buffers table.data tbody tr").first.locator("td").all_inner_texts()
    assert int(head[4]) == full.max() and head[3] in {vc for (_, _, vc), n in full.items() if n == full.max()}
    # The stalled ports' table names the full VCs of its first port, the one that stalled most.
    worst = ports.loc[ports["depleted_cycles"].idxmax()]
    stalled = r.page.locator("section#hottest table.data").nth(1).locator("tbody tr").first.locator("td").all_inner_texts()
    assert int(stalled[8].replace(",", "")) == worst["depleted_cycles"] and stalled[1] == worst["port"]
    mine = vcs[(vcs["router"] == worst["router"]) & (vcs["port"] == worst["port"])]
    expected = {vc: n / samples for vc, n in mine.groupby("vc", observed=True)["held_chunks"].apply(lambda h: int((h >= cap).sum())).items() if n}
    named = dict(part.rsplit(" ", 1) for part in stalled[9].split(", ")) if stalled[9] else {}
    assert {vc: float(s) for vc, s in named.items()} == pytest.approx(expected, abs=0.005)
    # That port's VCs over time, as the file has them.
    held = r.lines("vc-port")
    assert sorted(held) == classes
    for vc, (x, y) in held.items():
        assert y == mine[mine["vc"] == vc].sort_values("cycle")["held_chunks"].tolist()
    r.shoot("section#buffers", shots / "report-vc-buffers.png")
    r.clean()


def test_a_collectives_report_animates_its_schedule(browser, collective_dir, shots):
    assert (collective_dir / "steps.parquet").exists()
    r = Report(browser, collective_dir / "report.html")
    ids = r.page.evaluate("() => Array.from(document.querySelectorAll('section'), s => s.id)")
    assert ids == ["limits", "summary", "latency", "throughput", "heatmap", "hottest", "buffers", "progress"]
    assert "critical path" in r.page.locator("section#limits").inner_text().lower()
    assert r.page.locator("section .note").count() == 0
    # A binomial broadcast from node 0 of an 8x8 torus: the page opens where
    # half of all steps have finished (not on the empty first frame); the
    # animation starts with nothing received and ends with every node but
    # the root (which receives nothing: no cell) holding all its bytes, and
    # every step finished.
    traces = r.traces("animation")
    assert [t["visible"] for t in traces] == [True, True] and np.array(traces[0]["z"], dtype=float).shape == (8, 8)
    assert 0 < np.nanmean(np.array(traces[1]["z"], dtype=float)) < 1
    r.slide("animation", 0, 0.0)
    assert np.nanmax(r.drawn("animation")) == 0
    r.slide("animation", 0, 1.0)
    received, finished = (np.array(t["z"], dtype=float) for t in r.traces("animation"))
    assert np.isnan(received[0, 0]) and (np.delete(received.ravel(), 0) == 1).all() and (finished == 1).all()
    r.slide("animation", 0, 0.6)
    received = np.array(r.traces("animation")[0]["z"], dtype=float)
    assert 0 < np.nanmean(received) < 1
    r.shoot("section#progress", shots / "report-collective-progress.png")
    # Play runs the frames on from where the slider is.
    r.slide("animation", 0, 0.0)
    r.page.locator("#fig-animation .updatemenu-button").first.click()
    r.page.wait_for_function("() => document.querySelector('#fig-animation .slider-group text.slider-label').textContent !== 'time: cycle 0 (0.00 µs)'",
                             timeout=10000)
    r.page.locator("#fig-animation .updatemenu-button").nth(1).click()
    assert np.nanmean(r.drawn("animation")) > 0
    r.clean()


def test_counter_samples_agree_with_the_engines_own_time_series(torus_dir):
    """The report's utilisation per interval, from the per-port counter
    samples, averaged over the links, is the run's time series of link
    utilisation (both every 1,000 cycles), apart from the wire time of
    packets still sending at a sample, which the report moves into the next
    interval (the engine counts it at the grant): no link above 100%."""
    import json

    import pandas as pd

    from tofusim.report import activity

    r = json.loads((torus_dir / "results.json").read_text())
    end, mean, busiest = activity.over_time(pd.read_parquet(torus_dir / "port_samples.parquet"), r["warmup_cycles"])
    series = {s["cycle"]: s["link_utilization"] for s in r["timeseries"]}
    assert len(end) == 4 and all(series[int(c)] == pytest.approx(m, rel=0.02) for c, m in zip(end, mean))
    assert (busiest >= mean).all() and (busiest <= 1.0 + 1e-12).all()


def test_busy_time_is_placed_on_the_wire_never_above_the_elapsed_time():
    import numpy as np

    from tofusim.report.activity import on_the_wire

    # Cumulative busy cycles counted at the grant (one link sends 2 cycles
    # past the first sample, 6 past the third), and the elapsed cycles.
    placed = on_the_wire(np.array([[12.0, 5.0], [15.0, 15.0], [31.0, 20.0]]), np.array([10.0, 20.0, 30.0]))
    assert placed.tolist() == [[10.0, 5.0], [15.0, 15.0], [25.0, 20.0]]


def test_report_refuses_what_is_not_a_run_directory(tmp_path):
    for target, expected in ((tmp_path / "nope", "no such directory"), (tmp_path, "not a tofusim output directory")):
        p = tofusim_cli("report", str(target))
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and expected in p.stderr, p.stderr
        # One validation layer: the API raises the same message.
        with pytest.raises(tofusim.ConfigError) as e:
            tofusim.write_report(target)
        assert p.stderr.strip() == f"tofusim: error: {e.value}"
    (tmp_path / "results.json").write_text("{not json")
    p = tofusim_cli("report", str(tmp_path))
    assert p.returncode == 2 and "results.json" in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_report_without_out_writes_into_a_named_directory_of_the_working_directory(tmp_path):
    """One rule for every command: --out DIR, else a directory named after
    the command and its input, in the working directory; an empty --out
    is refused."""
    (tmp_path / "t.toml").write_text(TORUS)
    for args, name in ((("run", "t.toml"), "run-t"), (("coll", "allreduce", "--algo", "ring", "--system", "bgl:2x2x2"), "coll-allreduce-bgl-2x2x2")):
        p = subprocess.run([TOFUSIM, *args, "--report"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        assert f"writing into {name}/" in p.stderr and (tmp_path / name / "report.html").is_file(), (args, p.stderr)
    p = tofusim_cli("coll", "allreduce", "--algo", "ring", "--system", "bgl:2x2x2", "--out", "")
    assert p.returncode == 2 and "--out" in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_report_out_option_and_the_python_api(torus_dir, tmp_path):
    p = ok(tofusim_cli("report", str(torus_dir), "--out", str(tmp_path / "r.html")))
    assert (tmp_path / "r.html").stat().st_size > 1_000_000 and "r.html" in p.stdout
    assert tofusim.write_report(torus_dir, tmp_path / "api.html") == tmp_path / "api.html"
    with pytest.raises(tofusim.ConfigError, match="does not exist"):
        tofusim.write_report(torus_dir, tmp_path / "missing" / "r.html")
    p = tofusim_cli("report", str(torus_dir), "--out", str(tmp_path))
    assert p.returncode == 2 and "is a directory" in p.stderr
    # Physical units (issue 36): latency and the time axes in µs beside cycles.
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    # (plotly writes the figures' µ as \u00b5)
    assert "latency (\\u00b5s; a cycle is" in html and "time (\\u00b5s; a cycle is" in html


def test_a_missing_input_becomes_a_note_naming_the_option(tmp_path):
    (tmp_path / "t.toml").write_text(TORUS.replace("counter_period = 1000\n", ""))
    # --out samples by default; --counter-period 0 turns it off.
    ok(tofusim_cli("run", str(tmp_path / "t.toml"), "--out", str(tmp_path / "plain"), "--counter-period", "0", "--report"))
    assert not (tmp_path / "plain" / "port_samples.parquet").exists()
    page = (tmp_path / "plain" / "report.html").read_text()
    # The final counters still give the whole window; the time slider needs samples.
    assert 'id="fig-heatmap"' in page and "run.counter_period" in page
    (tmp_path / "plain" / "ports.csv").unlink()
    ok(tofusim_cli("report", str(tmp_path / "plain")))
    page = (tmp_path / "plain" / "report.html").read_text()
    assert 'id="fig-heatmap"' not in page and "No per-port counters in this directory" in page
    ok(tofusim_cli("coll", "allreduce", "--algo", "ring", "--size", "1KiB", "--system", "bgl:2x2x2", "--counter-period", "0", "--out", str(tmp_path / "c")))
    (tmp_path / "c" / "steps.parquet").unlink()
    ok(tofusim_cli("report", str(tmp_path / "c")))
    page = (tmp_path / "c" / "report.html").read_text()
    assert "No step times in this directory: run tofusim coll with --out DIR" in page and "--counter-period CYCLES --out DIR" in page
    ok(tofusim_cli("coll", "allreduce", "--algo", "ring", "--size", "1KiB", "--system", "bgl:2x2x2", "--model", "flow",
                   "--out", str(tmp_path / "f"), "--report"))
    page = (tmp_path / "f" / "report.html").read_text()
    assert page.count("The flow model has no packets, port counters or step times: run tofusim coll with --model packet") == 6


def test_sweep_collective_sweep_and_reproduction_reports(tmp_path):
    (tmp_path / "t.toml").write_text(TORUS.replace("counter_period = 1000\n", ""))
    ok(tofusim_cli("sweep", str(tmp_path / "t.toml"), "--vary", "workload.load=0.1,0.5", "--out", str(tmp_path / "sw"), "--report"))
    page = (tmp_path / "sw" / "report.html").read_text()
    assert 'id="fig-sweep"' in page and "workload.load = 0.1, 0.5" in page
    ok(tofusim_cli("coll", "allreduce", "--algo", "ring,recursive-doubling", "--size", "1KiB:2KiB", "--system", "bgl:2x2x2",
                   "--out", str(tmp_path / "cs"), "--report"))
    assert 'id="fig-coll-sweep"' in (tmp_path / "cs" / "report.html").read_text()
    ok(tofusim_cli("reproduce", "k-mpi", "--out", str(tmp_path / "rp"), "--report"))
    page = (tmp_path / "rp" / "report.html").read_text()
    assert 'id="fig-case-0-plot-0"' in page and "k-mpi" in page
    # A directory holding a sweep and a case: the case is reported too,
    # after the sweep's own sections, not dropped.
    (tmp_path / "sw" / "k-mpi.json").write_text((tmp_path / "rp" / "k-mpi.json").read_text())
    ok(tofusim_cli("report", str(tmp_path / "sw")))
    page = (tmp_path / "sw" / "report.html").read_text()
    assert 'id="fig-sweep"' in page and "Reproduction cases: Summary" in page and "k-mpi" in page


def test_a_replay_report_has_its_ranks_and_links(tmp_path):
    ok(tofusim_cli("trace", "synth", "--out", str(tmp_path / "trace"), "--ranks", "8", "--iterations", "3", "--halo-bytes", "4096"))
    ok(tofusim_cli("replay", str(tmp_path / "trace"), "--system", "bgl:2x2x2", "--counter-period", "1000", "--out", str(tmp_path / "r"),
                   "--report"))
    page = (tmp_path / "r" / "report.html").read_text()
    for fig in ("per-rank", "latency", "utilisation-over-time", "heatmap"):
        assert f'id="fig-{fig}"' in page, fig
    assert 'class="note"' not in page
    ok(tofusim_cli("replay", str(tmp_path / "trace"), "--system", "bgl:2x2x2", "--model", "flow", "--out", str(tmp_path / "f"), "--report"))
    page = (tmp_path / "f" / "report.html").read_text()
    assert 'id="fig-per-rank"' in page and "replay with --model packet --counter-period CYCLES --out DIR" in page


def test_layouts_place_every_link_where_the_topology_has_it():
    # A torus: each in-plane link cell holds the two directions of one link.
    net = Network.of_system("bgl:4x4x4")
    cm = link_cells(net)
    assert len(cm.planes) == 4 and (cm.cell >= 0).all()
    counts = np.bincount(cm.cell, minlength=cm.cells)
    rows, cols = cm.panels[0].rows, cm.panels[0].cols
    grid = counts.reshape(4, rows, cols)
    assert (grid[:, 0::2, 1::2] == 2).all() and (grid[:, 1::2, 0::2] == 2).all()  # x and y links
    assert (grid[:, 0::2, 0::2] == 2).all() and (grid[:, 1::2, 1::2] == 0).all()  # z+ and z- at the node; no cell between four
    # Tofu: XYZ and ABC panels; every node has its own cell, planes are Z.
    net = Network.of_system("k:2x2x2")
    cm = link_cells(net)
    assert [p.title for p in cm.panels] == ["XYZ links", "ABC links"] and cm.planes == ["z=0", "z=1"] and (cm.cell >= 0).all()
    nodes = node_cells(net)
    assert len(set(nodes.cell.tolist())) == net.nodes == 96
    # A fat-tree: up rows hold up links, each switch's own.
    net = Network.of_toml('[network]\ntopology = "fattree"\nk = 4\nlevels = 3\nlink_bandwidth = "12.5GB/s"\n', "ft.toml")
    cm = link_cells(net)
    assert [t for t in cm.panels[0].y_ticks[1]] == ["level 0 up", "level 1 down", "level 1 up", "level 2 down"]
    assert (cm.cell >= 0).all() and len(node_cells(net).cell) == net.nodes


JSON_VALUES = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=False), st.text(max_size=5)),
                           lambda v: st.one_of(st.lists(v, max_size=3), st.dictionaries(st.text(max_size=5), v, max_size=3)), max_leaves=6)


@settings(max_examples=int(os.environ.get("TOFUSIM_FUZZ_EXAMPLES", "25")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_a_damaged_run_directory_is_refused_in_one_line_or_reported(torus_dir, collective_dir, tmp_path_factory, data):
    """Every file of a run directory edited or damaged after the command
    wrote it: the report is written (a section may become a note) or
    refused in one line; never a traceback."""
    import json
    import shutil

    from tofusim.cli import main

    source = data.draw(st.sampled_from([torus_dir, collective_dir]))
    d = tmp_path_factory.mktemp("damaged") / "run"
    shutil.copytree(source, d)
    name = data.draw(st.sampled_from(sorted(p.name for p in d.iterdir() if p.suffix in (".json", ".parquet", ".csv", ".toml"))))
    how = data.draw(st.sampled_from(["bytes", "json", "key", "delete"]))
    target = d / name
    if how == "bytes":
        target.write_bytes(data.draw(st.binary(max_size=64)))
    elif how == "delete":
        target.unlink()
    elif how == "json" or target.suffix != ".json":
        target.write_text(json.dumps(data.draw(JSON_VALUES)))
    else:
        doc = json.loads(target.read_text())
        path = [data.draw(st.sampled_from(sorted(doc)))]
        inner = doc[path[0]]
        if isinstance(inner, dict) and inner and data.draw(st.booleans()):
            path.append(data.draw(st.sampled_from(sorted(inner))))
            inner[path[1]] = data.draw(JSON_VALUES)
        else:
            doc[path[0]] = data.draw(JSON_VALUES)
        target.write_text(json.dumps(doc))
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["report", str(d)])
    assert code in (0, 2), (name, how, err.getvalue())
    if code == 2:
        assert err.getvalue().count("\n") == 1 and "Traceback" not in err.getvalue(), err.getvalue()
