"""The report as one HTML file that opens offline: plotly.js is embedded
once in the page's head and every figure is drawn by it, so nothing is
fetched when the page is viewed."""

from __future__ import annotations

import datetime
from functools import lru_cache
from typing import Any

from .sections import Section, esc

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #222; background: #fff; }
header { background: #1f2d3d; color: #fff; padding: 14px 28px; }
header h1 { margin: 0 0 4px 0; font-size: 22px; }
header p { margin: 0; color: #c9d3dd; font-size: 13px; }
nav { padding: 8px 28px; border-bottom: 1px solid #ddd; font-size: 14px; }
nav a { margin-right: 16px; color: #1f5f9f; text-decoration: none; }
main { padding: 0 28px 40px 28px; max-width: 1400px; }
section { margin-top: 26px; }
h2 { font-size: 19px; border-bottom: 2px solid #e8e8e8; padding-bottom: 4px; }
h3 { font-size: 15px; }
p { line-height: 1.45; max-width: 1100px; }
p.note { color: #7a4b00; background: #fff6e0; border-left: 4px solid #f0b400; padding: 6px 10px; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
table.facts th { text-align: left; padding: 3px 16px 3px 0; color: #555; font-weight: 600; vertical-align: top; }
table.facts td { padding: 3px 0; }
table.data th { background: #f1f3f5; padding: 4px 10px; text-align: right; border-bottom: 1px solid #ccc; }
table.data td { padding: 3px 10px; text-align: right; border-bottom: 1px solid #eee; font-variant-numeric: tabular-nums; }
div.scroll { overflow-x: auto; max-width: 100%; }
details { margin: 8px 0; }
summary { cursor: pointer; color: #1f5f9f; }
pre { background: #f6f8fa; padding: 10px; overflow-x: auto; font-size: 12px; max-height: 420px; }
"""


#: Plotly rejects the promise of an animation that another one interrupts
#: (pause, or the slider moved during play) with no reason, by design, and
#: its buttons and sliders leave that promise uncaught; such a rejection is
#: not an error and would otherwise be logged as one.
INTERRUPTED_ANIMATIONS = """window.addEventListener("unhandledrejection", function (e) { if (e.reason === undefined) e.preventDefault(); });"""


@lru_cache(maxsize=1)
def plotly_js() -> str:
    """plotly.min.js as the plotly package ships it (about 4.6 MB)."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def figure_html(fig: Any, name: str) -> str:
    """A figure as a div (id ``fig-NAME``: sections have the plain names)
    and the script that draws it with the page's plotly.js (no autoplay)."""
    return fig.to_html(full_html=False, include_plotlyjs=False, div_id=f"fig-{name}", auto_play=False,
                       config={"displaylogo": False, "responsive": True})


def render(title: str, subtitle: str, sections: list[Section]) -> str:
    """The whole page."""
    from .. import __version__

    nav = "".join(f'<a href="#{esc(s.id)}">{esc(s.title)}</a>' for s in sections)
    parts = []
    for s in sections:
        inner = f'<p class="note">{esc(s.note)}</p>' if s.note is not None else s.body
        parts.append(f'<section id="{esc(s.id)}"><h2>{esc(s.title)}</h2>{inner}</section>')
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{esc(title)}</title>'
            f"<style>{STYLE}</style><script>{INTERRUPTED_ANIMATIONS}</script><script>{plotly_js()}</script></head><body>"
            f"<header><h1>{esc(title)}</h1><p>{esc(subtitle)}; written {stamp} by tofusim {esc(__version__)}</p></header>"
            f"<nav>{nav}</nav><main>{''.join(parts)}</main></body></html>\n")
