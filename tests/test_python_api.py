"""The Python API (issue 21, part 1): the examples of docs/python.md and
of the API module's docstrings run as doctests."""

import doctest

from conftest import ROOT


def test_the_documented_examples_run():
    r = doctest.testfile(str(ROOT / "docs" / "python.md"), module_relative=False,
                         optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert r.failed == 0 and r.attempted > 10, r


def test_the_api_docstrings_run():
    import tofusim.api

    r = doctest.testmod(tofusim.api, optionflags=doctest.ELLIPSIS)
    assert r.failed == 0 and r.attempted >= 4, r
