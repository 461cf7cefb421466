"""Gym's own ``/aggregate_metrics``: run under NeMo Gym 0.7.0's interpreter, not choicebox's.

    GYM_PYTHON tests/gym_side/aggregate.py < cases.json > replies.json

Reads a JSON list of cases, each ``{"name": ..., "verify_responses": [...]}``, posts each one to
the ``/aggregate_metrics`` route of Gym's own ``mcqa`` resources server (its FastAPI app, in
process, through Starlette's test client) and writes the replies as a JSON list in the same
order. ``tests/serve/test_gym_metrics.py`` compares them with choicebox's.
"""

import json
import sys
import warnings
from pathlib import Path
from unittest.mock import MagicMock


def main() -> None:
    # Gym's servers are directories, not packages: its own tests import mcqa's app.py from there.
    import resources_servers
    from fastapi.testclient import TestClient
    from nemo_gym.server_utils import ServerClient

    sys.path.insert(0, str(Path(next(iter(resources_servers.__path__))) / "mcqa"))
    from app import MCQAResourcesServer, MCQAResourcesServerConfig

    config = MCQAResourcesServerConfig(
        host="127.0.0.1", port=0, entrypoint="app.py", name="mcqa", domain="knowledge"
    )
    server = MCQAResourcesServer(config=config, server_client=MagicMock(spec=ServerClient))
    client = TestClient(server.setup_webserver())
    replies = []
    for case in json.load(sys.stdin):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Gym warns about unequal repeats; the data says so
            reply = client.post("/aggregate_metrics", json={"verify_responses": case["verify_responses"]})
        if reply.status_code != 200:
            raise SystemExit(f"{case['name']}: HTTP {reply.status_code} {reply.text[:500]}")
        replies.append(reply.json())
    json.dump(replies, sys.stdout)


if __name__ == "__main__":
    main()
