"""A plain ``Block``'s ``forward`` hybridized (issue 31): what MXNet could not do.

MXNet runs a ``Block`` op by op even after ``hybridize()``, which reaches only its HybridBlock children.
ast-hybrid converts the forward with the transpiler (Python ``if``/``for``/``while`` on tensor values become
``lax`` control flow, as in a ``hybrid_forward``) and runs the block and everything it calls as one compiled
program (``gluon.programs.Compiled``, a HybridBlock's), in predict, training and recorded calls alike: the
same outputs and gradients as op by op.

A forward that does not convert or trace (``asnumpy()``/``asscalar()``, an in-place write such as
``x[:] = y`` or ``x += y``, a Python ``float()`` of an array...) runs op by op instead, for the life of the
block, after one warning naming the block and the reason (``HybridizeFallbackWarning``); its children are
still hybridized.  A call with keyword arguments, a non-array argument (a Python number, a string) or
forward hooks runs op by op, that call only.  As for a ``hybrid_forward``, the forward's Python side
effects (``print`` aside: converted, it prints the values on every call) happen when it is traced, once per
input shape, not at every call; a forward whose parameters are not initialised yet (deferred shapes) runs
op by op on its first call, which gives them their shapes.

Inside any program (a hybridized block's, this one's), a plain Block's forward is converted too
(``Block._unhooked``), so its control flow on tensor values becomes part of the program.
``hybridize(active=False)`` runs the forward op by op again.  ``ast-hybrid run --hybridize`` hybridizes every
block a script calls (``AST_HYBRID_HYBRIDIZE=all``): the outermost block called, at its first call; one
whose inputs keep changing shape (a data transform called on each image) goes back to op by op
(``watch_shapes``).

May import: what ``gluon/block.py`` may.
"""

from __future__ import annotations

import os
import traceback
import warnings

from ast_hybrid.core import autograd, settings
from ast_hybrid.core.ndarray import ARRAYS
from ast_hybrid.core.trace import FRAMES

__all__ = ["Whole", "converted", "HybridizeFallbackWarning", "auto_hybridize", "watch_shapes", "AUTO_SHAPES", "ENV"]

ENV = "AST_HYBRID_HYBRIDIZE"


class HybridizeFallbackWarning(UserWarning):
    """A hybridized block's forward runs op by op: it did not convert or trace."""


class Whole:
    """What a hybridized plain ``Block`` keeps: its compiled program (``gluon.programs.Compiled``), or the
    reason its forward runs op by op (``fallback``: always; ``untaped``: when recorded, its program having
    no backward)."""

    __slots__ = ("block", "compiled", "fallback", "untaped", "backward_checked", "__weakref__")

    def __init__(self, block):
        self.block = block
        self.compiled = None
        self.fallback = self.untaped = None
        self.backward_checked = False

    def __call__(self, args, kwargs):
        block = self.block
        recording = autograd.STATE.recording
        if self.fallback is not None or (recording and self.untaped is not None) or kwargs \
                or block._hooks is not None or not _arrays_only(args) or not _has_array(args) \
                or (self.compiled is None and _uninitialized(block)):     # (a program: initialised)
            return block.forward(*args, **kwargs)
        checking = False
        FRAMES.whole += 1
        try:
            if self.compiled is None:
                from ast_hybrid.gluon.programs import Compiled

                self.compiled = Compiled(block, args)
                for p in self.compiled.params:
                    if self.refresh not in p._listeners:
                        p._listeners.append(self.refresh)
            if recording and not self.backward_checked:
                checking = True
                self.compiled.check_backward(args)      # one with no backward runs op by op, not taped
                self.backward_checked, checking = True, False
            return self.compiled(args)
        except Exception as exc:       # does not convert or trace: op by op, said once
            if checking:
                self.untaped = _reason(exc)
                said = f"runs op by op when recorded (its program has no backward): {self.untaped}"
            else:
                self.compiled, self.fallback = None, _reason(exc)
                said = f"runs op by op: {self.fallback}"
        finally:
            FRAMES.whole -= 1
        warnings.warn(f"{type(block).__name__} {block.name!r} was hybridized but {said}", HybridizeFallbackWarning,
                      stacklevel=4)
        return block.forward(*args)

    def refresh(self):
        """A parameter got a new value: the program's leaves follow (a new shape or dtype: a new program)."""
        c = self.compiled
        if c is not None and not c.refresh():
            self.compiled = None


def converted(block):
    """``block.forward`` converted by the transpiler (cached on the block), or as written where the
    transpiler is not there or the forward is not a Python function (a ``do_not_convert`` one included)."""
    fn = block.__dict__.get("_ah_converted_forward")
    if fn is None:
        try:
            from ast_hybrid.transpiler.api import convert
        except ImportError:
            fn = block.forward
        else:
            fn = convert(block.forward)
        object.__setattr__(block, "_ah_converted_forward", fn)
    return fn


def auto_hybridize(block):
    """``ast-hybrid run --hybridize``: the outermost block called (not within another block's program) is
    hybridized at its first call, unless it was hybridized (or un-hybridized) by the script itself."""
    if FRAMES.traces:
        return
    object.__setattr__(block, "_ah_auto", True)        # asked once per block
    if settings.get(ENV) != "all" or "_whole" in block.__dict__ or getattr(block, "_active", False):
        return
    with warnings.catch_warnings():     # MXNet's advice to a Sequential of HybridBlocks hybridized by its
        warnings.filterwarnings("ignore", "All children of this Sequential layer")     # script: not this one
        block.hybridize()
    object.__setattr__(block, "_ah_shapes", set())


# the input signatures a block hybridized by ``--hybridize`` may meet before it runs op by op
AUTO_SHAPES = 6


def watch_shapes(block, args):
    """A block ``--hybridize`` hybridized whose inputs keep changing shape runs op by op from its
    :data:`AUTO_SHAPES`-th input signature on, said once: each shape compiles a program of its own (GluonCV's
    ImageNet script: its per-image transforms, a ``Compose`` called on images of every size, compiled one
    program per image and took its first epoch from 5 s to 150 s).  A block the script hybridized itself is
    not watched (MXNet compiles per shape too)."""
    shapes = block.__dict__["_ah_shapes"]
    sig = tuple((a.shape, a.dtype) if a.__class__ in ARRAYS else type(a) for a in args)
    if sig in shapes:
        return
    shapes.add(sig)
    if len(shapes) < AUTO_SHAPES:
        return
    del block.__dict__["_ah_shapes"]
    block.hybridize(False)
    warnings.warn(f"{type(block).__name__} {block.name!r} was hybridized (--hybridize) but runs op by op: its inputs "
                  f"came in {len(shapes)} shapes, and each shape compiles a program of its own",
                  HybridizeFallbackWarning, stacklevel=4)


def _reason(exc):
    diagnostics = getattr(exc, "diagnostics", None)
    if diagnostics:        # the transpiler's: code, file:line:col, why (ConversionError)
        d = diagnostics[0]
        span = getattr(d, "span", None)
        where = f"{d.path}:{span.line}:{span.col}: " if span is not None and hasattr(span, "col") else \
            f"{d.path}: "
        return f"{where}{d.code} {d.message}" + (f" ({d.help})" if getattr(d, "help", None) else "")
    text = str(exc).strip().splitlines()
    return f"{_user_line(exc)}{type(exc).__name__}: {text[0] if text else ''}"


def _user_line(exc):
    """``file:line: `` of the innermost frame of ``exc``'s traceback in the user's code (not ast-hybrid's,
    not an installed package's), or nothing."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        path = os.path.abspath(frame.filename)
        if not path.startswith(here) and "site-packages" not in path and not frame.filename.startswith("<"):
            found = f"{frame.filename}:{frame.lineno}: "
    return found


def _arrays_only(args):
    for a in args:
        if isinstance(a, (list, tuple)):
            if not _arrays_only(a):
                return False
        elif not (a is None or a.__class__ in ARRAYS or (hasattr(a, "shape") and hasattr(a, "dtype"))):
            return False
    return True


def _has_array(args):
    return any(_has_array(a) if isinstance(a, (list, tuple)) else a is not None for a in args)


def _uninitialized(block):
    return any(p._value is None for p in block.collect_params().values())
