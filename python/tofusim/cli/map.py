"""``tofusim map virtual``: virtual 1D/2D/3D torus rank maps on Tofu
regions, avoiding failed nodes ([S:003], [S:001]; docs/mapping.md)."""

from __future__ import annotations

import json

import click

from ..mapping import map_virtual
from .files import read_text, write_text


@click.group(name="map")
def map_() -> None:
    """Rank maps: where each rank of a job goes."""


@map_.command("virtual")
@click.option("--system", required=True, help="Tofu system, optionally resized: k, k:8x6x4, fugaku.")
@click.option("--shape", required=True, help="Virtual torus: 82944, 576x144, 54x48x32, rotated variants...")
@click.option("--region", help="Job region ORIGIN:SIZE in X,Y,Z (whole in A,B,C), e.g. 0,0,0:4x6x2 (default: the whole system).")
@click.option("--faults", "faults_file", help="Failed nodes (x,y,z,a,b,c per line) and links (NODE - NODE).")
@click.option("--out", "out", help="Write the rank map: one line per rank, 'rank node x y z a b c'.")
@click.option("--json", "as_json", is_flag=True)
def virtual(system: str, shape: str, region: str | None, faults_file: str | None, out: str | None, as_json: bool) -> None:
    """Map a virtual torus onto a Tofu region so that virtual neighbours are physical neighbours."""
    faults = read_text(faults_file, "fault list") if faults_file else None
    r = map_virtual(system, shape, region, faults, faults_file or "faults", bool(out))
    if out:
        nodes, coords = r.pop("node_of_rank"), r.pop("node_coords")
        head = f"# {system}: virtual torus {shape}; rank node x y z a b c ({r['mechanism']})\n"
        write_text(out, head + "".join(f"{i} {n} {' '.join(map(str, c))}\n" for i, (n, c) in enumerate(zip(nodes, coords))), "rank map")
        r["out"] = out
    if as_json:
        click.echo(json.dumps(r))
        return
    axes = ", ".join(f"{v} = {'·'.join(a) or '1'}" for v, a in zip(r["virtual_shape"], r["axes"]))
    click.echo(f"virtual torus {'x'.join(map(str, r['virtual_shape']))} on {system}: {axes}")
    click.echo(f"  block {r['block']['size']} at {r['block']['origin']}; {r['nodes_used']} nodes used, "
               f"{r['padding_nodes']} padding, {r['lost_nodes']} lost to faults ({r['mechanism']})")
    click.echo(f"  neighbour hops: max {r['max_neighbor_hops']}, mean {r['mean_neighbor_hops']:.3f}")
    if out:
        click.echo(f"  rank map written to {out}")
