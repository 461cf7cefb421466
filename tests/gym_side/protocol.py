"""NeMo Gym 0.7.0's own models and checks applied to a running choicebox server.

    GYM_PYTHON tests/gym_side/protocol.py BASE_URL < checks.json > report.json

Run under Gym's interpreter (choicebox is not installed there; it is reached over HTTP). Input:
``{"seed_bodies": [...], "close_bodies": [...], "verify_requests": [...]}``. Output:

* ``contract``: ``null`` when ``nemo_gym.testing.session_conformance.check_resources_session_contract``
  passes on the server (driven through an ASGI app that forwards to it), else its error.
* ``seed`` / ``close``: per body, whether Gym's ``ResourcesSeedSessionRequest`` /
  ``ResourcesCloseSessionRequest`` accepts it, the server's status, and whether the server's
  reply validates as Gym's response model (``ResourcesSeedSessionResponse`` for a typed seed,
  else ``BaseSeedSessionResponse``; ``ResourcesCloseSessionResponse``).
* ``verify``: per request, the server's status and the errors (``null`` if none) of validating
  its reply as mcqa's ``MCQAVerifyResponse``, as ``BaseVerifyResponse`` and as the single-agent-
  turn environment server's ``SingleAgentTurnResult``.
* ``failure_kind_warnings``: what Gym's ``nemo_gym.failure_kinds`` logger said meanwhile.
"""

import json
import logging
import sys
from pathlib import Path


def main() -> None:
    import httpx
    import resources_servers
    from fastapi.testclient import TestClient
    from nemo_gym.base_resources_server import (
        BaseSeedSessionResponse,
        BaseVerifyResponse,
        ResourcesCloseSessionRequest,
        ResourcesCloseSessionResponse,
        ResourcesSeedSessionRequest,
        ResourcesSeedSessionResponse,
    )
    from nemo_gym.episode_types import EpisodeId, TaskId
    from nemo_gym.single_agent_turn_types import SingleAgentTurnResult
    from nemo_gym.testing.session_conformance import check_resources_session_contract
    from pydantic import ValidationError

    sys.path.insert(0, str(Path(next(iter(resources_servers.__path__))) / "mcqa"))
    from app import MCQAVerifyResponse

    base = sys.argv[1]
    checks = json.load(sys.stdin)
    warnings: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            warnings.append(record.getMessage())

    logging.getLogger("nemo_gym.failure_kinds").addHandler(Collect())
    http = httpx.Client(base_url=base, timeout=30)

    async def forward(scope, receive, send):  # an ASGI app that is the choicebox server
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = [(k.decode(), v.decode()) for k, v in scope["headers"] if k.lower() != b"host"]
        reply = http.request(scope["method"], scope["path"], content=body, headers=headers)
        raw = [(k.encode(), v.encode()) for k, v in reply.headers.multi_items()]
        await send({"type": "http.response.start", "status": reply.status_code, "headers": raw})
        await send({"type": "http.response.body", "body": reply.content})

    report: dict = {}
    seed = ResourcesSeedSessionRequest(
        resources_session_id="resources-session-contract",
        episode_id=EpisodeId(rollout_id="7-0"),
        task_id=TaskId(taskset="choicebox_mcqa", task_id="7"),
        task_data={"expected_answer": "B"},
    )
    try:
        check_resources_session_contract(forward, seed, keeps_state=False)
        report["contract"] = None
    except AssertionError as exc:
        report["contract"] = str(exc)

    def accepts(model, body) -> bool:
        try:
            model.model_validate(body)
        except ValidationError:
            return False
        return True

    client = TestClient(forward)
    report["seed"] = []
    for body in checks["seed_bodies"]:
        typed = accepts(ResourcesSeedSessionRequest, body)
        reply = client.post("/seed_session", json=body)
        model = ResourcesSeedSessionResponse if typed else BaseSeedSessionResponse
        report["seed"].append(
            {
                "gym_accepts": typed,
                "status": reply.status_code,
                "reply": reply.json(),
                "reply_valid": reply.status_code == 200 and accepts(model, reply.json()),
                "cookie": bool(reply.cookies),
            }
        )
    report["close"] = []
    for body in checks["close_bodies"]:
        reply = client.post("/close_session", json=body)
        report["close"].append(
            {
                "gym_accepts": accepts(ResourcesCloseSessionRequest, body),
                "status": reply.status_code,
                "reply_valid": reply.status_code == 200
                and accepts(ResourcesCloseSessionResponse, reply.json()),
            }
        )

    def errors(model, body):
        try:
            model.model_validate(body)
        except ValidationError as exc:
            return [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]
        return None

    report["verify"] = []
    for request in checks["verify_requests"]:
        reply = client.post("/verify", json=request)
        body = reply.json()
        report["verify"].append(
            {
                "status": reply.status_code,
                "mcqa": errors(MCQAVerifyResponse, body),
                "base": errors(BaseVerifyResponse, body),
                "single_agent_turn": errors(SingleAgentTurnResult, body),
            }
        )
    report["failure_kind_warnings"] = warnings
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()
