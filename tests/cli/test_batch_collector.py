"""The garbage collector is tuned for a batch converted in process, and put
back as it was afterwards (the batch runner may run inside a longer process)."""

from __future__ import annotations

import gc

from transpiler.batch import collector
from transpiler.batch.runner import Job, run


def test_a_tuned_batch_leaves_the_collector_as_it_found_it():
    before = gc.get_threshold(), gc.get_freeze_count()
    with collector.tuned():
        assert gc.get_threshold() == collector.THRESHOLDS
        assert gc.get_freeze_count() > 0  # the loaded modules are out of every collection
    assert (gc.get_threshold(), gc.get_freeze_count()) == before


def test_a_batch_in_a_process_tuned_for_good_keeps_its_freeze():
    before = gc.get_threshold()
    collector.tune()  # as the server does after its warm-up
    try:
        frozen = gc.get_freeze_count()
        with collector.tuned():
            pass
        assert (gc.get_threshold(), gc.get_freeze_count()) == (collector.THRESHOLDS, frozen)
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def test_files_converted_in_process_under_the_tuned_collector(tmp_path):
    paths = []
    for index in range(3):
        path = tmp_path / f"m{index}.py"
        path.write_text(f"import torch\n\nx{index} = torch.zeros({index + 1})\n")
        paths.append(str(path))
    seen = []
    jobs = [Job(p, str(tmp_path / "out" / f"m{i}.py"), p, "python") for i, p in enumerate(paths)]
    before = gc.get_threshold()
    summaries = run(jobs, 1, on_result=lambda summary: seen.append(gc.get_threshold()))
    assert [s.status for s in summaries] == ["converted"] * 3
    assert seen == [collector.THRESHOLDS] * 3 and gc.get_threshold() == before
    assert "ops.zeros(3)" in (tmp_path / "out" / "m2.py").read_text()
