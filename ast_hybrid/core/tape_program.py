"""A recorded tape as one compiled backward program (``autograd.backward``'s fast path).

``compiled_tape`` keys a tape by its structure (each node's key, how the nodes are wired, the heads), and
one program replays the forward and pulls back.  A short tape (under :data:`AT_ONCE` nodes) met the first
time runs op by op (a one-off backward runs faster that way than compiled); it is compiled from its second
backward on.  A long one (a network's) is compiled at its first backward: op by op, each node's pullback
compiles programs of its own (two or more per op and shape: mobilenetv2_0.25's first backward in GluonCV's
ImageNet script compiled about 220 of them, 14 s, and then the whole tape at its second backward, 9.2 s),
where the whole tape at once takes the 9.2 s alone (``core.tiers``'s two tiers, on request: 2.5 s quick
first).  The caches are the process's (as compiled programs are), shared by its threads under a lock, and
cleared when they grow past a bound.

The replayed forward is differentiated as :data:`REWRITE` gives it: as traced, until the XLA room
(``ast_hybrid/xla``, imported with Gluon, ``nd`` or ``import mxnet``) installs its channel-last interpreter there
(``xla/program.py``'s ``tape_forward``: a forward that convolves runs NHWC inside, and so its backward), as the
programs of recorded hybridized calls run.
"""

from __future__ import annotations

import threading

from ast_hybrid.core.autograd import _cotangents, _Leaf
from ast_hybrid.core.tape_spec import _call_spec

_TAPE_SEEN: dict = {}       # a tape's structure -> how many backward passes met it
_TAPE_PROGRAMS: dict = {}   # a tape's structure -> its compiled backward (from its second backward on)
_TAPE_LOCK = threading.Lock()
AT_ONCE = 32                # a tape of this many nodes or more is compiled at its first backward


class _Rewrite:
    """``forward(fn, primals)``: the function to differentiate in place of the tape's replayed forward ``fn``
    (set once, by ``ast_hybrid.xla`` at its import; None: ``fn`` as traced)."""

    forward = None


REWRITE = _Rewrite()


def compiled_tape(order, heads, leaf_pos, fixed, head_grads):
    """The backward of a tape as one compiled program ``(primals, fixed, consts per node, head grads) ->
    grads`` that replays the forward and pulls back (jax.vjp inside jit), with the list of fixed leaves'
    values; None for a short tape met the first time (a one-off backward runs faster op by op than
    compiled) or one with a node that has no key (``_keyed``)."""

    if any(n.key is None for n in order):
        return None
    index = {id(n): i for i, n in enumerate(order)}
    fixed_list = list(fixed)
    fixed_pos = {leaf: i for i, leaf in enumerate(fixed_list)}

    def where(ref):
        if isinstance(ref[0], _Leaf):
            return ("p", leaf_pos[ref[0]]) if ref[0] in leaf_pos else ("f", fixed_pos[ref[0]])
        return ("n", index[id(ref[0])], ref[1])

    wiring = tuple(tuple(where(r) for r in n.inputs) for n in order)
    head_refs = tuple(where((h._ag, h._arr) if isinstance(h._ag, _Leaf) else h._ag) for h in heads)
    key = (tuple(n.key for n in order), wiring, head_refs, len(leaf_pos), tuple(g is None for g in head_grads))
    program = _TAPE_PROGRAMS.get(key)
    if program is None:
        with _TAPE_LOCK:        # the caches are the process's (programs are), shared by its threads
            seen = _TAPE_SEEN[key] = _TAPE_SEEN.get(key, 0) + 1
            if seen < 2 and len(order) < AT_ONCE:
                if len(_TAPE_SEEN) > 512:
                    _TAPE_SEEN.clear()
                return None
            _TAPE_SEEN.pop(key, None)
            if len(_TAPE_PROGRAMS) > 64:
                _TAPE_PROGRAMS.clear()
            program = _TAPE_PROGRAMS[key] = _tape_program([n.spec for n in order], wiring, head_refs)
    return program, [fixed[leaf] for leaf in fixed_list]


def _tape_program(specs, wiring, head_refs):
    import jax

    from ast_hybrid.core.tiers import compiled

    def value(ref, primals, fixed, env):
        return primals[ref[1]] if ref[0] == "p" else fixed[ref[1]] if ref[0] == "f" else env[ref[1]][ref[2]]

    def backward(primals, fixed, consts, head_grads):
        def forward(primals):
            env = []
            for spec, refs, c in zip(specs, wiring, consts):
                env.append(_call_spec(spec, c, [value(r, primals, fixed, env) for r in refs]))
            return [value(r, primals, fixed, env) for r in head_refs]

        rewrite = REWRITE.forward
        outs, pullback = jax.vjp(forward if rewrite is None else rewrite(forward, primals), primals)
        return pullback(_cotangents(outs, head_grads))[0]

    return compiled(backward)
