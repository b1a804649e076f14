"""A stand-in ``mxnet`` package that maps MXNet 1.9.1's names onto ast-hybrid, for running real MXNet code.

``build(dest, gluon_tree)`` writes ``dest/mxnet/`` whose modules re-export
ast-hybrid's front under MXNet's module paths, and copies MXNet 1.9.1's own
``gluon/model_zoo``, ``gluon/loss.py`` and recurrent cells (``gluon/rnn/rnn_cell.py``,
``gluon/contrib/rnn/rnn_cell.py``) source files into it unchanged: the code that runs is the code
MXNet ships, not ours, on our ``Block``/``HybridBlock`` and ``F``.  Test infrastructure only.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

MODULES = {
    "__init__.py": """
        from ast_hybrid import nd, sym, autograd, cpu, gpu, Context
        from ast_hybrid import init as initializer
        from ast_hybrid import init
        ndarray = nd
        from . import symbol
        from . import base, context, util, gluon
        __version__ = "1.9.1"
    """,
    "base.py": """
        import os
        import numpy as np
        numeric_types = (float, int, np.generic)
        integer_types = (int, np.integer)
        string_types = (str,)
        def _as_list(obj):
            return obj if isinstance(obj, list) else [obj]
        def data_dir():
            return os.path.join(os.path.expanduser("~"), ".mxnet")
    """,
    "context.py": "from ast_hybrid import cpu, gpu, Context\n",
    "symbol.py": """
        from ast_hybrid import sym as _sym
        def __getattr__(name):
            return getattr(_sym, name)
        class Symbol:
            \"\"\"Nothing is one here: F is nd in both modes, so MXNet's symbol branches are never taken.\"\"\"
    """,
    "util.py": """
        def is_np_array():
            return False
        def is_np_shape():
            return False
    """,
    "initializer.py": "from ast_hybrid.init import *\n",
    "gluon/__init__.py": """
        from ast_hybrid.gluon import Block, HybridBlock, SymbolBlock, Parameter, ParameterDict, Constant
        from ast_hybrid.ndarray import NDArray as _NDArray
        from ..symbol import Symbol as _Symbol
        tensor_types = (_Symbol, _NDArray)
        from . import nn, block, contrib, utils, loss, rnn
    """,
    "gluon/block.py": "from ast_hybrid.gluon import Block, HybridBlock, SymbolBlock\n",
    "gluon/nn/__init__.py": "from ast_hybrid.gluon.nn import *\n",
    "gluon/contrib/__init__.py": "from . import nn, rnn\n",
    "gluon/rnn/__init__.py": "from .rnn_cell import *\nfrom ast_hybrid.gluon.rnn import RNN, LSTM, GRU\n",
    "gluon/contrib/rnn/__init__.py": "from .rnn_cell import *\n",
    "gluon/contrib/nn/__init__.py": "from ast_hybrid.gluon.contrib.nn import *\n",
    "gluon/utils.py": """
        def download(*args, **kwargs):
            raise RuntimeError("no network: pretrained weights are not available in this test")
        def check_sha1(*args, **kwargs):
            return False
        def _indent(s_, numSpaces):
            lines = s_.split("\\n")
            return lines[0] + "".join("\\n" + " " * numSpaces + line for line in lines[1:])
        def replace_file(src, dst):
            import os
            os.replace(src, dst)
    """,
}


def build(dest: Path, gluon_tree: Path) -> Path:
    root = Path(dest) / "mxnet"
    for rel, text in MODULES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    shutil.copytree(Path(gluon_tree) / "model_zoo", root / "gluon" / "model_zoo")
    shutil.copy(Path(gluon_tree) / "loss.py", root / "gluon" / "loss.py")
    shutil.copy(Path(gluon_tree) / "rnn" / "rnn_cell.py", root / "gluon" / "rnn" / "rnn_cell.py")
    shutil.copy(Path(gluon_tree) / "contrib" / "rnn" / "rnn_cell.py",
                root / "gluon" / "contrib" / "rnn" / "rnn_cell.py")
    return root
