"""Peak memory of the calls that build one large ``bytes``: ``hydron.dumps``
(binary form) and ``hydron.encode_batch`` write straight into the result,
so a call takes about the output's size in extra memory, not twice it (an
encoded buffer, then its copy into ``bytes``).

Each measurement runs in a child process of its own: the child makes a
(2M, 8) float32 array of unit vectors (64 MiB), resets the peak resident
set size (``/proc/self/clear_refs``, Linux), runs one call and reports how
far the peak rose above the resident size before the call. The control,
``bytearray(v.tobytes())`` (a copy of a copy), shows that the measurement
sees a 2x peak when there is one.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

from conftest import missing

N = 2 * 1024 * 1024
OUTPUT_MIB = N * 32 / (1 << 20)

CHILD = """
import sys, numpy as np, hydron

def status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])  # KiB
    raise SystemExit(f"no {field} in /proc/self/status")

n, what = int(sys.argv[1]), sys.argv[2]
v = np.zeros((n, 8), np.float32)
v[:, 0] = 1.0  # unit vectors, every page touched
calls = {
    "dumps": lambda: hydron.dumps(v),
    "encode_batch": lambda: hydron.encode_batch(v),
    "control": lambda: bytearray(v.tobytes()),
}
call = calls[what]
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # the peak resident set size starts again from here
before = status("VmRSS")
out = call()
grown = status("VmHWM") - before
print(grown, len(out))
"""


def peak_growth_mib(what: str) -> tuple[float, int]:
    """How far the child's peak RSS rose during ``what`` (MiB), and the
    length of what the call returned."""
    done = subprocess.run([sys.executable, "-c", CHILD, str(N), what],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    grown_kib, length = map(int, done.stdout.split())
    return grown_kib / 1024, length


@pytest.fixture(scope="module", autouse=True)
def peak_rss_can_be_reset() -> None:
    clear_refs = pathlib.Path("/proc/self/clear_refs")
    if not clear_refs.exists():
        missing("/proc/self/clear_refs (Linux 4.0 or later), to reset the peak RSS")
    try:
        clear_refs.write_text("5")
    except OSError as e:
        missing(f"writing /proc/self/clear_refs ({e}), to reset the peak RSS")


def test_the_measurement_sees_a_copy_of_a_copy() -> None:
    grown, length = peak_growth_mib("control")
    assert length == N * 32
    assert grown > 1.9 * OUTPUT_MIB, f"peak grew by {grown:.1f} MiB"


@pytest.mark.parametrize("what", ["dumps", "encode_batch"])
def test_large_outputs_are_built_in_place(what: str) -> None:
    """The peak grows by the output and a little (at most 1.25x plus 8 MiB;
    building it in a buffer first and copying it would be 2x)."""
    grown, length = peak_growth_mib(what)
    assert length > N * 32
    assert grown < 1.25 * OUTPUT_MIB + 8, f"{what}: peak grew by {grown:.1f} MiB"
    assert grown > 0.9 * OUTPUT_MIB, f"{what}: peak grew by {grown:.1f} MiB"
