"""The package's layout stays what the docs promise (docs/layout.md, docs/python.md): no import circle, no oversized module, a
small root whose ``__all__`` is exactly what it defines, every error class in ``_errors.py`` and
exported, a reason on every lazy import, ``py.typed`` shipped, and a fast ``import choicebox``. The
tests keep the code's layout too: one module per step kind (each parameter tested) and one per stage
of the ``conclusion`` policy.

The import graph is read from the source (``ast``), not from ``sys.modules``: an import inside a
function ties two modules as surely as one at the top, so it counts; only ``if TYPE_CHECKING:``
blocks are skipped, since they never run.
"""

from __future__ import annotations
import __future__

import ast
import importlib
import subprocess
import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from types import ModuleType

import pytest

import choicebox
from choicebox import _errors, jsonl, server

SRC = Path(__file__).parents[1] / "sdk"
PACKAGE = SRC / "choicebox"
MAX_MODULE_LINES = 800
MAX_ROOT_NAMES = 43  # 40, Problem (what WireFormatError.issues holds), GymConfigError and JudgeError

# Circles another change removes; each entry must still be a circle, so a stale one fails too.
KNOWN_CIRCLES: set[frozenset[str]] = set()

# Exception classes that may live outside _errors.py, and why no user ever sees them.
INTERNAL_EXCEPTIONS = {
    # The verify server's "the client got the request wrong": every route is wrapped by
    # server._app._guarded, which turns it into the 4xx reply; choicebox.server does not export it.
    "choicebox.server._respond.ClientError",
    # A /verify the event loop should not grade: the app sends it to a grading process instead.
    "choicebox.server._respond.NotInline",
    # A pattern ran out of time: every caller (regex steps, scoring, audit) catches it and reports
    # a regex_timeout verdict or finding instead.
    "choicebox._regex.RegexTimeout",
    # A grading process ran past its deadline or died: the app answers those requests with a 503.
    "choicebox.server._pool.WorkerCrashed",
    "choicebox.server._pool.WorkerTimeout",
    # A lane of the pool is full, or a request needed more memory than a grading process may
    # have: the app answers those with a 503 (with Retry-After) and a 413.
    "choicebox.server._pool.PoolFull",
    "choicebox.server._pool.WorkerOutOfMemory",
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _runtime_nodes(tree: ast.Module) -> Iterator[ast.AST]:
    """Every node outside ``if TYPE_CHECKING:`` blocks."""
    skipped = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for node in ast.walk(block)
    }
    return (node for node in ast.walk(tree) if id(node) not in skipped)


def _imported(module: str, path: Path, node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = module if path.name == "__init__.py" else module.rpartition(".")[0]
            parts = base.split(".")
            parts = parts[: len(parts) - (node.level - 1)]
            target = ".".join(parts + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        # `from pkg import name` may import the submodule pkg.name
        return [target, *(f"{target}.{alias.name}" for alias in node.names)]
    return []


def _import_graph(*, type_checking: bool = False) -> dict[str, set[str]]:
    """Module -> the package modules it imports; with ``type_checking``, the imports under
    ``if TYPE_CHECKING:`` too (what a type checker follows)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree) if type_checking else _runtime_nodes(tree):
            graph[name].update(t for t in _imported(name, path, node) if t in modules and t != name)
    # Importing a submodule runs its packages' __init__ first.
    for name, targets in graph.items():
        for target in list(targets):
            parent = target.rpartition(".")[0]
            while parent in modules and not name.startswith(parent):
                targets.add(parent)
                parent = parent.rpartition(".")[0]
    return graph


def _circles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.add(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_sees_lazy_imports() -> None:
    graph = _import_graph()
    # cli.serve imports the server only inside its handler; the edge must still be there.
    assert "choicebox.server" in graph["choicebox.cli.serve"]
    assert "choicebox._wire" in graph["choicebox._samples"]  # inside MCQASample.from_wire
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == {frozenset("abc")}


def test_there_is_no_import_circle() -> None:
    circles = _circles(_import_graph())
    unexpected = sorted(" <-> ".join(sorted(c)) for c in circles - KNOWN_CIRCLES)
    assert not unexpected, f"import circles: {unexpected}"
    gone = sorted(" <-> ".join(sorted(c)) for c in KNOWN_CIRCLES - circles)
    assert not gone, f"no longer circles, delete them from KNOWN_CIRCLES: {gone}"


def test_there_is_no_import_circle_even_for_the_type_checker() -> None:
    # A back-reference under TYPE_CHECKING is still a circle of meaning: the codec takes values
    # by their shape (a Protocol), the stages take the policy by its vocabulary.
    circles = _circles(_import_graph(type_checking=True))
    assert not circles, f"import circles through TYPE_CHECKING: {sorted(' <-> '.join(sorted(c)) for c in circles)}"


@pytest.mark.parametrize("name", sorted(_modules()))
def test_no_module_is_over_800_lines(name: str) -> None:
    lines = len(_modules()[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"{name} has {lines} lines: split it by job"


@pytest.mark.parametrize("name", sorted(_modules()))
def test_every_module_says_what_it_is_for_in_readable_text(name: str) -> None:
    # A "\\b" written as "\b" in a docstring is a backspace, and the sentence reads "oxed{".
    doc = ast.get_docstring(ast.parse(_modules()[name].read_text(encoding="utf-8")))
    if name.endswith("prompt_templates"):
        return  # a package of data files
    assert doc, f"{name} has no module docstring"
    controls = sorted({hex(ord(c)) for c in doc if ord(c) < 32 and c not in "\n\t"})
    assert not controls, f"{name}'s docstring holds control characters {controls}"


def test_every_lazy_import_says_why() -> None:
    missing = []
    for name, path in sorted(_modules().items()):
        source = path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(ast.parse("\n".join(source))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import | ast.ImportFrom):
                    line = source[inner.lineno - 1]
                    _, marker, why = line.partition("PLC0415")
                    if not marker or not why.strip(" ,"):
                        missing.append(f"{name}:{inner.lineno}: {line.strip()}")
    assert not missing, "lazy imports without '# noqa: PLC0415  <why>':\n" + "\n".join(missing)


def test_the_root_all_is_exactly_what_the_root_defines() -> None:
    defined = {
        name
        for name, value in vars(choicebox).items()
        if not name.startswith("_")
        and not isinstance(value, ModuleType)  # submodules, once something imported them
        and value is not __future__.annotations
    }
    assert sorted(defined) == sorted(set(choicebox.__all__) - {"__version__"})
    assert len(choicebox.__all__) == len(set(choicebox.__all__))
    assert len(choicebox.__all__) <= MAX_ROOT_NAMES
    assert isinstance(choicebox.__version__, str)


def test_version_is_printed_on_stdout_without_loading_it_at_import() -> None:
    assert "importlib.metadata" not in _modules_loaded_by("import choicebox.cli")
    done = subprocess.run(
        [sys.executable, "-m", "choicebox", "--version"], capture_output=True, text=True, check=True
    )
    assert done.stdout == f"choicebox {choicebox.__version__}\n"
    assert done.stderr == ""


def _error_classes(module: ModuleType) -> set[str]:
    return {
        name
        for name, value in vars(module).items()
        if isinstance(value, type)
        and issubclass(value, BaseException)
        and value.__module__ == module.__name__
        and not name.startswith("_")  # a private base is never raised on its own
    }


def test_every_error_class_is_in_errors_and_exported_from_the_root() -> None:
    classes = _error_classes(_errors)
    assert classes  # the check sees them
    assert classes == set(_errors.__all__) - {"describe_value", "located", "location"}
    assert classes <= set(choicebox.__all__)
    for name in classes:
        assert getattr(choicebox, name) is getattr(_errors, name)
        assert issubclass(getattr(_errors, name), choicebox.ChoiceboxError)


def test_no_exception_class_is_defined_outside_errors() -> None:
    found = set()
    for name, path in _modules().items():
        if name == "choicebox._errors":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef) or node.name.startswith("_"):
                continue
            bases = {ast.unparse(base) for base in node.bases}
            if node.name.endswith("Error") or bases & {"Exception", "BaseException"}:
                found.add(f"{name}.{node.name}")
    # No class of an error's name outside _errors.py: a bad line is a BadLine, the record
    # iter_jsonl yields (JsonlError, its former name, is an alias of it, not a class).
    assert found - INTERNAL_EXCEPTIONS == set()
    assert not issubclass(jsonl.BadLine, BaseException)
    assert jsonl.JsonlError is jsonl.BadLine
    assert "ClientError" not in server.__all__


def test_py_typed_ships_with_the_package() -> None:
    assert (PACKAGE / "py.typed").is_file()
    assert resources.files("choicebox").joinpath("py.typed").is_file()


def _modules_loaded_by(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(done.stdout.split())


@pytest.mark.parametrize(
    "code",
    [
        "import choicebox",
        "import contextlib, io\nfrom choicebox.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n    main(['rules', 'list'])",
        "import contextlib, io\nfrom choicebox.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n        main(['grade', '--help'])\n    except SystemExit:\n        pass",
    ],
    ids=["import choicebox", "choicebox rules list", "choicebox grade --help"],
)
def test_the_root_and_the_cli_start_without_numpy_or_the_server(code: str) -> None:
    loaded = {name.partition(".")[0] for name in _modules_loaded_by(code)}
    # Lark too: only a box the fast path cannot read builds (or loads) the parser. The judge's
    # HTTP client and JSON Schema are loaded by a run that judges or reads JSON, never before.
    assert not loaded & {"numpy", "starlette", "uvicorn", "matplotlib", "tqdm", "ray", "lark", "httpx", "jsonschema"}


# The modules only chains like robust's use: a Gym-compatible mode starts without them.
_ROBUST_ONLY = {
    "choicebox.resolve._conclusion",
    "choicebox.find.fallbacks",
    "choicebox.find.scope",
    "choicebox.find.statements",
    "choicebox.find.verdicts",
    "choicebox.find.text",
}
_GRADE_IN = """
from choicebox import default_registry, grade_text
registry = default_registry()
for name in {modes!r}:
    verdict = grade_text("The answer is (B).\\nAnswer: B\\n\\\\boxed{{B}}", {{"A": "a", "B": "b"}}, "B",
                         registry.get(name))
    assert verdict.extracted_answer == "B", (name, verdict)
"""


def test_a_gym_compatible_mode_grades_without_importing_robust_s_modules() -> None:
    modes = ["strict_single_letter_boxed", "lenient_boxed", "lenient_answer_colon",
             "lenient_answer_colon_md", "mmlu_pro"]  # fmt: skip
    assert not _modules_loaded_by(_GRADE_IN.format(modes=modes)) & _ROBUST_ONLY


def test_grading_in_robust_loads_neither_the_judge_nor_json_schema() -> None:
    loaded = _modules_loaded_by(_GRADE_IN.format(modes=["robust"]))
    assert not {name for name in loaded if name.partition(".")[0] in ("httpx", "jsonschema")}
    assert "choicebox.judge" not in loaded


def test_robust_s_modules_are_imported_when_a_mode_names_their_kinds() -> None:
    assert _modules_loaded_by(_GRADE_IN.format(modes=["robust"])) >= _ROBUST_ONLY


def test_every_kind_and_policy_is_known_in_a_fresh_interpreter() -> None:
    # Nothing has imported the later kinds yet: listing them, reaching their modules and
    # registering a user kind under one of their names behave as if they had been imported.
    code = """
import attrs
import choicebox.find
from choicebox import StepKindError, register_step_kind, step_kinds
from choicebox.resolve._policies import policy_kinds
assert "choicebox.find.statements" not in __import__("sys").modules
from choicebox import RuleFileError
from choicebox._modes import parse_mode
for body, later in (("chain:\\n  - kind: answer_statment\\n", "answer_statement"),
                    ("resolve: conclusoin\\nchain:\\n  - kind: boxed_letter\\n", "conclusion")):
    try:
        parse_mode("version: 1\\nid: m\\ndescription: d\\n" + body, path="m.yaml")
    except RuleFileError as error:  # a typo's complaint lists the kinds not imported yet too
        assert later in error.reason, error.reason
    else:
        raise SystemExit("a typo was accepted")
assert {"answer_statement", "closing_answer", "other_questions", "option_text"} <= set(step_kinds())
assert choicebox.find.statements.AnswerStatement is step_kinds()["answer_statement"]
assert "conclusion" in policy_kinds()
"""
    _modules_loaded_by(code)
    clash = """
import attrs
from choicebox import StepKindError, register_step_kind

@attrs.frozen
class Mine:
    def __call__(self, context):
        return None

try:
    register_step_kind("answer_statement")(Mine)
except StepKindError as error:
    assert "already registered" in str(error), error
else:
    raise SystemExit("a user kind took a built-in kind's name")
"""
    _modules_loaded_by(clash)


def test_a_thread_that_asks_while_another_imports_the_later_kinds_finds_them() -> None:
    # Thread A is slowed inside the import of the later kinds; thread B asks meanwhile.
    code = """
import importlib.abc, sys, threading, time
import choicebox
from choicebox.find._api import step_kind

class Slow(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "choicebox.find.fallbacks":
            time.sleep(0.3)
        return None

sys.meta_path.insert(0, Slow())
first = threading.Thread(target=step_kind, args=("closing_answer",))
first.start()
time.sleep(0.1)
assert step_kind("answer_statement") is not None, "thread B saw no such kind"
first.join()
"""
    _modules_loaded_by(code)


DOCS = SRC.parent / "docs"


def _doc_section(page: str, title: str) -> str:
    text = "\n" + (DOCS / page).read_text(encoding="utf-8")
    return text.split(f"\n{title}\n", 1)[1].split("\n#", 1)[0]


def test_the_layout_page_lists_what_the_package_holds() -> None:
    block = _doc_section("layout.md", "# Layout").split("```text\n", 1)[1].split("```", 1)[0]
    listed = [line.split()[0] for line in block.splitlines() if line.startswith("  ")]
    assert len(listed) == len(set(listed))
    present = {p.name for p in PACKAGE.glob("*.py")} | {
        f"{p.name}/" for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()
    }
    assert sorted(listed) == sorted(present)


def test_the_python_page_names_the_root_and_what_each_public_submodule_holds() -> None:
    section = _doc_section("python.md", "## What is where")
    root, table = section.split("Each family is a public submodule", 1)
    _, root_list = root.split(f"({len(choicebox.__all__)} names):", 1)
    names = {
        span.split("(")[0]
        for span in root_list.split("`")[1::2]
        if span.split("(")[0].isidentifier()
    }
    assert names == set(choicebox.__all__)
    rows = [line.split("|")[1:3] for line in table.splitlines() if line.startswith("| `choicebox")]
    assert rows
    for module_cell, names_cell in rows:
        module = importlib.import_module(module_cell.strip().strip("`"))
        for span in names_cell.split("`")[1::2]:
            name = span.split("(")[0]
            if name.isidentifier():
                assert hasattr(module, name), f"{module.__name__} has no {name}"


def test_every_public_module_of_find_holds_step_kinds_and_is_found_without_a_list() -> None:
    # Adding a step kind is adding its module to choicebox/find/ (and naming it in a YAML): the
    # registry imports every public module there, so none may be a module of helpers.
    from choicebox.find import kind_modules, step_kinds

    on_disk = sorted(p.stem for p in (PACKAGE / "find").glob("*.py") if not p.stem.startswith("_"))
    assert list(kind_modules()) == on_disk
    homes = {kind.__module__.rpartition(".")[2] for kind in step_kinds().values()}
    assert set(on_disk) <= homes, f"modules that register no kind: {sorted(set(on_disk) - homes)}"


TESTS = Path(__file__).parent


def _test_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def test_every_step_kind_has_its_test_module_testing_each_of_its_parameters() -> None:
    # A new kind without tests fails here: tests/find/kinds/test_<kind>.py holds what it reads,
    # what it must not read, and a test_parameter_<name>... per parameter a rule file may give it.
    import attrs

    from choicebox.find import step_kinds

    # The built-in kinds: other tests register kinds of their own (tests/modes/test_modes.py).
    kinds = {name: kind for name, kind in step_kinds().items() if kind.__module__.startswith("choicebox.find.")}
    modules = {p.stem.removeprefix("test_") for p in (TESTS / "find" / "kinds").glob("test_*.py")}
    assert sorted(set(kinds) - modules) == [], "step kinds without tests/find/kinds/test_<kind>.py"
    assert sorted(modules - set(kinds)) == [], "test modules of no registered step kind"
    untested = []
    for name, kind in sorted(kinds.items()):
        tests = _test_functions(TESTS / "find" / "kinds" / f"test_{name}.py")
        for parameter in (a.alias for a in attrs.fields(kind) if a.init):
            if not any(t == f"test_parameter_{parameter}" or t.startswith(f"test_parameter_{parameter}_") for t in tests):
                untested.append(f"{name}.{parameter}")
    assert untested == [], "parameters without a test_parameter_<name> test in their kind's module"


def test_every_stage_has_its_test_module_reading_its_case_without_it() -> None:
    # tests/resolve/stages/test_<stage>.py: the case the stage decides, and the same case read by
    # robust without that stage (rule_files.robust_without or robust_with_stages).
    from choicebox.resolve._stages import STAGES

    folder = TESTS / "resolve" / "stages"
    modules = {p.stem.removeprefix("test_") for p in folder.glob("test_*.py")}
    assert sorted(set(STAGES) - modules) == [], "stages without tests/resolve/stages/test_<stage>.py"
    assert sorted(modules - set(STAGES)) == [], "test modules of no stage"
    for stage in STAGES:
        path = folder / f"test_{stage}.py"
        called = {
            node.func.id
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        }
        assert called & {"robust_without", "robust_with_stages"}, f"{path.name} never reads a case without {stage}"
        assert f"test_{stage}_decides_its_case" in _test_functions(path)
