"""``choicebox serve``: the HTTP verify server NeMo Gym can call instead of its ``mcqa`` server."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from typing import Any, Final

import orjson

from choicebox._errors import ChoiceboxError
from choicebox.cli._args import add_rules_dir, nonnegative_int, positive_float, positive_int

__all__ = ["register"]

# Connections and requests in progress per server process: each holds a body of up to
# --max-body-bytes, and uvicorn answers the ones past this with a 503.
DEFAULT_LIMIT_CONCURRENCY: Final = 2048
# Options handed to the app (and its protocol) through the environment, as given.
_APP_OPTIONS: Final = (
    "max_body_bytes",
    "max_reply_bytes",
    "regex_timeout",
    "grade_workers",
    "small_workers",
    "max_queue",
    "worker_memory",
    "grade_timeout",
    "body_timeout",
    "header_timeout",
    "send_timeout",
)


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"not a port number: {value}")
    return value


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "serve",
        help="run the HTTP verify server (NeMo Gym resources-server API)",
        description=(
            "Serve POST /verify, /verify_batch, /aggregate_metrics, /seed_session, "
            "/close_session and GET /reverify_mode, /health with the JSON of a NeMo Gym "
            "resources server. Rule files are loaded once, at start-up."
        ),
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=_port, default=8000, help="port to bind (default 8000)")
    parser.add_argument(
        "--mode", default=None, help="grading mode for every request, overriding grading_mode"
    )
    add_rules_dir(parser)
    parser.add_argument(
        "--workers", type=positive_int, default=1, help="server processes (default 1)"
    )
    parser.add_argument(
        "--max-body-bytes",
        type=positive_int,
        default=None,
        metavar="B",
        help="largest request body accepted, in bytes (default 16 MiB)",
    )
    parser.add_argument(
        "--max-reply-bytes",
        type=positive_int,
        default=None,
        metavar="B",
        help=(
            "largest reply sent, in bytes (default twice --max-body-bytes); a batch or metrics "
            "request whose reply would be larger gets a 413"
        ),
    )
    parser.add_argument(
        "--regex-timeout",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="time bound for one pattern over one output (default 0.25)",
    )
    parser.add_argument(
        "--grade-workers",
        type=nonnegative_int,
        default=None,
        metavar="N",
        help=(
            "grading processes per server process (default 2), so a slow row never holds up "
            "other requests; 0 grades in the server process"
        ),
    )
    parser.add_argument(
        "--small-workers",
        type=nonnegative_int,
        default=None,
        metavar="N",
        help=(
            "more grading processes that take small requests only (default 1), so they never "
            "queue behind expensive ones"
        ),
    )
    parser.add_argument(
        "--max-queue",
        type=nonnegative_int,
        default=None,
        metavar="N",
        help=(
            "requests each lane (small, large) queues for a grading process before the next "
            "gets a 503 with Retry-After (default 1024)"
        ),
    )
    parser.add_argument(
        "--worker-memory",
        type=positive_int,
        default=None,
        metavar="B",
        help=(
            "bytes of data a grading process may use (default 1 GiB); a request that needs "
            "more gets a 413 and the process is replaced"
        ),
    )
    parser.add_argument(
        "--grade-timeout",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help=(
            "a request not answered this long after it asked for a grading process, waiting "
            "included, gets a 503 (default 30)"
        ),
    )
    parser.add_argument(
        "--header-timeout",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="time a client has to send a request's line and headers (default 10)",
    )
    parser.add_argument(
        "--body-timeout",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="time a client has to send a request's body (default 60)",
    )
    parser.add_argument(
        "--send-timeout",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help=(
            "a client that takes nothing of its reply for this long is disconnected (default 30)"
        ),
    )
    parser.add_argument(
        "--limit-concurrency",
        type=positive_int,
        default=DEFAULT_LIMIT_CONCURRENCY,
        metavar="N",
        help=(
            "connections and requests in progress per server process before new requests get "
            f"a 503 (default {DEFAULT_LIMIT_CONCURRENCY})"
        ),
    )
    parser.add_argument(
        "--name",
        default=None,
        metavar="NAME",
        help="the server's name, as NeMo Gym's instance name: names the session cookie",
    )
    judge = parser.add_argument_group(
        "model judge (off by default)",
        "A flagged POST /verify (needs_judge, e.g. robust's no_answer rows) waits for a model judge "
        "at an OpenAI-compatible endpoint, up to --judge-deadline seconds, and is answered with its "
        "rule verdict when the judge is late or down. $CHOICEBOX_JUDGE_API_KEY holds a bearer token "
        "if the endpoint needs one.",
    )
    judge.add_argument("--judge-url", metavar="URL", help="the endpoint's base URL, e.g. http://localhost:8000/v1")
    judge.add_argument("--judge-model", metavar="M", help="the judge model's name (required with --judge-url)")
    judge.add_argument("--judge-api", choices=("chat", "responses"), default=None, help="chat (default) or responses")
    judge.add_argument(
        "--judge-deadline", type=positive_float, default=None, metavar="SECONDS",
        help="how long a flagged /verify waits for the judge (default 10)",
    )  # fmt: skip
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="uvicorn log level (default info)",
    )
    parser.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    from choicebox.server import CONFIG_ENV, create_app  # noqa: PLC0415  loaded when the command runs, so the CLI starts fast

    config: dict[str, Any] = {"rules_dirs": list(args.rules_dir)}
    if args.mode is not None:
        config["mode"] = args.mode
    for name in _APP_OPTIONS:
        if getattr(args, name) is not None:
            config[name] = getattr(args, name)
    if args.name is not None:
        config["server_name"] = args.name
    judge = _judge_config(args)
    if isinstance(judge, str):
        print(f"choicebox serve: {judge}", file=sys.stderr)
        return 2
    if judge is not None:
        config["judge"] = judge
    try:
        # Fail here, with a readable message, on an unknown mode or a bad rule file, rather than
        # in every worker. The app is then rebuilt by each worker from the environment (it starts
        # its grading processes only when it is served).
        create_app(mode=config.get("mode"), rules_dirs=tuple(config["rules_dirs"]))
    except (ChoiceboxError, OSError) as exc:
        print(f"choicebox serve: {exc}", file=sys.stderr)
        return 2
    os.environ[CONFIG_ENV] = orjson.dumps(config).decode()

    import uvicorn  # noqa: PLC0415  only serving needs the ASGI server

    uvicorn.run(
        "choicebox.server:app_from_env",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        loop="uvloop" if importlib.util.find_spec("uvloop") else "asyncio",
        # httptools (a dependency of uvicorn[standard]) with the head and body deadlines and the
        # head size bound that uvicorn lacks.
        http="choicebox.server._http:GuardedHttpToolsProtocol",
        limit_concurrency=args.limit_concurrency,
        access_log=False,
        log_level=args.log_level,
        server_header=False,
    )
    return 0


def _judge_config(args: argparse.Namespace) -> dict[str, Any] | str | None:
    """The served config's ``judge`` (checked now, in words when it is wrong), or ``None``."""
    if args.judge_url is None:
        given = [name for name in ("judge_model", "judge_api", "judge_deadline") if getattr(args, name) is not None]
        return f"--{given[0].replace('_', '-')} needs --judge-url" if given else None
    if args.judge_model is None:
        return "--judge-url needs --judge-model"
    from choicebox.judge import JudgeEndpoint  # noqa: PLC0415  the judge extra: only a server with a judge loads it
    from choicebox.server._judging import DEFAULT_JUDGE_DEADLINE  # noqa: PLC0415  the same

    deadline = args.judge_deadline or DEFAULT_JUDGE_DEADLINE
    # A call is bounded by the deadline too: past it the reply is the rules', so waiting longer
    # only fills the cache.
    judge: dict[str, Any] = {"url": args.judge_url, "model": args.judge_model, "timeout": deadline, "deadline": deadline}
    if args.judge_api is not None:
        judge["api"] = args.judge_api
    try:
        JudgeEndpoint(**{key: value for key, value in judge.items() if key != "deadline"})
    except ChoiceboxError as exc:
        return str(exc)
    return judge
