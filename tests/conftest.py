import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOFUSIM = str(Path(sys.executable).parent / "tofusim")


class Result:
    def __init__(self, p: subprocess.CompletedProcess):
        self.code = p.returncode
        self.out = p.stdout
        self.err = p.stderr

    def json(self):
        return json.loads(self.out)


@pytest.fixture
def run():
    """Runs the installed `tofusim` command end to end."""

    def _run(*args: str, timeout: float = 300) -> Result:
        p = subprocess.run([TOFUSIM, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)
        return Result(p)

    return _run
