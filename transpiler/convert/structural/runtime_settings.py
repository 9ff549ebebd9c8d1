"""Runtime settings written into a converted file whose training step was
rewritten: ``mindspore.runtime.launch_blocking()`` right after its imports.

Measured on these CPU machines (2 cores shared with other jobs, MindSpore 2.10
PyNative): MindSpore hands every operator from the Python thread to its
dispatch and kernel threads; when the cores are busy each hand-off waits for the
scheduler, so a 6x3 @ 3x2 matmul took 27-45 ms and one value_and_grad step of a
Dense layer 100-130 ms. With launch_blocking() (operators launched in the calling
thread, as torch's eager mode runs them) the same took 1-4 ms and 11-18 ms, and a
whole converted training step (nlp-tutorial's TextCNN) went from 1300 ms to 390
ms. Neither the kernel threads (``device_context.cpu.op_tuning.threads_num``) nor
the dispatch threads (``runtime.dispatch_threads_num``) alone changed it. The
setting changes no value (it only orders the launches), and it must run before
the first operator: called later it is silently ignored (measured), hence
right after the imports.

Where a step is compiled (``convert --jit``), also
``os.environ.setdefault("MS_DEV_HOST_BLOCKING_RUN", "1")``: MindSpore 2.10 runs a
compiled graph through a queue whose worker thread spins (sched_yield) between
tasks; with the switch, the calling thread runs them. Measured on a quiet 2-core
machine, the same converted ``--jit`` scripts: nlp-tutorial's TextLSTM 79.6 s -> 7.0 s
(sys 58 s -> 2 s), TextCNN 44.3 s -> 8.1 s, karpathy's bigram 28-32 s -> 22-23 s,
the NNLM 7.0 -> 6.1 s, TextRNN unchanged; the printed losses are the same, and
the jit-step tests pass with it. PyNative-only scripts gained nothing (NNLM,
TextCNN, TextLSTM within 0.5 s), so they do not get it. The switch is not in
MindSpore's documented list of environment variables: it is read when the first
operator runs, so it is set right after launch_blocking(), and a MindSpore
without it ignores it.

Written under ``if mindspore.get_context("device_target") == "CPU":`` (asynchronous
launches are how MindSpore runs on Ascend and GPU). Written by ``ms-migrate convert`` (its jobs ask for it: ``runtime_settings``), not by ``convert_source`` called alone (rule examples and
unit snippets keep their exact expected text)."""

from __future__ import annotations


import libcst as cst

from transpiler.convert.definitions import _after_imports

_KEY = "runtime settings"
_COMMENT = "# on CPU, operators launched in the calling thread (set before any runs): small steps wait less"


_HOST_BLOCKING = "MS_DEV_HOST_BLOCKING_RUN"
_HOST_COMMENT = "# compiled steps run in the calling thread too (else a queue thread spins between them)"


def ask(ctx, compiled: bool = False) -> None:
    """The file's training step was rewritten (``compiled``: with mindspore.jit): write the
    settings (the imports are queued now)."""
    if not ctx.runtime_settings:
        return
    if _KEY not in ctx.facts:
        ctx.facts[_KEY] = [ctx.ref("mindspore.get_context"), ctx.ref("mindspore.runtime.launch_blocking"), None]
    if compiled and ctx.facts[_KEY][2] is None:
        ctx.facts[_KEY][2] = ctx.ref("os.environ")


def add_runtime_settings(module: cst.Module, ctx) -> cst.Module:
    """Only where the device is the CPU: on Ascend and GPU the launches stay asynchronous, as
    MindSpore runs there (measured here: a small matmul 1.4 ms -> 0.14-0.18 ms, with or
    without the device check before the setting)."""
    functions = ctx.facts.get(_KEY)
    if functions is None:
        return module
    get_context, launch_blocking, environ = functions
    body = list(module.body)
    index = _after_imports(body, set())
    check = cst.Comparison(cst.Call(get_context, [cst.Arg(cst.SimpleString('"device_target"'))]),
                           [cst.ComparisonTarget(cst.Equal(), cst.SimpleString('"CPU"'))])
    settings = [cst.SimpleStatementLine([cst.Expr(cst.Call(launch_blocking))])]
    if environ is not None:
        setdefault = cst.Call(cst.Attribute(environ, cst.Name("setdefault")),
                              [cst.Arg(cst.SimpleString(f'"{_HOST_BLOCKING}"')), cst.Arg(cst.SimpleString('"1"'))])
        settings.append(cst.SimpleStatementLine([cst.Expr(setdefault)],
                                                leading_lines=[cst.EmptyLine(comment=cst.Comment(_HOST_COMMENT))]))
    statement = cst.If(check, cst.IndentedBlock(settings),
                       leading_lines=[cst.EmptyLine(), cst.EmptyLine(comment=cst.Comment(_COMMENT))])
    body.insert(index, statement)
    return module.with_changes(body=body)
