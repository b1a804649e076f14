"""Shared fixtures: the MXNet oracle and the real-code corpus.

Both are installed by the project itself (``python -m ast_hybrid.testing.oracle
setup``; the corpus is downloaded and cached on first use).  Where they
cannot be had on this machine the tests that need them are skipped, and the
reason is printed loudly at the end of the run, never silently.
"""

from __future__ import annotations

import pytest

_UNAVAILABLE: list[str] = []


@pytest.fixture(scope="session")
def oracle():
    """A live MXNet 1.9.1 process (``ast_hybrid.testing.oracle.Oracle``)."""
    from ast_hybrid.testing.oracle import Oracle, OracleUnavailable

    try:
        mx = Oracle()
    except OracleUnavailable as exc:
        _UNAVAILABLE.append(f"MXNet oracle: {exc}")
        pytest.skip(f"MXNET ORACLE UNAVAILABLE, differential test NOT run: {exc}")
    yield mx
    mx.close()


@pytest.fixture(scope="session")
def gluon_tree():
    """Path to the unpacked ``mxnet/gluon`` tree of MXNet 1.9.1 (read, never imported)."""
    from ast_hybrid.testing.corpus import CorpusUnavailable, gluon_tree as find

    try:
        return find()
    except CorpusUnavailable as exc:
        _UNAVAILABLE.append(f"mxnet/gluon corpus: {exc}")
        pytest.skip(f"MXNET CORPUS UNAVAILABLE, real-code test NOT run: {exc}")


class _Compiles(list):
    """The XLA compiles JAX reports while ``on`` (one event name each)."""

    on = False
    _registered = False

    def listen(self):
        if not _Compiles._registered:
            import jax

            jax.monitoring.register_event_duration_secs_listener(_heard)
            _Compiles._registered = True
        return self


_COMPILES = _Compiles()


def _heard(event, duration, **kwargs):
    if _COMPILES.on and "backend_compile" in event:
        _COMPILES.append(event)


@pytest.fixture
def compiles():
    """A list the XLA compiles of the test are appended to while ``compiles.on`` is true."""
    _COMPILES.listen().clear()
    _COMPILES.on = False
    yield _COMPILES
    _COMPILES.on = False


def pytest_terminal_summary(terminalreporter):
    for reason in dict.fromkeys(_UNAVAILABLE):
        terminalreporter.write_line(f"!!! SKIPPED FOR MISSING INFRASTRUCTURE: {reason}", red=True, bold=True)
