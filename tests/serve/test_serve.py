"""``choicebox serve``: the real server in a subprocess, spoken to over HTTP on loopback."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

import choicebox
from choicebox._regex import too_many_patterns
from choicebox.metrics import aggregate_metrics
from gym_side.launch import free_port

MAX_BODY = 1 << 20  # the test server's limit, so 413 bodies stay small
OPTIONS = [{"A": "Granite"}, {"B": "Basalt"}, {"C": "Marble"}, {"D": "Pumice"}]
VERDICT_FIELDS = (
    "reward",
    "expected_answer",
    "extracted_answer",
    "reward_components",
    "correctness",
    "format",
    "unambiguous",
    "grading_failure",
    "grading_detail",
    "extraction_step",
    "grading_mode",
    # Gym's: a verdict is a valid measurement.
    "mask_sample",
    "failure_kind",
    "failure_reason",
)


def _start(*extra: str) -> Iterator[str]:
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "choicebox",
        "serve",
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]
    proc = subprocess.Popen(
        [*cmd, "--max-body-bytes", str(MAX_BODY), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    try:
        while True:
            if proc.poll() is not None:
                out = proc.stdout.read().decode() if proc.stdout else ""
                pytest.fail(f"server exited with {proc.returncode}:\n{out}")
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("server did not answer /health within 30 s")
            time.sleep(0.05)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        logs = proc.stdout.read().decode() if proc.stdout else ""
        # A 500 is a bug: the server logs it, and no test sends anything that should cause one.
        assert "Traceback" not in logs, logs


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    yield from _start()


@pytest.fixture(scope="module")
def colon_server() -> Iterator[str]:
    yield from _start("--mode", "lenient_answer_colon")


@pytest.fixture(scope="module")
def client(server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server, timeout=30) as c:
        yield c


def _response(text: str) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "created_at": 1.0,
        "model": "test-model",
        "object": "response",
        "output": [
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
        "parallel_tool_calls": False,
        "tool_choice": "auto",
        "tools": [],
    }


def _request(text: str = r"It is \boxed{C}.", **fields: Any) -> dict[str, Any]:
    prompt = "Which rock forms from limestone?\n" + "\n".join(
        f"{k}: {v}" for o in OPTIONS for k, v in o.items()
    )
    row: dict[str, Any] = {
        "responses_create_params": {"input": [{"role": "user", "content": prompt}]},
        "response": _response(text),
        "options": OPTIONS,
        "expected_answer": "C",
        "uuid": "u-1",
        "metadata": {"source": "test"},
    }
    row.update(fields)
    return row


def _expected(row: dict[str, Any], mode: str | None = None) -> dict[str, Any]:
    sample = choicebox.MCQASample.from_wire(row)
    verdict = choicebox.grade(sample, row["response"], mode=mode).to_wire(row)
    return {**verdict, "mask_sample": False, "failure_kind": None, "failure_reason": None}


# --- the endpoints ---------------------------------------------------------------------------


def test_health_lists_modes(client: httpx.Client) -> None:
    reply = client.get("/health")
    assert reply.status_code == 200
    body = reply.json()
    assert body["status"] == "ok"
    assert body["modes"] == choicebox.default_registry().names()
    assert "strict_single_letter_boxed" in body["modes"]


SEED = {
    "resources_session_id": "resources-session-1",
    "episode_id": {"rollout_id": "3-0", "attempt": 0},
    "task_id": {"taskset": "choicebox_mcqa", "task_id": "3"},
    "task_data": {"expected_answer": "C", "options": OPTIONS},
}
COOKIE = "ChoiceboxResourcesServer___choicebox"


def test_session_routes_and_reverify_mode(client: httpx.Client) -> None:
    # An agent's legacy seed (its run body, or nothing) gets Gym's empty reply.
    assert client.post("/seed_session", json={}).json() == {}
    assert client.post("/seed_session").json() == {}
    assert client.post("/seed_session", json=_request()).json() == {}
    # An environment server's typed seed gets its session id back, and a session cookie.
    reply = httpx.post(f"{client.base_url}/seed_session", json=SEED)
    assert reply.status_code == 200
    assert reply.json() == {
        "resources_session_id": "resources-session-1",
        "resources_tools": None,
        "sandbox_access": None,
    }
    assert "HttpOnly" in reply.headers["set-cookie"]
    session = reply.cookies[COOKIE]
    # The cookie comes back unchanged when it is sent along; a close confirms the session,
    # seeded or not, as often as it is asked.
    close = {"resources_session_id": "resources-session-1", "episode_id": SEED["episode_id"]}
    for _ in range(2):
        closed = httpx.post(
            f"{client.base_url}/close_session", json=close, cookies={COOKIE: session}
        )
        assert closed.status_code == 200
        assert closed.json() == {"resources_session_id": "resources-session-1"}
        assert closed.cookies[COOKIE] == session
    reply = client.post("/close_session", json={})
    assert reply.status_code == 422
    assert reply.json()["detail"] == [
        "required field missing @ $.resources_session_id",
        "required field missing @ $.episode_id",
    ]
    reply = client.get("/reverify_mode")
    assert reply.status_code == 200
    assert reply.json() == "stateless"
    assert reply.headers["content-type"] == "application/json"


@pytest.mark.parametrize(
    ("text", "reward", "letter"),
    [
        (r"Marble. \boxed{C}", 1.0, "C"),
        (r"\boxed{B}", 0.0, "B"),
        ("no box at all", 0.0, None),
        ("", 0.0, None),
    ],
)
def test_verify_matches_grade(
    client: httpx.Client, text: str, reward: float, letter: str | None
) -> None:
    row = _request(text)
    reply = client.post("/verify", json=row)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body == _expected(row)
    assert body["reward"] == reward
    assert body["extracted_answer"] == letter
    # The request's own fields come back untouched, plus every verdict field.
    for key, value in row.items():
        assert body[key] == value
    assert set(VERDICT_FIELDS) <= set(body)


def test_verify_row_grading_mode_is_used(client: httpx.Client) -> None:
    row = _request("Answer: C", grading_mode="lenient_answer_colon")
    body = client.post("/verify", json=row).json()
    assert body["extracted_answer"] == "C"
    assert body["grading_mode"] == "lenient_answer_colon"
    assert body == _expected(row)


def test_server_mode_overrides_row_mode(colon_server: str) -> None:
    row = _request("Answer: C", grading_mode="strict_single_letter_boxed")
    body = httpx.post(f"{colon_server}/verify", json=row).json()
    assert body["grading_mode"] == "lenient_answer_colon"
    assert body["extracted_answer"] == "C"
    assert body["reward"] == 1.0
    assert body == _expected(row, mode="lenient_answer_colon")
    # Even an unknown row mode is overridden, as the reference's config does.
    row = _request("Answer: C", grading_mode="no_such_mode")
    reply = httpx.post(f"{colon_server}/verify", json=row)
    assert reply.status_code == 200
    assert reply.json()["reward"] == 1.0


def test_template_regex_runs(client: httpx.Client) -> None:
    row = _request(
        "Final Choice: C", template_metadata={"output_regex": r"Final Choice:\s*([A-Za-z])"}
    )
    body = client.post("/verify", json=row).json()
    assert body["extracted_answer"] == "C"
    assert body["extraction_step"] == "template_regex"
    assert body == _expected(row)


def test_verify_batch(client: httpx.Client) -> None:
    rows: list[Any] = [_request(r"\boxed{C}"), _request(r"\boxed{A}"), {"options": 1}, 7]
    rows.append(_request("Answer: C", grading_mode="lenient_answer_colon"))
    reply = client.post("/verify_batch", json={"requests": rows})
    assert reply.status_code == 200
    out = reply.json()["responses"]
    assert len(out) == 5
    assert out[0] == _expected(rows[0])
    assert out[1] == _expected(rows[1])
    assert out[4] == _expected(rows[4])
    assert out[2]["index"] == 2
    assert out[2]["status"] == 422
    assert "expected a list of single-key objects, got int @ $.options" in out[2]["error"]
    assert out[3] == {
        "error": ["expected a JSON object, got number @ $"],
        "status": 422,
        "index": 3,
    }
    # A bare list is accepted too.
    bare = client.post("/verify_batch", json=rows[:2]).json()["responses"]
    assert bare == out[:2]
    assert client.post("/verify_batch", json={"requests": []}).json() == {"responses": []}


def test_aggregate_metrics_matches_reference_example(client: httpx.Client) -> None:
    rows = [
        {"_ng_task_index": 0, "_ng_rollout_index": 0, "reward": 1.0, "extracted_answer": "A"},
        {"_ng_task_index": 0, "_ng_rollout_index": 1, "reward": 1.0, "extracted_answer": "A"},
        {"_ng_task_index": 1, "_ng_rollout_index": 0, "reward": 0.0, "extracted_answer": "B"},
        {"_ng_task_index": 1, "_ng_rollout_index": 1, "reward": 1.0, "extracted_answer": "C"},
    ]
    reply = client.post("/aggregate_metrics", json={"verify_responses": rows})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert set(body) >= {"agent_metrics", "key_metrics", "group_level_metrics"}
    key = body["key_metrics"]
    assert key["mean/reward"] == pytest.approx(0.75)
    assert key["pass@1/accuracy"] == pytest.approx(75.0)
    assert key["majority@2/accuracy"] == pytest.approx(75.0)
    assert body["agent_metrics"]["pass@2/accuracy"] == pytest.approx(100.0)
    # A bare list gives the same answer.
    assert client.post("/aggregate_metrics", json=rows).json() == body


def test_aggregate_metrics_of_verify_responses_by_uuid(client: httpx.Client) -> None:
    rows = [_request(r"\boxed{C}", uuid="q1"), _request(r"\boxed{A}", uuid="q1")]
    rows.append(_request(r"\boxed{C}", uuid="q2"))
    graded = client.post("/verify_batch", json={"requests": rows}).json()["responses"]
    body = client.post("/aggregate_metrics", json={"verify_responses": graded}).json()
    expected = aggregate_metrics(graded, task_key_field="uuid")
    assert body == orjson.loads(orjson.dumps(expected))
    assert body["key_metrics"]["mean/reward"] == pytest.approx(2 / 3)
    # Every numeric field of the verify responses is described, the components among them.
    agent = body["agent_metrics"]
    for column in ("reward", "correctness", "format", "unambiguous"):
        for stat in ("mean", "max", "min", "median", "std"):
            assert f"{stat}/{column}" in agent
    assert "mean/mask_sample" not in agent  # a flag, not a measurement
    assert [g["task_key"] for g in body["group_level_metrics"]] == ["q1", "q2"]


@pytest.mark.parametrize(
    "listing",
    ["A: Granite\nB: Basalt\nC: Marble\nD: Pumice", "[A] Granite\n[B] Basalt\n[C] Marble"],
)
def test_a_rollout_without_options_is_graded_from_its_prompt(
    client: httpx.Client, listing: str
) -> None:
    # NeMo Gym's rollout files drop `options`; `choicebox grade` reads them from the prompt and
    # so does the server (it used to answer 422 `required field missing @ $.options`).
    row = _request(r"Marble. \boxed{C}")
    del row["options"]
    row["responses_create_params"] = {
        "input": [{"role": "user", "content": f"Which rock forms from limestone?\n{listing}"}]
    }
    reply = client.post("/verify", json=row)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body == {**_expected(row), "options_source": "prompt"}
    assert body["reward"] == 1.0


# --- bad input -------------------------------------------------------------------------------


def _post(client: httpx.Client, path: str, content: bytes) -> httpx.Response:
    return client.post(path, content=content, headers={"content-type": "application/json"})


@pytest.mark.parametrize("path", ["/verify", "/verify_batch", "/aggregate_metrics"])
@pytest.mark.parametrize("body", [b"{bad", b"", b"[1, 2", b"\xff\xfe", b'{"a": NaN}'])
def test_malformed_json_is_400(client: httpx.Client, path: str, body: bytes) -> None:
    reply = _post(client, path, body)
    assert reply.status_code == 400, reply.text
    assert "malformed JSON" in reply.json()["detail"]


def test_malformed_json_on_session_routes_is_400(client: httpx.Client) -> None:
    assert _post(client, "/seed_session", b"{nope").status_code == 400


def test_invalid_request_is_422_with_every_path(client: httpx.Client) -> None:
    row = {
        "responses_create_params": {"input": [{"role": "user", "content": "Q?"}]},
        "options": [{"A": "x"}, {"B": 3}, "C"],
        "expected_answer": 1,
        "template_metadata": {"output_regex": 5},
        "uuid": 9,
    }
    reply = client.post("/verify", json=row)
    assert reply.status_code == 422
    detail = reply.json()["detail"]
    assert "required field missing @ $.response" in detail
    for path in (
        "$.options[1].B",
        "$.options[2]",
        "$.expected_answer",
        "$.template_metadata.output_regex",
        "$.uuid",
    ):
        assert any(p.endswith(f"@ {path}") for p in detail), (path, detail)


@pytest.mark.parametrize(
    ("row", "path"),
    [
        ([1, 2], "$"),
        ("just a string", "$"),
        (_request(response=5), "$.response"),
        (_request(response={"output": "text"}), "$.response.output"),
        (_request(responses_create_params=[1]), "$.responses_create_params"),
        ({k: v for k, v in _request().items() if k != "responses_create_params"}, "$"),
    ],
)
def test_invalid_requests_are_422(client: httpx.Client, row: Any, path: str) -> None:
    reply = client.post("/verify", json=row)
    assert reply.status_code == 422, reply.text
    detail = reply.json()["detail"]
    assert isinstance(detail, list)
    assert detail
    assert all(" @ $" in p for p in detail)
    assert any(p.split(" @ ")[-1].startswith(path) for p in detail), detail


def _masked(reply: httpx.Response) -> str:
    """The failure_reason of a masked verify response (asserting that it is one)."""
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["reward"] == 0.0
    assert body["mask_sample"] is True
    assert body["failure_kind"] == "choicebox:invalid_row"
    assert body["extracted_answer"] is None
    reason: str = body["failure_reason"]
    return reason


def test_unknown_mode_is_masked_naming_known_modes(client: httpx.Client) -> None:
    reason = _masked(client.post("/verify", json=_request(grading_mode="telepathy")))
    assert "telepathy" in reason
    assert reason.endswith("@ $.grading_mode")
    for name in choicebox.default_registry().names():
        assert name in reason


def test_too_many_patterns_is_masked(client: httpx.Client) -> None:
    row = _request(template_metadata={"output_regex": ["x"] * 33})
    reason = _masked(client.post("/verify", json=row))
    assert reason.endswith("@ $.template_metadata.output_regex")
    # the one check grading makes too (where the row is graded, its patterns skipped)
    assert too_many_patterns(["x"] * 33) in reason


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"options": "A) x B) y"}, "$.options"),
        ({"options": [{"A": "x"}, {"B": 3}]}, "$.options[1].B"),
        ({"options": [{"A": "only one"}]}, "$.options"),
        ({"expected_answer": "Z"}, "$.expected_answer"),
        ({"expected_answer": 3}, "$.expected_answer"),
        ({"template_metadata": {"output_regex": 5}}, "$.template_metadata.output_regex"),
        ({"template_metadata": "x"}, "$.template_metadata"),
    ],
)
def test_a_verify_request_with_bad_data_is_masked_not_refused(
    client: httpx.Client, fields: dict[str, Any], path: str
) -> None:
    """Gym aborts a whole collection on a 4xx: one bad row must not sink a run. The masked
    reply names the field, drops the stale verdict of a row graded before, and validates as
    Gym's verify response (tests/serve/test_gym_protocol.py checks that with Gym's models)."""
    stale = {"grading_failure": "wrong_answer", "extraction_step": "boxed_letter"}
    reply = client.post("/verify", json=_request(**fields, **stale))
    reason = _masked(reply)
    assert any(part.endswith(f"@ {path}") for part in reason.split("; ")), reason
    body = reply.json()
    assert "grading_failure" not in body
    assert "extraction_step" not in body
    assert body["uuid"] == "u-1"  # the row's own fields come back
    # In a batch too, while rows that are no verify requests still get error entries.
    out = client.post(
        "/verify_batch", json={"requests": [_request(**fields), {"options": 1}]}
    ).json()["responses"]
    assert out[0]["mask_sample"] is True
    assert out[0]["failure_reason"] == reason
    assert out[1]["status"] == 422


def test_bad_batch_and_metrics_bodies_are_422(client: httpx.Client) -> None:
    assert client.post("/verify_batch", json={"requests": 5}).status_code == 422
    assert client.post("/verify_batch", json={"rows": []}).status_code == 422
    assert client.post("/verify_batch", json=3).status_code == 422
    assert client.post("/aggregate_metrics", json={"verify_responses": [1]}).status_code == 422
    # Without indices or a uuid a row is Gym's task 0; two such rows are numbered 0 and 1.
    no_task = [{"reward": 1.0, "extracted_answer": "A"}, {"reward": 0.0, "extracted_answer": "B"}]
    reply = client.post("/aggregate_metrics", json={"verify_responses": no_task})
    assert reply.status_code == 200
    assert [g["_ng_task_index"] for g in reply.json()["group_level_metrics"]] == [0]
    twice = [{"_ng_task_index": 0, "_ng_rollout_index": 0, "reward": 1.0}] * 2
    reply = client.post("/aggregate_metrics", json=twice)
    assert reply.status_code == 422
    assert "already given by row 0" in reply.json()["detail"][0]
    bad_index = [{"_ng_task_index": "x", "reward": 1.0, "extracted_answer": "A"}]
    assert client.post("/aggregate_metrics", json=bad_index).status_code == 422
    bad_reward = [{"_ng_task_index": 0, "reward": "high", "extracted_answer": "A"}]
    assert client.post("/aggregate_metrics", json=bad_reward).status_code == 422


def test_body_over_limit_by_content_length_is_413(client: httpx.Client) -> None:
    body = b'{"pad": "' + b"x" * MAX_BODY + b'"}'
    reply = _post(client, "/verify", body)
    assert reply.status_code == 413
    assert "limit" in reply.json()["detail"]
    # The connection is still usable afterwards.
    assert client.get("/health").status_code == 200


def test_body_over_limit_streamed_is_413(server: str) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"pad": "'
        for _ in range(40):
            yield b"x" * 32768
        yield b'"}'

    with httpx.Client(base_url=server, timeout=30) as c:
        reply = c.post("/verify_batch", content=chunks())
        assert reply.status_code == 413
    # Just under the limit, streamed, is fine (and then a 422: it is not a request).
    with httpx.Client(base_url=server, timeout=30) as c:
        row = orjson.dumps(_request(pad="y" * (MAX_BODY - 4096)))
        reply = c.post("/verify", content=iter([row[:1000], row[1000:]]))
        assert reply.status_code == 200, reply.text


def test_bad_content_length_is_rejected_without_500(server: str) -> None:
    host, port = server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"POST /verify HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}")
        status = sock.recv(4096).split(b"\r\n", 1)[0]
    assert b" 400 " in status + b" "


def test_unknown_route_and_method(client: httpx.Client) -> None:
    assert client.get("/nope").status_code == 404
    assert client.get("/verify").status_code == 405


def test_deeply_nested_json_is_not_500(client: httpx.Client) -> None:
    body = b"[" * 5000 + b"]" * 5000
    assert _post(client, "/verify", body).status_code in (400, 422)
    row = _request()
    row["metadata"] = orjson.loads(b"[" * 500 + b"]" * 500)
    reply = client.post("/verify", json=row)
    assert reply.status_code == 200
    assert reply.json() == _expected(row)
    reply = client.post("/verify_batch", json=[row, _request()])
    assert reply.status_code == 200
    assert reply.json()["responses"] == [_expected(row), _expected(_request())]
    # Deeper than the standard library encodes: built by hand, as no encoder here writes it.
    row["metadata"] = "DEEP"
    deep = orjson.dumps(row).replace(b'"DEEP"', b"[" * 1000 + b"]" * 1000)
    assert _post(client, "/verify", deep).status_code in (200, 422)
    reply = _post(client, "/verify_batch", b"[" + deep + b"," + orjson.dumps(_request()) + b"]")
    assert reply.status_code == 200
    assert reply.json()["responses"][1] == _expected(_request())


def test_verdicts_of_odd_but_valid_inputs(client: httpx.Client) -> None:
    cases = [
        _request(response="plain text \\boxed{C}"),
        _request(response={"choices": [{"message": {"content": "\\boxed{C}"}}]}),
        _request(response={"output": []}),
        _request(template_metadata={"output_regex": "(["}),
        _request(template_metadata={"output_regex": "(Answer): ([A-D])"}, response="Answer: B"),
    ]
    for row in cases:
        reply = client.post("/verify", json=row)
        assert reply.status_code == 200, (row, reply.text)
        assert reply.json() == _expected(row)


# --- load and isolation ----------------------------------------------------------------------


async def _verify_many(base: str, rows: list[dict[str, Any]], limit: int) -> list[httpx.Response]:
    gate = asyncio.Semaphore(limit)
    limits = httpx.Limits(max_connections=limit, max_keepalive_connections=limit)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as c:

        async def one(row: dict[str, Any]) -> httpx.Response:
            async with gate:
                return await c.post("/verify", json=row)

        return await asyncio.gather(*(one(row) for row in rows))


def test_concurrent_requests_are_all_answered(server: str) -> None:
    letters = "ABCD"
    rows = [_request(f"\\boxed{{{letters[i % 4]}}}", uuid=f"u{i}") for i in range(300)]
    replies = asyncio.run(_verify_many(server, rows, 64))
    assert [r.status_code for r in replies] == [200] * 300
    for i, reply in enumerate(replies):
        body = reply.json()
        assert body["uuid"] == f"u{i}"
        assert body["extracted_answer"] == letters[i % 4]
        assert body["reward"] == (1.0 if letters[i % 4] == "C" else 0.0)


def test_catastrophic_regex_is_bounded_and_isolated(server: str) -> None:
    slow = _request(
        template_metadata={"output_regex": "(a+)+$"}, response=_response("a" * 100_000 + "!")
    )

    async def scenario() -> tuple[list[float], list[httpx.Response], list[httpx.Response]]:
        async with httpx.AsyncClient(base_url=server, timeout=60) as c:

            async def timed_slow() -> httpx.Response:
                return await c.post("/verify", json=slow)

            async def normal(i: int) -> httpx.Response:
                await asyncio.sleep(0.002 * i)  # spread over the time the slow ones run
                return await c.post("/verify", json=_request(r"\boxed{C}", uuid=f"n{i}"))

            start = time.monotonic()
            slow_tasks = [asyncio.create_task(timed_slow()) for _ in range(4)]
            normals = await asyncio.gather(*(normal(i) for i in range(100)))
            normal_done = time.monotonic() - start
            slows = await asyncio.gather(*slow_tasks)
            slow_done = time.monotonic() - start
            return [normal_done, slow_done], normals, slows

    (normal_done, slow_done), normals, slows = asyncio.run(scenario())
    for i, reply in enumerate(normals):
        assert reply.status_code == 200
        assert reply.json()["uuid"] == f"n{i}"
        assert reply.json()["reward"] == 1.0
    for reply in slows:
        assert reply.status_code == 200
        body = reply.json()
        assert body["reward"] == 0.0
        assert body["extracted_answer"] is None
        assert body["grading_failure"] == "regex_timeout"
        assert "timed out" in body["grading_detail"]
    # Generous bounds: the regex bound is 0.25 s per pattern.
    assert slow_done < 10, slow_done
    assert normal_done < 10, normal_done


def test_unknown_server_mode_fails_at_start() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "choicebox", "serve", "--port", "0", "--mode", "telepathy"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "telepathy" in proc.stderr
    assert "strict_single_letter_boxed" in proc.stderr


def test_serve_loads_the_modes_of_its_rules_dirs(tmp_path: Any) -> None:
    """``--rules-dir`` (the option every grading command shares) reaches the server's workers."""
    (tmp_path / "house.yaml").write_text(
        "version: 1\nid: house\ndescription: the house mode\nextends: strict_single_letter_boxed\n"
    )
    for base in _start("--rules-dir", str(tmp_path), "--mode", "house"):
        reply = httpx.post(f"{base}/verify", json=_request(), timeout=30)
        assert reply.status_code == 200, reply.text
        assert (reply.json()["grading_mode"], reply.json()["reward"]) == ("house", 1.0)


@pytest.mark.parametrize(
    "argv",
    [["grade", "x.jsonl"], ["compare", "x.jsonl"], ["explain", "x.jsonl"], ["serve"], ["rules", "list"]],
)
def test_every_grading_command_takes_repeated_rules_dirs(argv: list[str]) -> None:
    from choicebox.cli import build_parser

    args = build_parser().parse_args([*argv, "--rules-dir", "one", "--rules-dir", "two"])
    assert args.rules_dir == ["one", "two"]
