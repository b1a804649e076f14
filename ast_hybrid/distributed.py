"""``ast_hybrid.distributed``: several processes training together (``initialize``, ``rank``, ``num_workers``,
``barrier``, ``KVStore``).  The implementation is ``ast_hybrid/parallel/distributed.py`` (with the devices of one
process, ``parallel/data_parallel.py``); this public name is that module itself."""

import sys

from ast_hybrid.parallel import distributed as _moved

sys.modules[__name__] = _moved
