"""pytest glue for the bench-tools suite.

Puts scripts/ on sys.path and prints one line per test for scripts/check.sh:
``PASS: bench-tools/<test>``, ``FAIL: bench-tools/<test>`` (call-phase failure
or a setup/teardown error) or ``SKIP: bench-tools/<test>``.
"""

import os
import sys

import pytest

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, SCRIPTS)


def _emit(config, line):
    tr = config.pluginmanager.get_plugin("terminalreporter")
    if tr is None:
        print(line, flush=True)
        return
    tw = tr._tw
    if tw.width_of_current_line:  # -q leaves the progress dots open
        tw.line()
    tw.line(line)
    tw.flush()


@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report):
    name = report.nodeid.rsplit("::", 1)[-1]
    if report.failed:
        status = "FAIL"
    elif report.skipped and report.when in ("setup", "call"):
        status = "SKIP"
    elif report.passed and report.when == "call":
        status = "PASS"
    else:
        return
    _emit(_config, "%s: bench-tools/%s" % (status, name))


_config = None


def pytest_configure(config):
    global _config
    _config = config
