"""Traced loops: ``while`` -> ``lax.while_loop``; ``for`` over a traced range ->
``fori_loop``/``while_loop``; ``for`` over a traced array -> ``lax.scan``.

The loop state (the variables the body modifies that are live around the
loop) is carried as the dynamic leaves of a :class:`Carry`.  Variables that
are undefined when the loop starts but defined by its body (the return value
of an early ``return``, a variable first assigned inside) get a placeholder of
the type the body gives them, found by tracing the body once with
``jax.eval_shape`` (the placeholder is never read: a flag guards it).  A user's
variable undefined when a ``while`` or traced ``range`` loop starts and live after
it is HY030 instead: the loop may run zero times, where Python would leave it
unassigned (a ``for`` over an array has a static length: with no rows the body
never runs and nothing is assigned, as in Python).  The body's
outputs are checked against the carry: a change of structure, shape or dtype
is HY031, except a Python number promoted by the body (``k = 0`` then
``k = k + 0.5``), which restarts the loop with the promoted type as Python would.

With ``max_iterations=N`` (``ast_hybrid.jit(fn, max_iterations=N)``) a traced
``while`` (and a traced range with a ``break``) is bounded by N steps: exact as long
as the loop ends within N iterations, and reverse-differentiable.  Such a bounded
loop (also the rest of a Python ``range`` whose ``break`` test became traced,
:func:`range_rest`) is :func:`bounded_loop`: a ``lax.while_loop`` that stops at the
exit for its values, and a ``scan`` of N steps whose body runs under
``lax.cond(test, ...)`` for its derivatives (a ``jax.custom_jvp``), so that a loop
leaving early costs what a hand-written ``while_loop`` does and still trains.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .values import Layout, Undefined, as_pred, describe

__all__ = ["Carry", "traced_while", "traced_range_for", "traced_scan_for", "range_rest", "TracedRange",
           "bounded_loop"]


class TracedRange:
    """``range(start, stop, step)`` with a traced bound."""

    __slots__ = ("start", "stop", "step")

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step

    def trip_count(self):
        start, stop, step = (jnp.asarray(v, jnp.int32) for v in (self.start, self.stop, self.step))
        pos = (stop - start + step - 1) // jnp.where(step == 0, 1, step)
        neg = (start - stop - step - 1) // jnp.where(step == 0, 1, -step)
        return jnp.maximum(jnp.where(step > 0, pos, neg), 0)

    def __reversed__(self):
        """``reversed(range(...))``: the same items, last first (empty stays empty)."""
        last = self.start + (self.trip_count() - 1) * self.step
        return TracedRange(last, self.start - self.step, -self.step)

    def __repr__(self):
        return f"TracedRange({self.start}, {self.stop}, {self.step})"


class _Promote(Exception):
    def __init__(self, index, dtype):
        self.index, self.dtype = index, dtype


class Carry:
    """The state a traced loop carries, and the checks on what its body returns."""

    def __init__(self, rt, values, names, line, probe, may_skip=True):
        self.rt, self.names, self.line = rt, names, line
        if may_skip:   # the loop may run zero times: what only its body assigns may stay unassigned
            rt.check_defined_by_loop(values, names, line)
        if any(isinstance(v, Undefined) for v in values):
            values = self._placeholders(values, probe)
        self.layout = Layout(values)
        self.init = [jnp.asarray(v) for v in self.layout.dyn]
        self._owner = []
        for i, slot in enumerate(self.layout.slots):
            if slot is not None:
                self._owner += [i] * (slot[3] - slot[2])

    def _placeholders(self, values, probe):
        rec = {}

        def run():
            lay = Layout(probe(values))
            rec["lay"] = lay
            return lay.dyn

        shapes = jax.eval_shape(run)
        lay = rec["lay"]
        out = list(values)
        for i, v in enumerate(values):
            if isinstance(v, Undefined) and lay.slots[i] is not None:
                treedef, statics, start, stop = lay.slots[i]
                leaves, k = [], start
                for j in range(treedef.num_leaves):
                    if j in statics:
                        leaves.append(statics[j])
                    else:
                        leaves.append(jnp.zeros(shapes[k].shape, shapes[k].dtype))
                        k += 1
                out[i] = jax.tree_util.tree_unflatten(treedef, leaves)
        return tuple(out)

    def promote(self, index, dtype):
        self.init[index] = jnp.asarray(self.init[index], dtype)

    def unpack(self, dyn):
        return self.layout.rebuild(dyn)

    def pack(self, outs):
        """Body outputs -> dynamic leaves of the carry's exact types (or HY031)."""
        lay = Layout(outs)
        diags = []
        for i, name in enumerate(self.names):
            if not self.layout.same_static(lay, i):
                if self.layout.slots[i] is None:   # still undefined: never assigned by the body
                    continue
                before = describe(self.layout.rebuild(self.init)[i])
                after = describe(lay.rebuild(lay.dyn)[i])
                diags.append(self.rt.hy031(name, self.line, before, after))
        if diags:
            self.rt.fail(diags)
        out = []
        for k, (init, leaf) in enumerate(zip(self.init, lay.dyn)):
            shape, dtype = np.shape(leaf), jnp.result_type(leaf)
            if shape != init.shape:
                self.rt.fail([self.rt.hy031(self.names[self._owner[k]], self.line,
                                            describe(init), describe(leaf))])
            if dtype != init.dtype:
                promoted = jnp.result_type(init, leaf)
                if promoted != init.dtype and _weak(init):
                    raise _Promote(k, promoted)   # `k = 0` then `k = k + 0.5`: Python makes k a float
                if promoted != init.dtype or not _weak(leaf):
                    self.rt.fail([self.rt.hy031(self.names[self._owner[k]], self.line,
                                                describe(init), describe(leaf))])
            out.append(lax.convert_element_type(leaf, init.dtype)
                       if (dtype != init.dtype or _weak(leaf) != _weak(init)) else leaf)
        return out


def _weak(x) -> bool:
    return isinstance(x, (bool, int, float, complex)) or bool(getattr(x, "weak_type", False))


def _retrying(build):
    """Run ``build()``; on a promoted Python number, promote and run again."""
    for _ in range(64):
        try:
            return build()
        except _Promote as p:
            build.carry.promote(p.index, p.dtype)
    raise RuntimeError("ast_hybrid: loop state types did not settle")  # pragma: no cover


def _check_pred(traced, p):
    return p if traced else jnp.asarray(p)


def traced_while(rt, test, body, state, names, line, max_iterations=None):
    carry = Carry(rt, state, names, line, lambda vals: body(*vals))

    def cond_fun(dyn):
        return _check_pred(*as_pred(test(*carry.unpack(dyn))))

    def body_fun(dyn):
        return carry.pack(body(*carry.unpack(dyn)))

    def build():
        if max_iterations is None:
            return lax.while_loop(cond_fun, body_fun, list(carry.init))

        return bounded_loop(cond_fun, body_fun, list(carry.init), max_iterations)

    build.carry = carry
    return carry.unpack(_retrying(build))


def traced_range_for(rt, rng, extra_test, body, state, names, line, max_iterations=None):
    start, step = rng.start, rng.step
    n = rng.trip_count()
    carry = Carry(rt, state, names, line, lambda vals: body(jnp.asarray(start), *vals))

    def index(k):
        return start + k * step

    def body_k(k, dyn):
        return carry.pack(body(index(k), *carry.unpack(dyn)))

    def build():
        init = list(carry.init)
        if extra_test is None and max_iterations is None:
            return lax.fori_loop(0, n, body_k, init)

        def cond_kd(kd):
            k, dyn = kd
            ok = k < n
            if extra_test is not None:
                traced, p = as_pred(extra_test(*carry.unpack(dyn)))
                ok = jnp.logical_and(ok, p)
            return ok

        def body_kd(kd):
            k, dyn = kd
            return k + 1, body_k(k, dyn)

        k0 = jnp.asarray(0, jnp.int32)
        if max_iterations is None:
            return lax.while_loop(cond_kd, body_kd, (k0, init))[1]

        return bounded_loop(cond_kd, body_kd, (k0, init), max_iterations, counted=True)[1]

    build.carry = carry
    return carry.unpack(_retrying(build))


def traced_scan_for(rt, xs, extra_test, body, state, names, line):
    carry = Carry(rt, state, names, line, lambda vals: body(xs[0], *vals), may_skip=False)  # >= 1 row

    def step(dyn, x):
        if extra_test is None:
            return carry.pack(body(x, *carry.unpack(dyn))), None
        traced, p = as_pred(extra_test(*carry.unpack(dyn)))
        run = lambda d: carry.pack(body(x, *carry.unpack(d)))  # noqa: E731
        if not traced:
            return (run(dyn) if p else list(dyn)), None
        return lax.cond(p, run, lambda d: list(d), dyn), None

    def build():
        return lax.scan(step, list(carry.init), xs)[0]

    build.carry = carry
    return carry.unpack(_retrying(build))


def range_rest(rt, rest, extra_test, body, state, names, line, max_iterations=None):
    """The rest of a ``for`` over a Python ``range`` whose extra test (a break or return flag) has
    become traced, as one loop over the remaining items instead of one ``lax.cond`` per item;
    None (the caller unrolls, as before) when the loop cannot carry the state: a variable still
    undefined, a structure, shape or dtype the body changes, a body that needs the item to be a
    Python int (a shape, a Python ``if`` on it).

    Always a :func:`bounded_loop` of at most ``len(rest)`` steps (the length is a Python int here):
    a ``while_loop`` that stops at the break, whose derivatives are a ``scan``'s, so that a hybridized
    block with such a loop still trains (``backward()`` cannot go through a plain ``while_loop``).
    """
    if len(rest) == 0 or any(isinstance(v, Undefined) for v in state):
        return None
    try:
        carry = Carry(rt, state, names, line, None, may_skip=False)
        for _ in range(64):   # the body's types, once, with a traced item
            try:
                jax.eval_shape(lambda i, dyn: (as_pred(extra_test(*carry.unpack(dyn)))[1],
                                               carry.pack(body(i, *carry.unpack(dyn)))),
                               jax.ShapeDtypeStruct((), jnp.int32), carry.init)
                break
            except _Promote as p:
                carry.promote(p.index, p.dtype)
        else:  # pragma: no cover
            return None
    except Exception:   # noqa: BLE001 - whatever it is, the unrolled loop raises it again, or works
        return None
    rng = TracedRange(rest.start, rest.stop, rest.step)
    return traced_range_for(rt, rng, extra_test, body, state, names, line, len(rest))


def bounded_loop(cond, body, init, length, counted=False):
    """``while cond(c): c = body(c)``, at most ``length`` times; ``init`` a pytree of arrays.

    Values: a ``lax.while_loop`` (ends at the first false ``cond``); derivatives (forward and
    reverse): a ``scan`` of ``length`` steps, each running ``body`` under ``lax.cond(cond(c), ...)``,
    which computes the same values.  ``counted``: ``c[0]`` is a step counter from 0 that ``body``
    increments (the bound is tested on it, no second counter).  The two functions are traced once each
    (``jax.make_jaxpr``); what they read from around the loop becomes explicit arguments of the
    ``custom_jvp``, so that derivatives with respect to it are the scan's too.  A loop body with
    effects (a traced ``assert``'s ordered callback), which ``custom_jvp`` refuses, is only the scan.
    """
    tree = jax.tree_util.tree_structure(init)
    cj = jax.make_jaxpr(cond)(init)
    bj = jax.make_jaxpr(body)(init)
    nc = len(cj.consts)

    def call(closed, consts, c):
        return jax.core.eval_jaxpr(closed.jaxpr, consts, *jax.tree_util.tree_leaves(c))

    def test(consts, c):
        return call(cj, consts[:nc], c)[0]

    def step(consts, c):
        return jax.tree_util.tree_unflatten(tree, call(bj, consts[nc:], c))

    def scan(consts, c):
        def one(c, _):
            return lax.cond(test(consts, c), lambda c: step(consts, c), lambda c: c, c), None
        return lax.scan(one, c, None, length=length)[0]

    consts = [*cj.consts, *bj.consts]
    if cj.effects or bj.effects:
        return scan(consts, init)

    @jax.custom_jvp
    def loop(consts, c):
        if counted:   # c[0] counts the steps
            return lax.while_loop(lambda c: jnp.logical_and(c[0] < length, test(consts, c)),
                                  lambda c: step(consts, c), c)
        k0 = jnp.zeros((), jnp.int32)
        return lax.while_loop(lambda kc: jnp.logical_and(kc[0] < length, test(consts, kc[1])),
                              lambda kc: (kc[0] + 1, step(consts, kc[1])), (k0, c))[1]

    @loop.defjvp
    def _(primals, tangents):
        return jax.jvp(scan, primals, tangents)

    return loop(consts, init)
