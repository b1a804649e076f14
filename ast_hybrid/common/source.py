"""Sources and locations: the one place that knows where code comes from.

Both the linter and the transpiler read user code through this module.  It
reads a file (honouring PEP 263 coding cookies and BOMs) or the source of a
live function, parses it with :mod:`gast`, and maps every node back to a
:class:`Span` in the *user's* file: 1-based lines, 1-based columns counted in
characters (not the UTF-8 bytes :mod:`ast` uses), also for methods and nested
functions whose source was dedented before parsing.

>>> src = SourceFile.from_text("def f(x):\\n    return x + 1\\n", "m.py")
>>> ret = src.parse().body[0].body[0]
>>> src.span(ret)
Span(line=2, col=5, end_line=2, end_col=17)
>>> src.line(2)
'    return x + 1'

Nothing here imports or executes the code it reads (``from_code`` reads
the source of a code object that is already live).
"""

from __future__ import annotations

import ast
import inspect
import io
import linecache
import os
import textwrap
import tokenize
import types
from dataclasses import dataclass, field

from .gastconv import to_gast

__all__ = ["Span", "SourceFile", "SourceError", "read_file"]


@dataclass(frozen=True, order=True)
class Span:
    """A range in a user's file: 1-based lines, 1-based character columns.

    ``end_col`` is exclusive (the column just after the last character), as
    in ruff's ``end_location``.
    """

    line: int
    col: int
    end_line: int
    end_col: int

    @classmethod
    def point(cls, line: int, col: int) -> "Span":
        return cls(line, col, line, col + 1)


class SourceError(Exception):
    """A source could not be read or parsed.

    ``span`` is set when the problem has a position (a syntax error, an
    undecodable byte); ``source`` when the text could be decoded.
    """

    def __init__(self, message: str, path: str, span: Span | None = None,
                 source: "SourceFile | None" = None, kind: str = "parse"):
        super().__init__(message)
        self.message = message
        self.path = path
        self.span = span
        self.source = source
        self.kind = kind  # "parse", "decode", "io", "nosource"


@dataclass
class SourceFile:
    """Text of (part of) a user's file, and how it maps onto that file.

    ``text`` is what gets parsed.  When it is a dedented excerpt of a larger
    file (a method's source), ``first_line`` is the file line of its first
    line and ``indent`` the number of characters removed from the front of
    every line.  ``file_lines`` holds the whole file's lines when known, so
    diagnostics can quote the user's real line.
    """

    text: str
    path: str
    first_line: int = 1
    indent: int = 0
    file_lines: list[str] | None = None
    _lines: list[str] = field(default=None, repr=False)  # type: ignore[assignment]
    _tree: object = field(default=None, repr=False)
    _ast: object = field(default=None, repr=False)   # the ast tree of ``text``, when already parsed
    #: ``text`` is an indented excerpt under a synthetic ``if 1:`` line (see ``_excerpt``)
    wrapped: bool = False

    # -- construction -----------------------------------------------------
    @classmethod
    def from_text(cls, text: str, path: str = "<string>") -> "SourceFile":
        return cls(text=text, path=path)

    @classmethod
    def from_bytes(cls, data: bytes, path: str) -> "SourceFile":
        """Decode as Python does: BOM, coding cookie, else UTF-8."""
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError as exc:  # bad or unknown coding cookie
            raise SourceError(f"cannot decode: {exc.msg}", path,
                              Span.point(exc.lineno or 1, 1), kind="decode") from None
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            line_start = data.rfind(b"\n", 0, exc.start) + 1
            col = len(data[line_start:exc.start].decode(encoding, "replace")) + 1
            raise SourceError(
                f"cannot decode byte 0x{data[exc.start]:02x} as {encoding}",
                path, Span.point(line, col), kind="decode") from None
        if text.startswith("\ufeff"):
            text = text[1:]
        return cls(text=text, path=path)

    @classmethod
    def from_code(cls, code) -> "SourceFile":
        """The source of the ``def`` (or the line of the ``lambda``) that compiled to ``code``.

        It never follows ``__wrapped__``: a decorator's wrapper is its own
        function, with its own source.
        """
        path = code.co_filename
        found = _def_lines(code)
        if found is not None:
            lines, first, dedented, tree = found
        else:
            try:
                lines, first = inspect.getsourcelines(code)
            except (OSError, TypeError, IndexError) as exc:
                raise SourceError(f"no source is available for {code.co_qualname}: {exc}", path,
                                  kind="nosource") from None
            return cls._excerpt(lines, first, path)
        file_lines = [ln.rstrip("\r\n") for ln in linecache.getlines(path)] or None
        return cls(text=dedented, path=path, first_line=max(first, 1),
                   indent=_removed_indent("".join(lines), dedented), file_lines=file_lines, _ast=tree)

    @classmethod
    def _excerpt(cls, lines, first, path) -> "SourceFile":
        """The lines of a ``def`` from ``path`` (``first`` its first line), made parsable.

        Dedented when they can be; when a line inside a string reaches column 0
        there is nothing to remove, and the lines are parsed as they stand under a
        synthetic ``if 1:`` (one line before the ``def``; :meth:`parse` unwraps it),
        so the string keeps its value and every column is the file's.
        """
        text = "".join(lines)
        dedented = textwrap.dedent(text)
        file_lines = [ln.rstrip("\r\n") for ln in linecache.getlines(path)] or None
        if dedented[:1] in (" ", "\t") and first > 1:
            return cls(text="if 1:\n" + text, path=path, first_line=first - 1, indent=0,
                       file_lines=file_lines, wrapped=True)
        return cls(text=dedented, path=path, first_line=max(first, 1),
                   indent=_removed_indent(text, dedented), file_lines=file_lines)

    # -- parsing ------------------------------------------------------------
    def parse(self):
        """The gast tree of ``text`` (cached); :class:`SourceError` if it is not Python."""
        if self._tree is None:
            tree, self._ast = self._ast or self.parse_ast(), None
            if self.wrapped:        # the synthetic `if 1:` of an excerpt that could not be dedented
                tree = ast.Module(body=tree.body[0].body, type_ignores=[])
            self._tree = to_gast(tree)
        return self._tree

    def parse_ast(self) -> ast.Module:
        """The standard-library :mod:`ast` tree (faster, no gast conversion)."""
        try:
            return ast.parse(self.text, filename=self.path, type_comments=False)
        except SyntaxError as exc:
            raise self._syntax_error(exc) from None
        except ValueError as exc:  # e.g. null bytes on Python 3.11
            line, col = _null_byte_position(self.text)
            raise SourceError(f"cannot parse: {exc}", self.path,
                              self._user_point(line, col), source=self) from None

    def _syntax_error(self, exc: SyntaxError) -> SourceError:
        line = exc.lineno or 1
        col = exc.offset or 1  # 1-based character offset on Python >= 3.10
        span = self._user_point(line, max(col, 1))
        msg = exc.msg
        return SourceError(f"SyntaxError: {msg}", self.path, span, source=self)

    # -- locations ----------------------------------------------------------
    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = self.text.splitlines()
        return self._lines

    def _user_point(self, line: int, col: int) -> Span:
        return Span.point(line + self.first_line - 1, col + self.indent)

    def _char_col(self, line: int, byte_col: int) -> int:
        """0-based character column of a 0-based UTF-8 byte column in ``text``."""
        if not 1 <= line <= len(self.lines):
            return byte_col
        text = self.lines[line - 1]
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def span(self, node) -> Span:
        """The user-file span of a gast/ast node parsed from ``text``."""
        line = getattr(node, "lineno", None)
        if line is None:
            return Span.point(self.first_line, 1 + self.indent)
        col = getattr(node, "col_offset", 0) or 0
        end_line = getattr(node, "end_lineno", None) or line
        end_col = getattr(node, "end_col_offset", None)
        if end_col is None:
            end_col = col + 1
        off_l = self.first_line - 1
        return Span(line + off_l, self._char_col(line, col) + 1 + self.indent,
                    end_line + off_l, self._char_col(end_line, end_col) + 1 + self.indent)

    def line(self, lineno: int) -> str:
        """Line ``lineno`` (1-based, user-file numbering), without its newline."""
        if self.file_lines is not None:
            if 1 <= lineno <= len(self.file_lines):
                return self.file_lines[lineno - 1]
            return ""
        idx = lineno - self.first_line
        if 0 <= idx < len(self.lines):
            return " " * self.indent + self.lines[idx] if self.indent else self.lines[idx]
        return ""

    def offset(self, line: int, col: int) -> int:
        """Character offset into ``text`` of a user-file (line, col) position."""
        idx = line - self.first_line
        pos = 0
        for ln in self.text.splitlines(keepends=True)[:idx]:
            pos += len(ln)
        return pos + col - 1 - self.indent


def read_file(path: str | os.PathLike) -> SourceFile:
    """Read and decode a Python file; :class:`SourceError` if that is impossible."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except IsADirectoryError:
        raise SourceError("is a directory, not a Python file", path, kind="io") from None
    except FileNotFoundError:
        raise SourceError("no such file or directory", path, kind="io") from None
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}", path, kind="io") from None
    return SourceFile.from_bytes(data, path)


def _def_lines(code):
    """``(lines, first line, dedented text, its ast tree)`` of the ``def`` that compiled to
    ``code``, found without tokenizing.

    :func:`inspect.getsourcelines` tokenizes from the ``def`` on to find where the
    block ends (1.5 ms for 100 lines).  The code object already says where its
    instructions end (the last line of any position in it or its nested code); the
    block runs on over lines that are blank or indented deeper than the ``def`` (a
    trailing ``pass`` or comment).  The excerpt is checked by parsing it (the tree
    is returned, not parsed again): when it is not exactly one ``def`` of that name
    (a lambda, a string reaching column 0), None, and the caller asks :mod:`inspect`.
    """
    if code.co_name == "<lambda>":
        return None
    all_lines = linecache.getlines(code.co_filename)
    start = code.co_firstlineno - 1
    if not 0 <= start < len(all_lines):
        return None
    end, todo = start, [code]
    while todo:
        c = todo.pop()
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        end = max([end] + [p[1] for p in c.co_positions() if p[1] is not None])
    head = all_lines[start]
    indent = len(head) - len(head.lstrip())
    while end < len(all_lines):
        line = all_lines[end]
        stripped = line.lstrip()
        if stripped and len(line) - len(stripped) <= indent:
            break
        end += 1
    lines = all_lines[start:end]
    text = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(text, filename=code.co_filename, type_comments=False)
    except (SyntaxError, ValueError):
        return None
    if (len(tree.body) != 1 or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef))
            or tree.body[0].name != code.co_name):
        return None
    return lines, start + 1, text, tree


def _removed_indent(original: str, dedented: str) -> int:
    for a, b in zip(original.splitlines(), dedented.splitlines()):
        if b.strip():
            return len(a) - len(b)
    return 0


def _null_byte_position(text: str) -> tuple[int, int]:
    pos = text.find("\0")
    if pos < 0:
        return 1, 1
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1
