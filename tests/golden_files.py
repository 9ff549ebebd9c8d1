"""Golden outputs: the exact converted text of each sample, checked in.

Refresh after an intended change with:

    .venv/bin/python -m tests.golden_files
"""

from __future__ import annotations

import pathlib

from transpiler.convert.pipeline import convert_source

ROOT = pathlib.Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
GOLDEN = ROOT / "tests" / "golden" / "samples"


def sample_paths() -> list[pathlib.Path]:
    return sorted(SAMPLES.glob("*.py"))


def golden_path(sample: pathlib.Path) -> pathlib.Path:
    return GOLDEN / sample.name


def convert_sample(sample: pathlib.Path) -> str:
    result = convert_source(sample.read_text(encoding="utf-8"), f"samples/{sample.name}")
    assert result.output is not None, [d.one_line() for d in result.diagnostics]
    return result.output


def main() -> None:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for sample in sample_paths():
        golden_path(sample).write_text(convert_sample(sample), encoding="utf-8")
        print(f"wrote {golden_path(sample).relative_to(ROOT)}")


if __name__ == "__main__":
    main()
