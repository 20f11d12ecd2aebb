"""The precondition rule of the test suite (conftest.py): a missing
Python package, a feature the build lacks, or another missing precondition
skips a test with a loud line on stderr, but fails it under
``HYDRON_REQUIRE_ALL=1`` (what ``scripts/test-all.sh`` sets); a feature
that ``HYDRON_EXPECT_FEATURES`` says the build leaves out stays a skip."""

import os
import re
import subprocess
import sys

from conftest import PYTHON_DIR

CASES = '''
from conftest import missing, needs, require


def test_a_missing_package():
    require("hydron_no_such_module")


@needs("no-such-feature")
def test_a_missing_feature():
    pass


def test_another_missing_precondition():
    missing("a facility this platform lacks")
'''

MODULE_LEVEL = '''
from conftest import require

pa = require("hydron_no_such_module")


def test_never_runs():
    pass
'''


def run_cases(tmp_path, source: str, **env: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_cases.py").write_text(source)
    environ = {k: v for k, v in os.environ.items()
               if k not in ("HYDRON_REQUIRE_ALL", "HYDRON_EXPECT_FEATURES")}
    environ.update(env, PYTHONPATH=str(PYTHON_DIR / "tests"))
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-p",
                           "no:cacheprovider", "-q", "-rs", "test_cases.py"],
                          cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=300)


def counts(run: subprocess.CompletedProcess) -> dict[str, int]:
    """pytest's summary as counts: a precondition failing in setup is an
    error, in the test a failure; both count as ``failed``."""
    found = {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|skipped|errors?)",
                                                    run.stdout)}
    return {"failed": found.get("failed", 0) + found.get("error", 0) + found.get("errors", 0),
            "skipped": found.get("skipped", 0)}


def test_missing_preconditions_skip_loudly_by_default(tmp_path):
    run = run_cases(tmp_path, CASES)
    assert run.returncode == 0 and counts(run) == {"failed": 0, "skipped": 3}, run.stdout
    run = run_cases(tmp_path, CASES, HYDRON_REQUIRE_ALL="0")
    assert counts(run) == {"failed": 0, "skipped": 3}, run.stdout
    run = run_cases(tmp_path, MODULE_LEVEL)
    # (5: no test ran, the module was skipped.)
    assert run.returncode in (0, 5) and counts(run) == {"failed": 0, "skipped": 1}, run.stdout


def test_missing_preconditions_fail_under_require_all(tmp_path):
    run = run_cases(tmp_path, CASES, HYDRON_REQUIRE_ALL="1")
    assert run.returncode == 1 and counts(run) == {"failed": 3, "skipped": 0}, run.stdout
    for what in ("'hydron_no_such_module' does not import", "no 'no-such-feature' feature",
                 "a facility this platform lacks"):
        assert re.search(r"precondition missing \(HYDRON_REQUIRE_ALL=1\): [^\n]*"
                         + re.escape(what), run.stdout), what
    run = run_cases(tmp_path, MODULE_LEVEL, HYDRON_REQUIRE_ALL="1")
    assert run.returncode != 0 and counts(run)["failed"] == 1, run.stdout


def test_a_feature_the_build_is_expected_to_lack_stays_a_skip(tmp_path):
    run = run_cases(tmp_path, CASES, HYDRON_REQUIRE_ALL="1", HYDRON_EXPECT_FEATURES="arrow")
    assert run.returncode == 1 and counts(run) == {"failed": 2, "skipped": 1}, run.stdout
    assert "HYDRON_EXPECT_FEATURES='arrow'" in run.stdout
    # Named as expected, but missing from the build: a failure.
    run = run_cases(tmp_path, CASES, HYDRON_REQUIRE_ALL="1",
                    HYDRON_EXPECT_FEATURES="no-such-feature")
    assert counts(run)["failed"] == 3 and "names it" in run.stdout, run.stdout
