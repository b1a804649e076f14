"""``ast_hybrid.convert``/``jit``/``to_source``/``do_not_convert`` as a user calls them."""

from __future__ import annotations

import inspect
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import load

import ast_hybrid
from ast_hybrid import ConversionError

X = jnp.array([1.0, -2.0, 3.0], jnp.float32)

MODULE = '''
import functools
import jax.numpy as jnp

SCALE = 2.0


def f(x, k=3.0, *, shift=0.0):
    """doc of f"""
    if x.sum() > 0:
        x = x * k
    else:
        x = x - k
    return x * SCALE + shift


def make(k):
    def inner(x):
        if x.sum() > 0:
            return x * k
        return x
    return inner


def deco(fn):
    @functools.wraps(fn)
    def wrapper(*a):
        return fn(*a) + 100.0
    return wrapper


@deco
def decorated(x):
    if x.sum() > 0:
        return x
    return -x


def helper(x):
    if x.sum() > 0:
        return x * 10.0
    return x


def caller(x):
    return helper(x) + 1.0


def nested(x):
    def g(y):
        if y.sum() > 0:
            return y
        return -y
    return g(x) + 1.0


class Base:
    def f(self, x):
        if x.sum() > 0:
            return x + self.k
        return x


class Child(Base):
    k = 5.0

    def f(self, x):
        return super().f(x) * self.__two()

    def __two(self):
        return 2.0

    def __call__(self, x):
        return self.f(x)


calls = 0


def counting(x):
    global calls
    calls = calls + 1
    if x.sum() > 0:
        x = x + 1.0
    return x


def lam():
    return lambda x: x * 2.0 if x.sum() > 0 else x - 1.0
'''


@pytest.fixture(scope="module")
def m():
    return load(MODULE, "f").__globals__


def test_convert_keeps_signature_doc_defaults_and_results(m):
    f = m["f"]
    g = ast_hybrid.convert(f)
    assert inspect.signature(g) == inspect.signature(f)
    assert g.__doc__ == f.__doc__ and g.__name__ == "f" and g.__qualname__ == f.__qualname__
    for x in (X, -X):
        np.testing.assert_allclose(g(x), f(x))
        np.testing.assert_allclose(jax.jit(g)(x), f(x))
        np.testing.assert_allclose(ast_hybrid.jit(f)(x, 2.0, shift=1.0), f(x, 2.0, shift=1.0))


def test_globals_and_closures_stay_live(m):
    f = m["f"]
    g = ast_hybrid.convert(f)
    m["SCALE"] = 5.0
    try:
        np.testing.assert_allclose(g(X), f(X))
    finally:
        m["SCALE"] = 2.0
    inner = m["make"](3.0)
    h = ast_hybrid.jit(inner)
    np.testing.assert_allclose(h(X), inner(X))
    # a different closure of the same code: same conversion, its own cell
    np.testing.assert_allclose(ast_hybrid.jit(m["make"](-1.0))(X), m["make"](-1.0)(X))


def test_decorated_helper_nested_method_super_callable(m):
    for name in ("decorated", "caller", "nested"):
        for x in (X, -X):
            np.testing.assert_allclose(ast_hybrid.jit(m[name])(x), m[name](x), err_msg=name)
    obj = m["Child"]()
    for x in (X, -X):
        np.testing.assert_allclose(ast_hybrid.jit(obj.f)(x), obj.f(x))
        np.testing.assert_allclose(ast_hybrid.jit(obj)(x), obj(x))


def test_global_statement(m):
    before = m["calls"]
    np.testing.assert_allclose(ast_hybrid.convert(m["counting"])(X), X + 1.0)
    assert m["calls"] == before + 1


def test_lambda(m):
    fn = m["lam"]()
    for x in (X, -X):
        np.testing.assert_allclose(ast_hybrid.jit(fn)(x), fn(x))


def test_conversion_is_cached(m, monkeypatch):
    from ast_hybrid.transpiler import converter
    from ast_hybrid.common.source import SourceFile

    f = load(MODULE, "f")        # a fresh function nobody converted yet
    reads = []
    real = SourceFile.from_code.__func__
    monkeypatch.setattr(SourceFile, "from_code", classmethod(lambda cls, code: reads.append(code) or real(cls, code)))
    g1 = ast_hybrid.convert(f)
    g2 = ast_hybrid.convert(f)
    assert g1 is g2 and len(reads) == 1
    jitted = ast_hybrid.jit(f)
    jitted(X)
    jitted(-X)
    assert len(reads) == 1
    assert converter.converted_code(f.__code__) is converter.converted_code(f.__code__)
    assert ast_hybrid.convert(g1) is g1                     # converting converted code is a no-op


def test_jit_as_decorator_with_options():
    f = load('''
    import ast_hybrid

    @ast_hybrid.jit(static_argnums=1)
    def f(x, n):
        for i in range(n):
            x = x * 2.0
        return x
    ''')
    np.testing.assert_allclose(f(X, 3), X * 8.0)


def test_do_not_convert():
    m = load('''
    import ast_hybrid

    @ast_hybrid.do_not_convert
    def plain(x):
        if x.sum() > 0:
            return x
        return -x

    def f(x):
        return plain(x)
    ''').__globals__
    assert ast_hybrid.convert(m["plain"]) is m["plain"]
    np.testing.assert_allclose(ast_hybrid.convert(m["f"])(X), X)          # eager: plain Python is fine
    with pytest.raises(jax.errors.TracerBoolConversionError):
        ast_hybrid.jit(m["f"])(X)                                         # not converted: jax's own error


def test_to_source_shows_runtime_calls(m):
    text = ast_hybrid.to_source(m["f"])
    assert "ah__.if_stmt(" in text and text.startswith("def f(")
    compile(text, "<to_source>", "exec")
    assert ast_hybrid.to_source(m["Child"]().f).startswith("def f(self, x):")


def test_cli_convert_prints_generated_source(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODULE)
    out = subprocess.run([sys.executable, "-m", "ast_hybrid", "convert", f"{path}::Child.f"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "(super, (__class__, self), None)" in out.stdout and "self._Child__two" in out.stdout
    everything = subprocess.run([sys.executable, "-m", "ast_hybrid", "convert", str(path)],
                                capture_output=True, text=True)
    assert everything.returncode == 0 and everything.stdout.count("# --- ") >= 10
    missing = subprocess.run([sys.executable, "-m", "ast_hybrid", "convert", f"{path}::nope"],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "defines no function `nope`" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_bad_input_is_a_diagnostic_never_a_traceback(tmp_path):
    ns = {}
    exec("def from_exec(x):\n    return x\n", ns)
    gen = load("def g(x):\n    yield x\n", "g")
    agen = load("async def a(x):\n    return x\n", "a")
    cases = [(ns["from_exec"], "Python kept no source"), (len, "not a Python function"),
             (gen, "generator"), (agen, "async"), (dict, "it is a class")]
    for fn, why in cases:
        with pytest.raises(ConversionError) as info:
            ast_hybrid.jit(fn)
        (d,) = info.value.diagnostics
        assert d.code == "HY034" and why in d.message, d.message
        assert "Traceback" not in str(info.value)


def test_max_iterations_must_be_positive():
    with pytest.raises(ValueError, match="max_iterations"):
        ast_hybrid.convert(lambda x: x, max_iterations=0)


def test_helpers_of_installed_packages_are_converted_but_not_numerical_libraries(tmp_path, monkeypatch):
    pkg = tmp_path / "site" / "zoo_helpers"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "def gate(F, x):\n    if x.sum() > 0:\n        return x * 2.0\n    return -x\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    f = load('''
    import jax.numpy as jnp
    from zoo_helpers import gate

    def f(x):
        return gate(jnp, x) + jnp.tanh(x).sum()
    ''')
    for x in (X, -X):
        np.testing.assert_allclose(ast_hybrid.jit(f)(x), f(x), rtol=1e-6)
    from ast_hybrid.transpiler.runtime.calls import should_convert
    assert not should_convert(jnp.tanh) and not should_convert(np.linalg.norm)
    assert not should_convert(inspect.getsource) and should_convert(f)
