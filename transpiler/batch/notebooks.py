"""Jupyter notebooks: their code cells go through the same per-file pipeline
as a .py file, converted together so that a cell knows the imports and
classes of the cells above it.

The code cells are joined into one source, each after a boundary comment,
converted once, and split back at the boundaries. IPython syntax is left
exactly as written: lines that IPython's own input transformer rewrites
(``%magic``, ``!shell``, ``x = !cmd``, ``obj?``) are masked by a placeholder
statement during the conversion and restored afterwards; a cell magic whose
body is Python (``%%time``, ``%%capture`` ...) has its body converted, any
other (``%%bash``, ``%%html`` ...) is left alone. Markdown and raw cells and
all metadata are kept; outputs (computed by the torch code) are cleared unless
asked to keep them. Diagnostics name the cell: ``nb.ipynb:cell 3:2:5``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace

from transpiler.convert.pipeline import FileResult, convert_source, mentions_torch
from transpiler.convert.diagnostics import Diagnostic, Outcome, Severity

# cell magics whose body is Python code run in this kernel or a Python process
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "python", "python3", "pypy"})


@dataclass
class _Cell:
    index: int  # position in the notebook (cells are numbered from 1 for people)
    source: str
    code: str = ""  # what is converted: IPython lines masked, cell magic line removed; ends with a newline
    newline: bool = True  # whether the cell's source ends with one
    header: str = ""  # a Python cell magic line, put back in front
    leading: str = ""  # blank lines before the code, put back in front
    masked: dict[str, str] = field(default_factory=dict)  # placeholder -> original line (without indentation)
    first_line: int = 0  # line of the code's first line in the joined source


def convert_notebook(text: str, path: str, keep_outputs: bool = False, rules=None,
                     line_length: int | None = None, jit_steps: bool = False,
                     runtime_settings: bool = False) -> FileResult:
    """The converted notebook as JSON text (``rules``: default ms-migrate's). Never raises."""
    import nbformat

    try:
        notebook = nbformat.reads(text, as_version=4)
    except Exception as exc:  # nbformat raises many kinds for broken JSON or schema
        message = " ".join(f"not a readable notebook: {exc}".split())
        return FileResult(path, "failed", None, [Diagnostic(path, 1, 1, "notebook", Severity.ERROR, message)])
    if not is_python(notebook):
        return FileResult(path, "unchanged", text)
    if not any(mentions_torch(cell.source, rules) for cell in notebook.cells if cell.cell_type == "code"):
        return FileResult(path, "unchanged", text)
    joined, cells, left_alone, token = joined_code(notebook, text)
    diagnostics = [Diagnostic(path, 1, 1, "notebook", Severity.MARKER, f"cell not converted: {problem}",
                              Outcome.MARKED, cell=i + 1)
                   for i, problem in left_alone if mentions_torch(notebook.cells[i].source, rules)]
    result = convert_source(joined, path, rules, line_length=line_length, jit_steps=jit_steps,
                            runtime_settings=runtime_settings)
    diagnostics += [in_cell(d, cells) for d in result.diagnostics]
    if result.output is None:
        return FileResult(path, "failed", None, diagnostics, result.timings)
    converted = _split(result.output, cells, token)
    if converted is None:
        message = "internal error: the converted cells could not be told apart; please report"
        diagnostics.append(Diagnostic(path, 1, 1, "internal", Severity.ERROR, message))
        return FileResult(path, "failed", None, diagnostics, result.timings)
    changed = False
    for cell, code in zip(cells, converted):
        if code != cell.code:
            if not cell.newline:
                code = code[:-1] if code.endswith("\n") else code
            notebook.cells[cell.index].source = cell.leading + cell.header + code
            changed = True
    if not keep_outputs:
        changed |= _clear_outputs(notebook)
    if not changed:
        return FileResult(path, "unchanged", text, diagnostics, result.timings)
    output = nbformat.writes(notebook)
    output += "" if output.endswith("\n") else "\n"  # as Jupyter writes the file
    return FileResult(path, "converted", output, diagnostics, result.timings)


def is_python(notebook) -> bool:
    language = notebook.metadata.get("language_info", {}).get("name") or \
        notebook.metadata.get("kernelspec", {}).get("language") or "python"
    return language.lower() == "python"


def joined_code(notebook, text: str) -> tuple[str, list[_Cell], list[tuple[int, str]], str]:
    """The code cells joined in order into one source (each knows the imports above it):
    the source, its cells, the cells left alone with why (index, reason), and the token
    that tells the cells apart in it."""
    token = hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=6).hexdigest()
    cells, left_alone = [], []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        prepared, problem = _prepare(index, cell.source, token)
        if prepared is not None:
            cells.append(prepared)
        elif problem is not None:
            left_alone.append((index, problem))
    return _join(cells, token), cells, left_alone, token


def _prepare(index: int, source: str, token: str) -> tuple[_Cell | None, str | None]:
    """The cell ready to join, or None and why it is left alone."""
    body = source.lstrip("\n")
    cell = _Cell(index, source, leading=source[: len(source) - len(body)], newline=source.endswith("\n"))
    if body.startswith("%%"):
        magic = body[2:].split(None, 1)[0] if body[2:].strip() else ""
        if magic not in PYTHON_CELL_MAGICS:
            return None, f"%%{magic} cell"
        header, newline, body = body.partition("\n")
        cell.header = header + newline
    if not body.endswith("\n"):
        body += "\n"
    lines = _lines(body)
    python = _ipython_as_python(body)
    if python is None:
        return None, "IPython cannot read it"
    python_lines = _lines(python if python.endswith("\n") else python + "\n")
    if len(python_lines) != len(lines):
        return None, "IPython syntax spread over several lines"
    for n, (line, plain) in enumerate(zip(lines, python_lines)):
        if line != plain:  # IPython syntax on this line
            indent = line[: len(line) - len(line.lstrip(" \t"))]
            placeholder = f"ms_migrate_ipython_{token}_{index}_{n}"
            cell.masked[placeholder] = line.strip("\r\n")[len(indent):]
            lines[n] = f"{indent}{placeholder}\n"
    cell.code = "".join(lines)
    try:
        compile(cell.code, f"<cell {index + 1}>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return None, f"syntax error at line {exc.lineno or 1}: {exc.msg}"
    except (ValueError, MemoryError, RecursionError) as exc:
        return None, f"cannot be compiled: {exc}"
    return cell, None


def _lines(text: str) -> list[str]:
    """The lines of ``text`` (which ends with a newline), split on newlines only."""
    return [line + "\n" for line in text.split("\n")[:-1]]


def _ipython_as_python(body: str) -> str | None:
    """The cell as IPython runs it (its magics rewritten into calls)."""
    from IPython.core.inputtransformer2 import TransformerManager

    manager = TransformerManager()
    manager.cleanup_transforms = []  # keep leading indentation and prompts as written
    try:
        return manager.transform_cell(body)
    except Exception:  # IPython's transformer can raise on odd input
        return None


def _boundary(token: str, index: int) -> str:
    return f"# ms-migrate-cell-{token}-{index}"


def _join(cells: list[_Cell], token: str) -> str:
    parts, line = [], 1
    for cell in cells:
        parts.append(_boundary(token, cell.index) + "\n")
        cell.first_line = line + 1
        parts.append(cell.code)
        line += 1 + cell.code.count("\n")
    return "".join(parts)


def _split(output: str, cells: list[_Cell], token: str) -> list[str] | None:
    """Each cell's converted code, or None when the boundaries did not survive
    in order (then nothing is written)."""
    pattern = re.compile(rf"^[ \t]*# ms-migrate-cell-{token}-(\d+)[ \t]*\r?\n", re.MULTILINE)
    found = list(pattern.finditer(output))
    if [int(m.group(1)) for m in found] != [c.index for c in cells]:
        return None
    pieces = []
    for n, (cell, match) in enumerate(zip(cells, found)):
        end = found[n + 1].start() if n + 1 < len(found) else len(output)
        piece = output[match.end():end]
        if n == 0:
            piece = output[:match.start()] + piece  # anything added above the first cell (imports) joins it
        piece = _unmask(piece, cell)
        if piece is None:
            return None
        pieces.append(piece)
    return pieces


def _unmask(code: str, cell: _Cell) -> str | None:
    for placeholder, line in cell.masked.items():
        pattern = re.compile(rf"^([ \t]*){placeholder}[ \t]*$", re.MULTILINE)
        code, count = pattern.subn(lambda m: m.group(1) + line, code)
        if count != 1:
            return None
    return code


def in_cell(item, cells: list[_Cell]):
    """``item`` (a dataclass with ``line`` and ``cell``: a diagnostic, a finding) placed at
    its line in its cell instead of in the joined source."""
    owner = None
    for cell in cells:
        if cell.first_line <= item.line:
            owner = cell
    if owner is None:
        return item
    line = item.line - owner.first_line + 1 + owner.leading.count("\n") + owner.header.count("\n")
    return replace(item, line=line, cell=owner.index + 1)


def _clear_outputs(notebook) -> bool:
    cleared = False
    for cell in notebook.cells:
        if cell.cell_type == "code" and (cell.get("outputs") or cell.get("execution_count") is not None):
            cell.outputs = []
            cell.execution_count = None
            cleared = True
    return cleared
