"""``lint_files`` pauses Python's cyclic collector per file (speed) and leaves the caller's setting as it was."""

import gc

import pytest

from ast_hybrid.linter.api import lint_files
from ast_hybrid.linter.config import Settings


@pytest.mark.parametrize("enabled", [True, False])
def test_gc_setting_is_restored(tmp_path, enabled):
    f = tmp_path / "m.py"
    f.write_text("class N(HybridBlock):\n    def hybrid_forward(self, F, x):\n        x += 1\n        return x\n")
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        found = lint_files([str(f)], Settings(root=str(tmp_path)))
        assert gc.isenabled() is enabled
        assert [d.code for d in found] == ["HY001"]
    finally:
        (gc.enable if was else gc.disable)()

