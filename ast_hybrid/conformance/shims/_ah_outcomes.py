"""A pytest plugin (``-p _ah_outcomes``) writing each test's outcome to the JSON-lines file ``$AH_OUTCOMES`` as
soon as it is known, with the process's peak resident memory so far: a run stopped halfway (memory, time)
keeps what it had found.  Plain pytest hooks only: it runs in MXNet's Python as in ours."""

import json
import os
import resource


def _write(record):
    path = os.environ.get("AH_OUTCOMES")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def pytest_runtest_logstart(nodeid, location):
    _write({"id": nodeid, "outcome": "started"})


def pytest_runtest_logreport(report):
    if report.when == "call" or (report.when == "setup" and not report.passed) or \
            (report.when == "teardown" and report.failed):
        message = ""
        if report.failed:       # the exception's own line first ("AssertionError: ..."), then the report
            crash = getattr(getattr(report.longrepr, "reprcrash", None), "message", "")
            message = f"{crash}\n{report.longreprtext[-2000:]}"
        elif report.skipped and isinstance(report.longrepr, tuple):
            message = str(report.longrepr[-1])
        _write({"id": report.nodeid, "outcome": report.outcome, "message": message,
                "maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024})


def pytest_collectreport(report):
    if report.failed:
        _write({"id": report.nodeid or "<collection>", "outcome": "collection error",
                "message": report.longreprtext[-2000:], "maxrss": 0})
