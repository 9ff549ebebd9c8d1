"""Real parameter counts: import each file in a child process (user code may do
anything on import) and instantiate its nn.Module classes that take no
arguments. Run as ``python -m transpiler.analyze.param_probe``: reads
``[{"path": ..., "classes": [...]}, ...]`` as JSON on stdin, prints one JSON
line per class as soon as it is known, so a timeout keeps what was found.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys


def count_parameters(requests: list[dict], timeout: float) -> dict[str, dict[str, int | str]]:
    """path -> class -> parameter count, or the reason there is none."""
    counts: dict[str, dict[str, int | str]] = {}
    if not requests or timeout <= 0:
        return counts
    env = {**os.environ, "GLOG_v": "3", "CUDA_VISIBLE_DEVICES": "", "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "transpiler.analyze.param_probe"], input=json.dumps(requests),
            capture_output=True, text=True, timeout=timeout, env=env,
            cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
        )
        output = done.stdout
    except subprocess.TimeoutExpired as exc:
        output = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        for request in requests:
            for name in request["classes"]:
                counts.setdefault(request["path"], {})[name] = f"import timed out after {timeout:g}s"
    for line in output.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and {"path", "class", "result"} <= set(record):
            counts.setdefault(record["path"], {})[record["class"]] = record["result"]
    return counts


def _probe_file(path: str, classes: list[str], index: int) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    try:
        spec = importlib.util.spec_from_file_location(f"_ms_migrate_probe_{index}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    except BaseException as exc:  # noqa: BLE001 - any failure of user code is a reason, not a crash
        for name in classes:
            _emit(path, name, f"cannot import the file: {type(exc).__name__}: {exc}"[:200])
        return
    for name in classes:
        try:
            instance = getattr(module, name)()
            result: int | str = sum(p.numel() for p in instance.parameters())
        except BaseException as exc:  # noqa: BLE001
            result = f"cannot instantiate without arguments: {type(exc).__name__}"
        _emit(path, name, result)


_RECORDS = sys.stdout  # records go to the real stdout; user prints are sent to stderr


def _emit(path: str, name: str, result) -> None:
    _RECORDS.write(json.dumps({"path": path, "class": name, "result": result}) + "\n")
    _RECORDS.flush()


def main() -> None:
    requests = json.loads(sys.stdin.read())
    sys.stdout = sys.stderr
    for index, request in enumerate(requests):
        _probe_file(request["path"], request["classes"], index)


if __name__ == "__main__":
    main()
