"""How fast `ms-migrate lsp` answers on a 1,000-line torch file, as an editor sees it.

    .venv/bin/python -m benchmarks.lsp_latency [--file FILE] [--edits N]

Starts the server over stdio with a real LSP client (pygls), waits for its
warm-up, opens the file (by default the samples/ programs joined into one file
of at least 1,000 lines: models and training scripts) and then edits it N times
(one line each, as typing does; the debounce is set to 0 so that the figures
are the server's own). For each edit it prints the time from the change to the
first diagnostics (the conversion's) and to those with analyze's hazards (both
run at once, in two worker processes), the CPU time the server's
worker thread spent (from the server's log: on a shared machine wall time
grows with the neighbours' load, CPU time much less), how long a request that
needs no conversion waited while one ran (the event loop is never blocked),
and the convert code action's answer once the text is converted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pathlib
import re
import statistics
import sys
import tempfile
import time

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = pathlib.Path(__file__).resolve().parent.parent
_LOGGED = re.compile(r"ms-migrate: (converted|analysed) (\S+).* in ([\d.]+) s \(CPU ([\d.]+) s\)")


def sample_file(lines: int = 1000) -> str:
    """The samples/ programs, whole, one after another until ``lines`` lines."""
    parts, count = [], 0
    for path in sorted((ROOT / "samples").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        parts.append(f"# ---- samples/{path.name}\n{text}")
        count += text.count("\n") + 1
        if count >= lines:
            break
    return "\n".join(parts)


class Bench:
    def __init__(self):
        self.client = LanguageClient("lsp-latency", "1")
        self.published: dict[str, list[tuple[float, int]]] = {}  # uri -> (time, diagnostics)
        self.logged: list[tuple[float, str, str, float, float]] = []  # (time, what, file, seconds, cpu)
        self.warm = asyncio.Event()

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams):
            self.published.setdefault(params.uri, []).append((time.perf_counter(), len(params.diagnostics)))

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def logged(params: types.LogMessageParams):
            if "warmed up" in params.message:
                self.warm.set()
            match = _LOGGED.search(params.message)
            if match:
                what, name, seconds, cpu = match.groups()
                self.logged.append((time.perf_counter(), what, name, float(seconds), float(cpu)))

    async def settled(self, uri: str, since: int, logged: int, timeout: float = 600) -> list[tuple[float, int]]:
        """The publishes for ``uri`` after the first ``since``, once the server has logged
        both the conversion and the analysis after the first ``logged`` lines and published
        after them (once if analyze was done first, else twice)."""
        deadline = time.perf_counter() + timeout
        while True:
            if time.perf_counter() > deadline:
                raise TimeoutError(f"diagnostics for {uri}")
            done = {what: at for at, what, *_ in self.logged[logged:]}
            new = self.published.get(uri, [])[since:]
            if len(done) == 2 and new and new[-1][0] >= max(done.values()):
                return new
            await asyncio.sleep(0.005)


async def run(text: str, edits: int) -> None:
    bench = Bench()
    client = bench.client
    folder = pathlib.Path(tempfile.mkdtemp(prefix="lsp-latency-"))
    await client.start_io(sys.executable, "-m", "transpiler", "lsp")
    start = time.perf_counter()
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(), initialization_options={"debounce": 0}))
    client.initialized(types.InitializedParams())
    await asyncio.wait_for(bench.warm.wait(), 600)
    print(f"warm-up (imports, rules, catalog): {time.perf_counter() - start:.1f} s")

    path = folder / "big_model.py"
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    n_lines = text.count("\n") + 1
    print(f"file: {n_lines} lines")
    opened = time.perf_counter()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    published = await bench.settled(uri, 0, len(bench.logged))
    first, full = published[0], published[-1]
    print(f"open: first diagnostics after {first[0] - opened:.2f} s ({first[1]}), "
          f"with analyze's hazards after {full[0] - opened:.2f} s ({full[1]})")

    rows = []
    lines = text.split("\n")
    for version in range(2, edits + 2):
        line = len(lines) // 2 + version  # a line in the middle: a new comment at its end
        position = types.Position(line=line, character=len(lines[line]))
        count = len(bench.published[uri])
        logged = len(bench.logged)
        changed = time.perf_counter()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(start=position, end=position), text=f"  # edit {version}")]))
        lines[line] += f"  # edit {version}"
        await asyncio.sleep(0.05)  # the conversion has started: is the server still answering?
        asked = time.perf_counter()
        await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=position, end=position),
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.QuickFix])))
        answered = time.perf_counter() - asked  # the conversion is still running (or queued)
        published = await bench.settled(uri, count, logged)
        converted, analysed = published[0], published[-1]
        asked = time.perf_counter()
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=position, end=position), context=types.CodeActionContext(diagnostics=[])))
        action = time.perf_counter() - asked
        assert actions, "no code action"
        cpu = {what: c for _, what, _, _, c in bench.logged[logged:]}
        rows.append((converted[0] - changed, analysed[0] - changed, cpu.get("converted", float("nan")),
                     cpu.get("analysed", float("nan")), answered, action))

    print(f"\n{edits} edits (one line each), seconds:")
    print(f"{'to first':>14} {'to hazards':>11} {'convert CPU':>12} {'analyse CPU':>12} "
          f"{'other request':>14} {'convert action':>15}")
    for row in rows:
        print(" ".join(f"{value:>{width}.3f}" for value, width in zip(row, (14, 11, 12, 12, 14, 15))))
    medians = [statistics.median(column) for column in zip(*rows)]
    print("median " + " ".join(f"{value:.3f}" for value in medians))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\nA warm server answers an edit of this {n_lines}-line file with the conversion's diagnostics in "
          f"{medians[0]:.2f} s (median; {medians[2]:.2f} s of CPU), with analyze's hazards in {medians[1]:.2f} s; "
          f"a request that needs no conversion waited {medians[4] * 1000:.0f} ms during one; the convert action "
          f"answered in {medians[5] * 1000:.0f} ms. Load average {load:.1f} on {os.cpu_count()} CPUs.")
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", help="a torch file to use (default: samples/ joined to 1,000 lines)")
    parser.add_argument("--edits", type=int, default=5, help="edits to time (default 5)")
    args = parser.parse_args(argv)
    text = pathlib.Path(args.file).read_text(encoding="utf-8") if args.file else sample_file()
    asyncio.run(run(text, args.edits))
    return 0


if __name__ == "__main__":
    sys.exit(main())
