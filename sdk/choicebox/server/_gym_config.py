"""This server's settings as NeMo Gym hands them to the resources servers it starts.

Gym (``gym env start``, ``gym eval run``, ``gym eval reverify``) starts every server it lists
itself: ``cd resources_servers/<impl> && <venv>/bin/python <entrypoint>``, with two environment
variables. ``NEMO_GYM_CONFIG_DICT`` is the whole resolved config as YAML, with ``host`` and
``port`` filled in for every server; ``NEMO_GYM_CONFIG_PATH`` is the top-level key of the
instance being started. The instance's settings are three levels down,
``<instance>.<server type>.<implementation>`` (``nemo_gym.global_config.
get_first_server_config_dict``). Of those, this server reads:

* ``host``, ``port`` (Gym assigns them), ``num_workers``;
* ``grading_mode``: the mode for every row, as the mcqa server's ``grading_mode`` (null: each
  row's own);
* ``rules_dirs``, ``regex_timeout``, ``max_body_bytes``: ``choicebox serve``'s options;
* ``judge_url``, ``judge_model``, ``judge_api``, ``judge_deadline``: a model judge for the verdicts
  the mode flags (off when ``judge_url`` is absent or null; ``choicebox serve --judge-url``).

Gym's other keys (``entrypoint``, ``domain``, ``description``, ...) are Gym's. The global
``dry_run`` asks for the config to be checked and nothing served, as Gym's own servers do.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

import attrs
import yaml

from choicebox._errors import GymConfigError

__all__ = ["CONFIG_DICT_ENV", "CONFIG_PATH_ENV", "GymServerConfig", "load_gym_config"]

CONFIG_DICT_ENV: Final = "NEMO_GYM_CONFIG_DICT"
CONFIG_PATH_ENV: Final = "NEMO_GYM_CONFIG_PATH"


@attrs.frozen(kw_only=True)
class GymServerConfig:
    """What Gym asks of this resources server."""

    name: str
    host: str
    port: int
    grading_mode: str | None = None
    rules_dirs: tuple[str, ...] = ()
    regex_timeout: float | None = None
    max_body_bytes: int | None = None
    num_workers: int | None = None
    judge_url: str | None = None
    judge_model: str | None = None
    judge_api: str | None = None
    judge_deadline: float | None = None
    dry_run: bool = False

    def serve_arguments(self) -> list[str]:
        """The ``choicebox serve`` arguments that serve this config."""
        args = ["--host", self.host, "--port", str(self.port), "--name", self.name]
        if self.grading_mode is not None:
            args += ["--mode", self.grading_mode]
        for directory in self.rules_dirs:
            args += ["--rules-dir", directory]
        if self.regex_timeout is not None:
            args += ["--regex-timeout", repr(self.regex_timeout)]
        if self.max_body_bytes is not None:
            args += ["--max-body-bytes", str(self.max_body_bytes)]
        if self.num_workers is not None:
            args += ["--workers", str(self.num_workers)]
        for flag, value in (
            ("--judge-url", self.judge_url),
            ("--judge-model", self.judge_model),
            ("--judge-api", self.judge_api),
            ("--judge-deadline", None if self.judge_deadline is None else repr(self.judge_deadline)),
        ):
            if value is not None:
                args += [flag, value]
        return args


def load_gym_config(environ: Mapping[str, str]) -> GymServerConfig:
    """The config of the instance ``$NEMO_GYM_CONFIG_PATH`` in ``$NEMO_GYM_CONFIG_DICT``.

    Raises ``GymConfigError`` naming the variable or the key that is missing or wrong.
    """
    raw = environ.get(CONFIG_DICT_ENV)
    name = environ.get(CONFIG_PATH_ENV)
    if raw is None or not name:
        missing = CONFIG_DICT_ENV if raw is None else CONFIG_PATH_ENV
        raise GymConfigError(
            f"${missing} is not set: NeMo Gym sets it when it starts this server "
            "(gym env start / gym eval run); to serve on your own, run `choicebox serve`"
        )
    try:
        config = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise GymConfigError(f"${CONFIG_DICT_ENV} is not valid YAML: {exc}") from None
    if not isinstance(config, Mapping):
        raise GymConfigError(f"${CONFIG_DICT_ENV} is not a mapping")
    server, where = _server_block(config, name)
    reader = _Reader(server, where)
    dry_run = config.get("dry_run", False)
    return GymServerConfig(
        name=name,
        host=reader.text("host"),
        port=reader.port(),
        grading_mode=reader.optional_text("grading_mode"),
        rules_dirs=reader.texts("rules_dirs"),
        regex_timeout=reader.positive_number("regex_timeout"),
        max_body_bytes=reader.positive_int("max_body_bytes"),
        num_workers=reader.positive_int("num_workers"),
        judge_url=reader.optional_text("judge_url"),
        judge_model=reader.optional_text("judge_model"),
        judge_api=reader.optional_text("judge_api"),
        judge_deadline=reader.positive_number("judge_deadline"),
        dry_run=bool(dry_run),
    )


def _server_block(config: Mapping[str, Any], name: str) -> tuple[Mapping[str, Any], str]:
    """``config[name]``'s first value's first value, as Gym reads a server's config."""
    where = name
    node: Any = config.get(name)
    if not isinstance(node, Mapping):
        raise GymConfigError(f"${CONFIG_DICT_ENV} has no server instance {name!r}")
    for level in ("server type", "implementation"):
        if not node or not isinstance(node, Mapping):
            raise GymConfigError(f"{where}: expected a mapping with one {level}")
        key, node = next(iter(node.items()))
        where = f"{where}.{key}"
    if not isinstance(node, Mapping):
        raise GymConfigError(f"{where}: expected a mapping of settings")
    return node, where


class _Reader:
    def __init__(self, block: Mapping[str, Any], where: str) -> None:
        self.block = block
        self.where = where

    def _error(self, key: str, wanted: str) -> GymConfigError:
        value = self.block.get(key)
        return GymConfigError(f"{self.where}.{key}: expected {wanted}, got {value!r}")

    def text(self, key: str) -> str:
        value = self.block.get(key)
        if not isinstance(value, str) or not value:
            raise self._error(key, "a string (Gym fills it in)")
        return value

    def optional_text(self, key: str) -> str | None:
        value = self.block.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            raise self._error(key, "a name or null")
        return value

    def texts(self, key: str) -> tuple[str, ...]:
        value = self.block.get(key)
        if value is None:
            return ()
        if isinstance(value, str):
            return (value,)
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self._error(key, "a directory or a list of directories")
        return tuple(value)

    def port(self) -> int:
        value = self.block.get("port")
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 65536:
            raise self._error("port", "a port number (Gym fills it in)")
        return value

    def positive_int(self, key: str) -> int | None:
        value = self.block.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self._error(key, "a whole number of at least 1")
        return value

    def positive_number(self, key: str) -> float | None:
        value = self.block.get(key)
        if value is None:
            return None
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value <= 0
        ):
            raise self._error(key, "a positive number of seconds")
        return float(value)
