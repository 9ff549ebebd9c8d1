"""The table the benchmark prints."""

from __future__ import annotations


def _loss(side: dict) -> str:
    if side.get("first") is None:
        return "-"
    return f"{side['first']:.4g}->{side['last']:.4g}"


def _seconds(side: dict) -> str:
    return f"{side['seconds']:.1f}" if side.get("seconds") is not None else "-"


def written_files(row: dict) -> str:
    """What each side wrote (files that were not there before it ran), compared; a
    MindSpore checkpoint is the torch file's name with the ``.ckpt`` mindspore.save_checkpoint
    appends. Empty when neither side wrote a file or a side has no record of it."""
    torch, ms = row.get("torch", {}), row.get("mindspore", {})
    if "written" not in torch or "written" not in ms or not (torch["written"] or ms["written"]):
        return ""
    expected = set(torch["written"])
    found = {name.removesuffix(".ckpt") if name.removesuffix(".ckpt") in expected else name for name in ms["written"]}
    renamed = sum(1 for name in ms["written"] if name.endswith(".ckpt") and name.removesuffix(".ckpt") in expected)
    missing, extra = sorted(expected - found), sorted(found - expected)
    text = f"files written: torch {len(expected)}, mindspore {len(ms['written'])}"
    if not missing and not extra:
        text += ": the same" + (f" ({renamed} checkpoints with MindSpore's .ckpt)" if renamed else "")
    if missing:
        text += f"; not written: {', '.join(missing[:4])}" + (" ..." if len(missing) > 4 else "")
    if extra:
        text += f"; only converted: {', '.join(extra[:4])}" + (" ..." if len(extra) > 4 else "")
    return text


def print_table(rows: list[dict], out=None) -> None:
    """One line per script: verdict, first->last loss and wall time on both sides,
    the converted/torch time ratio; then, per failing script, where and why."""
    import sys

    out = out or sys.stdout
    header = f"{'script':<16} {'repository':<30} {'torch':<8} {'loss':<17} {'s':>6}  " \
             f"{'mindspore':<9} {'loss':<17} {'s':>6} {'x':>5}"
    print(header, file=out)
    print("-" * len(header), file=out)
    counts: dict[str, int] = {}
    for row in rows:
        torch, ms = row.get("torch", {}), row.get("mindspore", {})
        ratio = ""
        if ms.get("verdict") == "trains" and torch.get("seconds"):
            ratio = f"{ms['seconds'] / torch['seconds']:.1f}"
        counts[ms.get("verdict", row.get("verdict", "?"))] = counts.get(ms.get("verdict", row.get("verdict", "?")), 0) + 1
        print(f"{row['id']:<16} {row['source']:<30} {torch.get('verdict', row.get('verdict', '')):<8} "
              f"{_loss(torch):<17} {_seconds(torch):>6}  {ms.get('verdict', ''):<9} {_loss(ms):<17} "
              f"{_seconds(ms):>6} {ratio:>5}", file=out)
    print("-" * len(header), file=out)
    by_hand = [row for row in rows if row.get("by_hand")]
    for row in by_hand:  # the same training written by hand in MindSpore (Script.by_hand)
        hand, ms = row["by_hand"], row.get("mindspore", {})
        ratio = f"{ms['seconds'] / hand['seconds']:.2f}" if ms.get("seconds") and hand.get("seconds") else "-"
        print(f"{row['id']:<16} written by hand in MindSpore: {hand.get('verdict', '')} {_loss(hand)} "
              f"{_seconds(hand)} s; converted/by hand {ratio}", file=out)
    for row in rows:  # checkpoints, images, logs: written where the original writes them?
        line = written_files(row)
        if line:
            print(f"{row['id']:<16} {line}", file=out)
    repositories = len({row["source"] for row in rows})
    summary = ", ".join(f"{count} {name}" for name, count in sorted(counts.items()))
    print(f"{len(rows)} scripts from {repositories} repositories; converted: {summary}", file=out)
    failing = [row for row in rows if row.get("mindspore", {}).get("verdict") in ("fails", "marked", "timeout")
               or row.get("note_failure")]
    for row in failing:
        ms = row.get("mindspore", {})
        print(f"  {row['id']}: {ms.get('verdict', '')} at {ms.get('where') or '?'}: {ms.get('error', '')}", file=out)
    for row in rows:
        if row.get("verdict") and not row.get("torch"):
            print(f"  {row['id']}: {row['verdict']}: {row.get('why', '')}", file=out)
        elif row.get("torch", {}).get("verdict") in ("fails", "marked", "timeout", "no-loss"):
            torch = row["torch"]
            print(f"  {row['id']}: torch side {torch['verdict']} at {torch.get('where') or '?'}: "
                  f"{torch.get('error', '')}", file=out)
