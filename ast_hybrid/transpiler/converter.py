"""Converting one Python function: source -> checks -> pipeline -> code -> a new function.

:func:`convert_function` is the whole path for a plain function:

1. read its source through :mod:`ast_hybrid.common.source` (the code object's own
   ``def``, not what ``__wrapped__`` points to) and parse it with gast;
2. refuse what cannot be converted, with diagnostics pointing at the user's
   file: no source, generators, async functions (HY034); ask the linter for the
   in-place ops and host syncs (HY001-HY004) in the function, which are refused
   at run time when they meet a traced value (the ``refusals`` pass);
3. run :func:`ast_hybrid.transpiler.pipeline.transform`;
4. wrap the result in a factory ``def ah__factory(ah__, <free variables>)`` and
   compile it (:func:`compile_tree`) with every location moved to the user's file
   (:func:`~ast_hybrid.transpiler.ast_tools.origin.user_ast`), under the user's file name, so tracebacks
   and the runtime's diagnostics show the user's lines;
5. build the new function from the compiled code with the original's globals,
   defaults and closure cells (closures stay live), plus one new cell: ``ah__``,
   a :class:`~ast_hybrid.transpiler.runtime.Runtime` of its own.

Steps 1-4 depend only on the code object and are cached by it
(:class:`Converted`); step 5 is cheap and is done per function object.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import inspect
import types
import weakref

import gast

from ast_hybrid.common.diagnostics import ConversionError, Diagnostic
from ast_hybrid.common.rules import RULES
from .ast_tools.naming import PREFIX, RUNTIME, Namer
from .ast_tools.origin import user_ast
from ast_hybrid.common.source import SourceError, SourceFile, Span
from ast_hybrid.common.walkers import parameters

__all__ = ["Converted", "converted_code", "convert_function", "transform_function", "compile_tree", "inner_code",
           "bind", "cannot_convert", "lint_refusals", "PRECHECK_CODES", "collector_paused", "enclosing_class_name"]

#: Linter findings that make conversion refuse a function (in-place ops, host syncs).
PRECHECK_CODES = frozenset({"HY001", "HY002", "HY003", "HY004"})

_FACTORY = "ah__factory"
_GENERATORS = inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR
_ASYNC = inspect.CO_COROUTINE | inspect.CO_ITERABLE_COROUTINE


class Converted:
    """The conversion of one code object: compiled code, generated tree, and what the runtime reports from."""

    __slots__ = ("code", "tree", "source", "sites", "refusals", "__weakref__")

    def __init__(self, code, tree, source, sites, refusals=()):
        self.code, self.tree, self.source, self.sites = code, tree, source, sites
        self.refusals = list(refusals)

    def to_source(self) -> str:
        return gast.unparse(self.tree).strip() + "\n"


#: id(code) -> (weak reference to the code, its Converted).  By identity: code objects compare
#: equal across files (``co_filename`` is not part of ``==``), conversions must not.
_BY_CODE: dict = {}


def cannot_convert(fn, variant: str, source: SourceFile | None = None, node=None, **values) -> ConversionError:
    """HY034: ``fn`` cannot be converted at all; ``variant`` names the catalogue's wording of HY034
    that says why (``"generator"``, ``"async"``, ``"no-source"``, ...), ``values`` fill it in."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "co_qualname", None) or repr(fn)
    code = getattr(fn, "__code__", fn if isinstance(fn, types.CodeType) else None)
    path = code.co_filename if code is not None else "<unknown>"
    span, lines = None, None
    if source is not None:
        path = source.path
        span = source.span(node) if node is not None else Span.point(source.first_line, 1 + source.indent)
        lines = {span.line: source.line(span.line)}
    elif code is not None:
        span = Span.point(code.co_firstlineno, 1)
    rule = RULES["HY034"]
    message, help = rule.message(variant, name=name, **values)
    return ConversionError([Diagnostic("HY034", message, path, span, help=help, severity=rule.severity("jax"),
                                       source_lines=lines)])


def converted_code(code) -> Converted:
    """The (cached) conversion of ``code``."""
    key = id(code)
    entry = _BY_CODE.get(key)
    if entry is not None and entry[0]() is code:
        return entry[1]
    with collector_paused():
        got = _convert_code(code)
    _BY_CODE[key] = (weakref.ref(code, lambda _, key=key, table=_BY_CODE: table.pop(key, None)), got)
    return got


@contextlib.contextmanager
def collector_paused():
    """Conversion allocates thousands of short-lived AST nodes and makes no garbage cycles;
    with jax loaded, the cyclic collector's passes over the large heap they trigger cost
    as much as the conversion itself (measured: 77 -> 42 ms on bench/control_flow.py's
    100-line function)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _convert_code(code) -> Converted:
    if code.co_flags & _GENERATORS:
        raise cannot_convert(code, "generator")
    if code.co_flags & _ASYNC:
        raise cannot_convert(code, "async")
    try:
        source = SourceFile.from_code(code)
        module = source.parse()
    except SourceError as err:
        if err.kind == "nosource":
            raise cannot_convert(code, "no-source") from None
        raise cannot_convert(code, "unparsable", reason=err.message) from None
    fn = _find(module, code, source)
    refusals = lint_refusals(fn, source)
    try:
        tree, sites = transform_function(fn, source, enclosing_class_name(code), code.co_freevars, refusals)
        compiled = compile_tree(tree, source)
    except (ConversionError, RecursionError):
        raise
    except Exception as exc:   # a bug of ours: say so, where, and keep the cause chained
        message, help = RULES["HY999"].message("convert", name=code.co_qualname,
                                                   error=f"{type(exc).__name__}: {exc}")
        raise ConversionError([Diagnostic(
            "HY999", message, source.path, source.span(fn), help=help,
            source_lines={source.span(fn).line: source.line(source.span(fn).line)})]) from exc
    return Converted(inner_code(compiled, fn.name), tree.body[0].body[-2], source, sites, refusals)


def inner_code(compiled, name):
    """The code of the function ``name`` that the compiled factory module defines."""
    (factory_code,) = [c for c in compiled.co_consts if isinstance(c, types.CodeType)]
    (inner,) = [c for c in factory_code.co_consts if isinstance(c, types.CodeType) and c.co_name == name]
    return inner


def transform_function(fn, source: SourceFile, class_name=None, freevars=(), refusals=(), passes=None):
    """Run the pipeline (or just ``passes``) on ``fn`` (a gast FunctionDef parsed from ``source``).

    Returns ``(module, sites)``: a gast module holding ``def ah__factory(ah__, *freevars)``
    that defines and returns the converted function (its second last statement) (locations in ``source.text``
    coordinates: compile it with :func:`compile_tree`); and the sites the runtime
    reports from.
    """
    from .pipeline import PASSES, Context, transform

    # a nested function of converted code already calls the runtime: its ah__ is rebound
    freevars = [v for v in freevars if v != RUNTIME]
    # invented names start with the reserved prefix: only a user name that does can clash
    taken = set(freevars)
    if PREFIX in source.text:
        taken |= {n.id for n in gast.walk(fn) if isinstance(n, gast.Name)}
    ctx = Context(source, Namer(taken), class_name=class_name, refusals=list(refusals))
    name = fn.name
    fn = transform(fn, ctx, PASSES if passes is None else passes)
    # the function's own name, read inside it (recursion), is the module's global as in the user's
    # code, not the factory's local that its `def` binds (a closure's own name stays its free variable)
    own = [] if name in freevars else [gast.Global(names=[name])]
    factory = gast.FunctionDef(
        name=_FACTORY, args=_arguments([RUNTIME, *freevars]),
        body=[*own, fn, gast.Return(value=gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None))],
        decorator_list=[], returns=None, type_comment=None, type_params=[])
    return gast.Module(body=[factory], type_ignores=[]), ctx.sites


def compile_tree(tree, source: SourceFile):
    """The code of :func:`transform_function`'s module, every line and column the user's."""
    return compile(user_ast(tree, source), source.path, "exec", dont_inherit=True)


def _arguments(names):
    params = [gast.Name(id=n, ctx=gast.Param(), annotation=None, type_comment=None) for n in names]
    return gast.arguments(args=params, posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                          kwarg=None, defaults=[])


def enclosing_class_name(code):
    """The name of the class whose body defines ``code`` (for ``super()`` and name mangling), or None."""
    parts = code.co_qualname.split(".")
    if len(parts) >= 2 and parts[-2] != "<locals>":
        return parts[-2]
    return None


def _find(module, code, source):
    """The ``FunctionDef`` of ``code`` in its parsed source (a ``lambda`` becomes one)."""
    if code.co_name == "<lambda>":
        return _find_lambda(module, code, source)
    for node in module.body:
        if isinstance(node, gast.FunctionDef) and node.name == code.co_name:
            node.decorator_list = []   # the function object we were given is already decorated
            node.returns = None
            for a in gast.walk(node.args):
                if isinstance(a, gast.Name):
                    a.annotation = None
            return node
        if isinstance(node, gast.AsyncFunctionDef):
            raise cannot_convert(code, "async", source, node)
    raise cannot_convert(code, "def-not-found", source)


def _find_lambda(module, code, source):
    argnames = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    line = code.co_firstlineno - source.first_line + 1
    found = [n for n in gast.walk(module) if isinstance(n, gast.Lambda) and n.lineno == line
             and tuple(a.id for a in parameters(n.args, starred=False)) == argnames]
    if len(found) != 1:
        raise cannot_convert(code, "lambda-ambiguous" if found else "lambda-not-isolated", source)
    lam = found[0]
    body = [gast.Return(value=lam.body)]
    for n in body:
        gast.copy_location(n, lam.body)
    fn = gast.FunctionDef(name="ah__lambda", args=lam.args, body=body, decorator_list=[], returns=None,
                          type_comment=None, type_params=[])
    return gast.copy_location(fn, lam)


@functools.lru_cache(maxsize=32)
def _file_findings(path: str, text: str) -> tuple:
    if "forward" not in text:   # what check_source answers such a file without its linter (after parsing
        return ()               # it: HY020 on a syntax error, not one of PRECHECK_CODES)
    from ast_hybrid.linter import check_source

    return tuple(d for d in check_source(SourceFile.from_text(text, path), target="jax", imperative_notes=False)
                 if d.code in PRECHECK_CODES and d.severity.value == "error")


def lint_refusals(fn, source) -> list:
    """The linter's in-place/host-sync errors (HY001-HY004) inside ``fn``: refused at run time when traced."""
    if source.file_lines is not None:
        text = "\n".join(source.file_lines) + "\n"
    elif source.first_line == 1 and source.indent == 0:
        text = source.text          # a whole file, read by the CLI
    else:
        return []                   # an excerpt alone: no class, no entry point to lint
    span = source.span(fn)
    return [d for d in _file_findings(source.path, text)
            if d.span is not None and span.line <= d.span.line <= span.end_line]


def bind(code, fn, runtime, globals_=None):
    """A function of ``code`` with ``fn``'s globals, defaults and closure cells, ``ah__`` bound to ``runtime``."""
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    cells[RUNTIME] = types.CellType(runtime)
    closure = tuple(cells[n] for n in code.co_freevars)
    return types.FunctionType(code, fn.__globals__ if globals_ is None else globals_, fn.__name__,
                              fn.__defaults__, closure)


def convert_function(fn, options: dict, converter):
    """A new function: ``fn``'s converted code with ``fn``'s globals, defaults and closure."""
    conv = converted_code(fn.__code__)
    from .runtime import Runtime

    rt = Runtime(options, conv.source, conv.sites, fn.__qualname__, converter, conv.refusals)
    new = bind(conv.code, fn, rt)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__dict__.update(fn.__dict__)
    new.__qualname__, new.__module__, new.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
    new.__annotations__ = dict(getattr(fn, "__annotations__", {}) or {})
    new.__ah_converted__ = True
    return new
