"""A seeded, chunked, resumable fuzzer: hostile model outputs and hostile wire rows.

    python benchmarks/hostile/fuzz.py run    [--seed 1] [--inputs 200000] [--chunk 500] [--workers N]
                                     [--out fuzz_out] [--slow-ms 50] [--hang-s 2] [--big 0.05]
    python benchmarks/hostile/fuzz.py report [--out fuzz_out]
    python benchmarks/hostile/fuzz.py show   --index I [--seed 1]       # the generated input, as JSON
    python benchmarks/hostile/fuzz.py repro  --index I [--seed 1]       # run it again, with timings

Input ``i`` is a pure function of ``(seed, i)``: ``random.Random(f"{seed}:{i}")`` builds

* an **output**: options (words, numbers, huge numbers, digit runs in 19 scripts, answer phrases),
  an expected letter, a prompt template (``boxed_letter``, ``answer_colon``, ``answer_is``; the
  last two carry an ``output_regex``) and a text of 1-6 pieces: numbers with exponents, digit
  runs, runs of ``$`` / ``\\boxed{`` / braces / newlines / markdown, random code points (lone
  surrogates and combining marks too), answer phrases in several languages, letters in several
  scripts, the options' own texts. Pieces are short; with probability ``--big`` one is 500-8,000
  characters. The output is graded in every built-in mode through the public API
  (``MCQASample.from_question``, ``choicebox.grade``), which must never raise;
* a **row**: a valid NeMo Gym row with 1-4 fields replaced by hostile values (nested 3,000 deep,
  200 KB strings, NaN, 400-digit integers, wrong types, 40 options, odd letters, catastrophic,
  huge or invalid ``output_regex`` patterns, up to 60 of them), decoded with
  ``MCQASample.from_wire`` (which may raise only ``WireFormatError`` or ``SampleError``) and, when
  it decodes, graded in its own mode (which may raise only ``UnknownModeError``).

What is recorded in ``OUT/findings.jsonl`` (``OUT/state.json`` is the resume point):

* **exception**: anything else raised. Signature: type, innermost choicebox function, message
  shape. The first few of each signature are shrunk (delta debugging over the text, then the
  options; for rows, over keys, list items and string lengths) while the signature still raises;
* **slow**: a call over ``--slow-ms``. A faulthandler watchdog dumps the stack when the bound
  passes, so the signature names the function running then, at no cost to fast calls; shrunk
  while still slow;
* **hang**: a call still running after ``--hang-s``. The worker is killed (the standard ``re``
  engine cannot be interrupted) and replaced; the stack names the function; the run goes on.

Chunks of ``--chunk`` inputs run in worker processes and are the unit of resumption: a chunk's
counts and findings are committed when all its inputs are done, so Ctrl-C and the same command
again continue where the run stopped and count every input once.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import json
import math
import multiprocessing as mp
import os
import re
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from fuzz_inputs import generate

import choicebox

_REGISTRY = choicebox.default_registry()
MODES = tuple(name for name in _REGISTRY.names() if _REGISTRY.is_builtin(name))  # every built-in
KINDS = (*MODES, "row:decode", "row:grade")  # what one call is, for the counts and the watchdog

# --- running one input ---------------------------------------------------------------------------

_CHOICEBOX_FRAME = re.compile(r'File "[^"]*/choicebox/([^"]+)", line (\d+) in (\w+)')


def signature(exc: BaseException) -> str:
    """Type, innermost choicebox function and message shape: one bug, one signature."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/choicebox/" in f.filename]
    where = frames[-1].name if frames else "?"
    shape = re.sub(r"'[^']*'", "'…'", re.sub(r"\d+", "N", str(exc).split("\n", 1)[0]))[:70]
    return f"{type(exc).__name__} in {where}: {shape}"


def stack_where(dump: str) -> str:
    """The innermost choicebox frame of a faulthandler dump (most recent call first)."""
    for line in dump.splitlines():
        found = _CHOICEBOX_FRAME.search(line)
        if found:
            return f"{found[3]} ({found[1]}:{found[2]})"
    return "?"


class Runner:
    """Runs calls in a worker: timed, watched by faulthandler past the slow bound."""

    def __init__(self, slow_s: float, dump_path: str, current: Any = None) -> None:
        self.cb = choicebox
        self.allowed_row_errors = (choicebox.WireFormatError, choicebox.SampleError)
        self.slow_s = slow_s
        self.current = current  # shared [index, kind, start time] that the parent watches
        self.index = 0
        self.row_outcome = ""  # how the last row decode ended: "decoded" or "refused"
        self.dump = open(dump_path, "w+")  # noqa: SIM115  open for the worker's life
        # Warm up what is built once per process (the box grammar's parser, the mode registry),
        # so a worker's first input is not timed with it.
        warm = choicebox.MCQASample.from_question("Q?", ["a", "b"], "A")
        for mode in MODES:
            for text in ("\\boxed{A} Answer: B the answer is C", "\\boxed{\\fbox{A}}", "<answer>A"):
                choicebox.grade(warm, text, mode=mode)

    def timed(self, kind: str, call: Callable[[], object]) -> tuple[float, BaseException | None, str]:
        """(seconds, the exception raised or None, the stack dumped when it was slow)."""
        self.dump.seek(0)
        self.dump.truncate()
        faulthandler.dump_traceback_later(self.slow_s, repeat=False, file=self.dump)
        if self.current is not None:
            self.current[:] = [self.index, KINDS.index(kind), time.time()]
        started = time.perf_counter()
        try:
            call()
            error = None
        except Exception as exc:
            error = exc
        seconds = time.perf_counter() - started
        faulthandler.cancel_dump_traceback_later()
        if self.current is not None:
            self.current[2] = 0.0
        dump = ""
        if seconds > self.slow_s:
            self.dump.flush()
            self.dump.seek(0)
            dump = self.dump.read()
        return seconds, error, dump

    # The calls, each as a function of the input so the shrinkers can rerun it on smaller ones.

    def sample(self, output: dict[str, Any]) -> Any:
        return self.cb.MCQASample.from_question(
            "Which one?", output["options"], output["expected"], template=output["template"]
        )

    def grade_output(
        self, output: dict[str, Any], mode: str, sample: Any = None
    ) -> Callable[[], object]:
        built = self.sample(output) if sample is None else sample
        return lambda: self.cb.grade(built, output["text"], mode=mode)

    def row_call(self, row: Any, kind: str) -> Callable[[], object]:
        def decode() -> object:
            try:
                sample = self.cb.MCQASample.from_wire(row)
            except self.allowed_row_errors:
                self.row_outcome = "refused"
                return None
            self.row_outcome = "decoded"
            return sample

        def decode_and_grade() -> object:
            sample = decode()
            if sample is None or not isinstance(row, dict) or "response" not in row:
                return None
            try:
                return self.cb.grade(sample, row["response"])
            except self.cb.UnknownModeError:
                return None

        return decode if kind == "row:decode" else decode_and_grade


# --- shrinking -----------------------------------------------------------------------------------


def shrink_text(text: str, keep: Callable[[str], bool], budget: int = 150) -> str:
    """A smaller text for which ``keep`` still holds: delta debugging over ever smaller chunks."""
    calls, parts = 0, 2
    while len(text) >= 2 and calls < budget:
        size = max(1, len(text) // parts)
        for start in range(0, len(text), size):
            candidate = text[:start] + text[start + size :]
            calls += 1
            if keep(candidate):
                text, parts = candidate, max(parts - 1, 2)
                break
            if calls >= budget:
                return text
        else:
            if size == 1:
                return text
            parts = min(len(text), parts * 2)
    return text


def shrink_json(value: Any, keep: Callable[[Any], bool], budget: int = 200) -> Any:
    """A smaller JSON value for which ``keep`` holds: keys dropped, lists cut, strings shrunk."""
    spent = [0]

    def still(candidate: Any) -> bool:
        spent[0] += 1
        return spent[0] <= budget and keep(candidate)

    def shrink(node: Any, rebuild: Callable[[Any], Any]) -> Any:
        if isinstance(node, dict):
            for key in list(node):
                trial = {k: v for k, v in node.items() if k != key}
                if still(rebuild(trial)):
                    node = trial
            for key in list(node):
                node[key] = shrink(node[key], lambda v, k=key: rebuild({**node, k: v}))
        elif isinstance(node, list):
            for half in (node[: len(node) // 2], node[len(node) // 2 :]):
                if len(half) < len(node) and still(rebuild(half)):
                    return shrink(half, rebuild)
            if len(node) == 1 and isinstance(node[0], list | dict) and still(rebuild(node[0])):
                return shrink(node[0], rebuild)  # one level less of nesting
            for i in range(len(node)):
                node[i] = shrink(node[i], lambda v, i=i: rebuild([*node[:i], v, *node[i + 1 :]]))
        elif isinstance(node, str) and len(node) > 8:
            remaining = max(0, budget - spent[0])
            node = shrink_text(node, lambda t: still(rebuild(t)), budget=min(60, remaining))
        return node

    return shrink(value, lambda v: v)


def shape(text: str) -> str:
    """A run-length summary of a text: '"Answer: " + "1"*2900 + "x"'."""
    runs: list[tuple[str, int]] = []
    for char in text:
        if runs and runs[-1][0] == char:
            runs[-1] = (char, runs[-1][1] + 1)
        else:
            runs.append((char, 1))
    parts, literal = [], ""
    for char, count in runs:
        if count >= 8:
            if literal:
                parts.append(repr(literal[:60]) + ("…" if len(literal) > 60 else ""))
                literal = ""
            parts.append(f"{char!r}*{count}")
        else:
            literal += char * count
    if literal:
        parts.append(repr(literal[:60]) + ("…" if len(literal) > 60 else ""))
    return " + ".join(parts)[:300]


# --- a worker ------------------------------------------------------------------------------------

SHRINK_PER_SIGNATURE = 3  # per worker: the first few of each signature are shrunk, all counted


class Worker:
    """Runs the inputs of the chunks it is sent; reports counts and findings to the parent."""

    def __init__(self, conn: Connection, args: argparse.Namespace, dump: str, current: Any) -> None:
        self.conn = conn
        self.args = args
        self.runner = Runner(args.slow_ms / 1000, dump, current)
        self.shrunk: Counter[str] = Counter()

    def serve(self) -> None:
        while (message := self.conn.recv()) is not None:
            chunk, start, stop = message
            for index in range(start, stop):
                counts, times, findings = self.run_one(index)
                self.conn.send(("input", chunk, index, counts, times, findings))
            self.conn.send(("chunk", chunk))

    def run_one(self, index: int) -> tuple[dict[str, int], list[float], list[dict[str, Any]]]:
        self.runner.index = index
        item = generate(self.args.seed, index, self.args.big)
        counts: Counter[str] = Counter()
        times: list[float] = []
        findings: list[dict[str, Any]] = []
        output = item["output"]
        try:
            sample = self.runner.sample(output)
            calls = [(mode, self.runner.grade_output(output, mode, sample)) for mode in MODES]
        except self.runner.cb.ChoiceboxError:
            counts["output refused by from_question"] += 1  # generated options can be invalid
            calls = []
        calls += [(kind, self.runner.row_call(item["row"], kind)) for kind in ("row:decode", "row:grade")]
        for kind, call in calls:
            seconds, error, dump = self.runner.timed(kind, call)
            times.append(seconds)
            counts[f"{kind} calls"] += 1
            if kind == "row:decode" and error is None:
                counts[f"row:decode {self.runner.row_outcome}"] += 1
            if error is not None:
                counts[f"{kind} exceptions"] += 1
                findings.append(self.exception(item, kind, error))
            elif seconds > self.runner.slow_s:
                counts[f"{kind} slow"] += 1
                findings.append(self.slow(item, kind, seconds, dump))
        return dict(counts), times, findings

    def _recheck(self, kind: str) -> Callable[[Any, Any], tuple[float, BaseException | None]]:
        """Rerun a call of ``kind`` on (output, text) or (row, None), for the shrinkers."""

        def rerun(subject: Any, text: Any) -> tuple[float, BaseException | None]:
            if kind.startswith("row:"):
                call = self.runner.row_call(subject, kind)
            else:
                try:
                    call = self.runner.grade_output({**subject, "text": text}, kind)
                except self.runner.cb.ChoiceboxError:
                    return 0.0, None
            seconds, error, _ = self.runner.timed(kind, call)
            return seconds, error

        return rerun

    def exception(self, item: dict[str, Any], kind: str, error: BaseException) -> dict[str, Any]:
        found = {
            "kind": "exception",
            "signature": signature(error),
            "call": kind,
            "index": item["index"],
            "traceback": [f.name for f in traceback.extract_tb(error.__traceback__) if "/choicebox/" in f.filename],
        }
        if self.shrunk[found["signature"]] >= SHRINK_PER_SIGNATURE:
            return found
        self.shrunk[found["signature"]] += 1
        rerun = self._recheck(kind)

        def same(subject: Any, text: Any) -> bool:
            raised = rerun(subject, text)[1]
            return raised is not None and signature(raised) == found["signature"]

        found["reproducer"] = self._shrink(item, kind, same)
        return found

    def slow(self, item: dict[str, Any], kind: str, seconds: float, dump: str) -> dict[str, Any]:
        where = stack_where(dump)
        found = {
            "kind": "slow",
            "signature": f"slow {kind}: {where.split(' ')[0]}",
            "where": where,
            "call": kind,
            "index": item["index"],
            "seconds": round(seconds, 3),
        }
        if self.shrunk[found["signature"]] >= SHRINK_PER_SIGNATURE or seconds > 1.0:
            return found  # a very slow call shrinks too slowly: its shape is in `show`
        self.shrunk[found["signature"]] += 1
        rerun = self._recheck(kind)

        def still_slow(subject: Any, text: Any) -> bool:
            took, raised = rerun(subject, text)
            return raised is None and took > self.runner.slow_s

        found["reproducer"] = self._shrink(item, kind, still_slow, budget=40)
        return found

    def _shrink(
        self, item: dict[str, Any], kind: str, keep: Callable[[Any, Any], bool], budget: int = 150
    ) -> dict[str, Any]:
        if kind.startswith("row:"):
            try:
                row = shrink_json(item["row"], lambda r: keep(r, None), budget=budget)
            except RecursionError:
                # A row nested thousands deep is deeper than the shrinker's recursion: it is
                # reported as generated (``fuzz.py show`` prints it), and the worker lives on.
                row = item["row"]
            return {"row": _printable(row)}
        output = dict(item["output"])
        text = shrink_text(output["text"], lambda t: keep(output, t), budget=budget)
        options = list(output["options"])
        i = 0
        while len(options) > 2 and i < len(options):
            trial = {**output, "options": options[:i] + options[i + 1 :], "expected": "A"}
            if keep(trial, text):
                options = trial["options"]
                output = trial
            else:
                i += 1
        for i, option in enumerate(options):  # then each option's text

            def keep_option(shorter: str, i: int = i, output: dict[str, Any] = output) -> bool:
                trial = {**output, "options": [*options[:i], shorter, *options[i + 1 :]]}
                return bool(shorter.strip()) and keep(trial, text)

            options[i] = shrink_text(option, keep_option, budget=30)
            output = {**output, "options": options}
        return {"text": text, "shape": shape(text), "options": options,
                "expected": output["expected"], "template": output["template"]}  # fmt: skip


def _printable(value: Any, depth: int = 0) -> Any:
    """A JSON-safe copy: NaN and huge integers written as text, deep nests summarised."""
    if depth > 50:
        return "<nested deeper>"
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**63:
        return f"<int of {abs(value).bit_length()} bits>"
    if isinstance(value, dict):
        return {str(k): _printable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_printable(v, depth + 1) for v in value]
    return value


def worker_main(conn: Connection, args: argparse.Namespace, dump: str, current: Any) -> None:
    Worker(conn, args, dump, current).serve()


# --- the campaign --------------------------------------------------------------------------------


def _bucket(seconds: float) -> str:
    for bound, name in ((1e-3, "<1ms"), (1e-2, "<10ms"), (5e-2, "<50ms"), (0.25, "<250ms"), (1, "<1s")):
        if seconds < bound:
            return name
    return ">=1s"


class Campaign:
    """The parent: hands out chunks, watches for hangs, commits finished chunks to the state."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.out = Path(args.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.state_path = self.out / "state.json"
        self.findings_path = self.out / "findings.jsonl"
        settings = {"seed": args.seed, "chunk": args.chunk, "big": args.big}
        if self.state_path.exists():
            self.state = json.loads(self.state_path.read_text(encoding="utf-8"))
            if self.state["settings"] != settings:
                raise SystemExit(
                    f"{self.state_path} is for {self.state['settings']}, not {settings}: "
                    "use another --out or the same settings"
                )
        else:
            self.state = {"settings": settings, "done": [], "inputs": 0, "calls": 0,
                          "counts": {}, "signatures": {}, "times": {}, "max_call_s": 0.0,
                          "wall_s": 0.0}  # fmt: skip
        self.pending: dict[int, list[tuple[Any, ...]]] = {}  # chunk -> what it produced so far
        self.ctx = mp.get_context("fork")
        self.workers: dict[int, dict[str, Any]] = {}

    def spawn(self, wid: int) -> None:
        parent, child = self.ctx.Pipe()
        current = self.ctx.Array("d", [0.0, 0.0, 0.0])
        dump = str(self.out / f".dump.{wid}")
        process = self.ctx.Process(target=worker_main, args=(child, self.args, dump, current), daemon=True)
        process.start()
        self.workers[wid] = {"process": process, "conn": parent, "current": current,
                             "chunk": None, "dump": dump}  # fmt: skip

    def assign(self, wid: int, todo: list[int]) -> None:
        worker = self.workers[wid]
        if worker["chunk"] is None:
            if not todo:
                return
            worker["chunk"] = todo.pop(0)
            self.pending[worker["chunk"]] = []
        chunk = worker["chunk"]
        done = {entry[1] for entry in self.pending[chunk] if entry[0] == "input"}
        start = chunk * self.args.chunk
        stop = min(start + self.args.chunk, self.args.inputs)
        resume = max(done, default=start - 1) + 1  # after a hang, go on past the hung input
        worker["conn"].send((chunk, resume, stop))

    def run(self) -> None:
        args = self.args
        chunks = (args.inputs + args.chunk - 1) // args.chunk
        todo = [c for c in range(chunks) if c not in set(self.state["done"])]
        began, wall = time.time(), self.state["wall_s"]
        for wid in range(args.workers):
            self.spawn(wid)
            self.assign(wid, todo)
        last = time.time()
        try:
            while any(w["chunk"] is not None for w in self.workers.values()):
                busy = {w["conn"]: wid for wid, w in self.workers.items() if w["chunk"] is not None}
                for conn in wait(list(busy), timeout=0.05):
                    wid = busy[conn]  # type: ignore[index]
                    try:
                        message = conn.recv()  # type: ignore[union-attr]
                    except EOFError:
                        # The worker died (its traceback is above): say so instead of waiting on it.
                        chunk = self.workers[wid]["chunk"]
                        raise SystemExit(f"fuzz: worker {wid} died in chunk {chunk}; the state is saved") from None
                    if message[0] == "input":
                        self.pending[message[1]].append(("input", message[2], *message[3:]))
                    else:
                        self.commit(message[1])
                        self.workers[wid]["chunk"] = None
                        self.state["wall_s"] = wall + time.time() - began
                        self.save()
                        self.assign(wid, todo)
                self.watch(todo)
                if time.time() - last > 15:
                    last = time.time()
                    self.progress(began)
        except KeyboardInterrupt:
            print("\ninterrupted: the state is saved; run the same command to resume")
        finally:
            for worker in self.workers.values():
                with contextlib.suppress(OSError):
                    worker["conn"].send(None)
                worker["process"].join(1)
                if worker["process"].is_alive():
                    worker["process"].kill()
            self.state["wall_s"] = wall + time.time() - began
            self.save()
        self.progress(began)

    def watch(self, todo: list[int]) -> None:
        """Kill a worker stuck in one call past --hang-s; record the hang; go on without it."""
        now = time.time()
        for wid, worker in list(self.workers.items()):
            index, kind, started = worker["current"][:]
            if worker["chunk"] is None or not started or now - started < self.args.hang_s:
                continue
            time.sleep(0.05)  # the worker's faulthandler dumped its stack at --slow-ms
            try:
                dump = Path(worker["dump"]).read_text(errors="replace")
            except OSError:
                dump = ""
            worker["process"].kill()
            worker["process"].join(5)
            where = stack_where(dump)
            call = KINDS[int(kind)]
            item = generate(self.args.seed, int(index), self.args.big)
            # Not shrunk (each try could hang again): the shapes of what was graded, and the index.
            if call.startswith("row:"):
                response = item["row"].get("response")
                shown = {"response": shape(response) if isinstance(response, str) else "(not text)"}
            else:
                output = item["output"]
                shown = {"shape": shape(output["text"]), "options": [shape(o) for o in output["options"]]}
            finding = {"kind": "hang", "signature": f"hang {call}: {where.split(' ')[0]}",
                       "where": where, "call": call, "index": int(index),
                       "seconds": round(now - started, 2), "reproducer": shown}  # fmt: skip
            counts = {f"{call} calls": 1, f"{call} hangs": 1}
            chunk = worker["chunk"]
            self.pending[chunk].append(("input", int(index), counts, [now - started], [finding]))
            self.spawn(wid)
            self.workers[wid]["chunk"] = chunk
            self.assign(wid, todo)

    def commit(self, chunk: int) -> None:
        state = self.state
        seen: set[int] = set()
        with open(self.findings_path, "a", encoding="utf-8") as handle:
            for _, index, counts, times, findings in self.pending.pop(chunk):
                if index not in seen:  # a hung input reports once, from the watchdog
                    seen.add(index)
                    state["inputs"] += 1
                for key, value in counts.items():
                    state["counts"][key] = state["counts"].get(key, 0) + value
                for seconds in times:
                    bucket = _bucket(seconds)
                    state["times"][bucket] = state["times"].get(bucket, 0) + 1
                    state["max_call_s"] = max(state["max_call_s"], seconds)
                state["calls"] += len(times)
                for found in findings:
                    entry = state["signatures"].setdefault(
                        found["signature"],
                        {"kind": found["kind"], "count": 0, "calls": {}, "first": index, "max_s": 0.0},
                    )
                    entry["count"] += 1
                    entry["calls"][found["call"]] = entry["calls"].get(found["call"], 0) + 1
                    entry["max_s"] = max(entry["max_s"], found.get("seconds", 0.0))
                    if entry["count"] <= 5 or "reproducer" in found:
                        handle.write(json.dumps(found, ensure_ascii=True) + "\n")
        state["done"].append(chunk)

    def save(self) -> None:
        temporary = self.state_path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.state, indent=1), encoding="utf-8")
        os.replace(temporary, self.state_path)

    def progress(self, began: float) -> None:
        counts = self.state["counts"]
        total = {k: sum(v for key, v in counts.items() if key.endswith(k)) for k in ("exceptions", "slow", "hangs")}
        print(
            f"[fuzz] inputs {self.state['inputs']:,} calls {self.state['calls']:,} "
            f"exceptions {total['exceptions']:,} slow {total['slow']:,} hangs {total['hangs']:,} "
            f"signatures {len(self.state['signatures'])} ({time.time() - began:.0f} s this run)",
            flush=True,
        )


# --- the report ----------------------------------------------------------------------------------


def report(out: Path) -> None:
    state = json.loads((out / "state.json").read_text(encoding="utf-8"))
    smallest: dict[str, dict[str, Any]] = {}
    findings = out / "findings.jsonl"
    if findings.exists():
        for line in findings.read_text(encoding="utf-8").splitlines():
            found = json.loads(line)
            repro = found.get("reproducer")
            if repro is None:
                continue
            size = len(json.dumps(repro))
            best = smallest.get(found["signature"])
            if best is None or size < best["size"]:
                smallest[found["signature"]] = {"size": size, "index": found["index"], **repro}
    settings = state["settings"]
    print(f"seed {settings['seed']}, chunk {settings['chunk']}, big {settings['big']}: "
          f"{state['inputs']:,} inputs, {state['calls']:,} calls, {state['wall_s']:.0f} s wall")  # fmt: skip
    order = ["<1ms", "<10ms", "<50ms", "<250ms", "<1s", ">=1s"]
    print("call times:", ", ".join(f"{b} {state['times'].get(b, 0):,}" for b in order),
          f"(max {state['max_call_s']:.2f} s)")  # fmt: skip
    for key in sorted(state["counts"]):
        print(f"  {key:40s} {state['counts'][key]:>10,}")
    print(f"{len(state['signatures'])} signature(s), most frequent first:")
    for sig, entry in sorted(state["signatures"].items(), key=lambda kv: -kv[1]["count"]):
        slowest = f", max {entry['max_s']:.2f} s" if entry["max_s"] else ""
        print(f"  {entry['count']:>8,}  {sig}  calls={entry['calls']} first=#{entry['first']}{slowest}")
        repro = smallest.get(sig)
        if repro is not None:
            shown = {k: v for k, v in repro.items() if k not in ("size", "text")}
            print(f"            reproducer: {json.dumps(shown, ensure_ascii=False)[:400]}")


# --- the command line ----------------------------------------------------------------------------


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run (or resume) a campaign")
    run.add_argument("--seed", type=int, default=1)
    run.add_argument("--inputs", type=int, default=200_000)
    run.add_argument("--chunk", type=int, default=500)
    run.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    run.add_argument("--out", default="fuzz_out")
    run.add_argument("--slow-ms", type=float, default=50.0, help="a call slower than this is a finding")
    run.add_argument("--hang-s", type=float, default=2.0, help="a call still running is killed")
    run.add_argument("--big", type=float, default=0.05, help="the chance a piece is 500-8,000 chars")
    show = commands.add_parser("report", help="summarise OUT/state.json and OUT/findings.jsonl")
    show.add_argument("--out", default="fuzz_out")
    for name in ("show", "repro"):
        one = commands.add_parser(name, help=f"{name} input INDEX")
        one.add_argument("--index", type=int, required=True)
        one.add_argument("--seed", type=int, default=1)
        one.add_argument("--big", type=float, default=0.05)
    args = parser.parse_args()
    # Generated texts hold lone surrogates; shown escaped rather than ending the report.
    sys.stdout.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    if args.command == "run":
        signal.signal(signal.SIGTERM, _interrupt)  # `timeout` and `kill` save the state too
        Campaign(args).run()
        report(Path(args.out))
    elif args.command == "report":
        report(Path(args.out))
    elif args.command == "show":
        item = generate(args.seed, args.index, args.big)
        item["output"]["shape"] = shape(item["output"]["text"])
        print(json.dumps(_printable(item), ensure_ascii=False, indent=1))
    else:
        item = generate(args.seed, args.index, args.big)
        runner = Runner(0.05, tempfile.mktemp())
        calls = [(kind, runner.row_call(item["row"], kind)) for kind in ("row:decode", "row:grade")]
        try:
            calls = [(mode, runner.grade_output(item["output"], mode)) for mode in MODES] + calls
        except runner.cb.ChoiceboxError as exc:
            print(f"the output's sample is refused: {exc}")
        for kind, call in calls:
            seconds, error, _ = runner.timed(kind, call)
            print(f"{kind:28s} {seconds * 1000:9.1f} ms  {signature(error) if error else 'ok'}")


if __name__ == "__main__":
    main()
