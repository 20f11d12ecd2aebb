"""A crafted Parquet footer under a 2 GiB address-space limit, as in a
container (`ulimit -v 2097152`): the footer claims 2^31 - 1 children for
one schema element (hydron-codec/tests/regressions), which once made the
parquet crate reserve 17 GB and abort the interpreter. Now it is a
CorruptError naming the footer, and the process lives on."""

import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import needs_parquet

pytestmark = needs_parquet

CRAFTED = (
    Path(__file__).resolve().parents[2]
    / "hydron-codec"
    / "tests"
    / "regressions"
    / "parquet_decode-num-children-2-pow-31-minus-1"
)

CHILD = textwrap.dedent(
    """
    import resource, sys
    limit = 2 * 1024 ** 3
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import hydron
    data = open(sys.argv[1], "rb").read()
    for read in (lambda: hydron.load_parquet(sys.argv[1]), lambda: hydron.loads(data)):
        try:
            read()
        except hydron.CorruptError as e:
            assert "footer" in str(e), e
        else:
            raise SystemExit("no error")
    print("refused")
    """
)


def test_a_crafted_footer_is_refused_under_a_2_gib_address_space_limit() -> None:
    run = subprocess.run(
        [sys.executable, "-c", CHILD, str(CRAFTED)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    assert run.stdout.strip() == "refused"
