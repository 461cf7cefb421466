"""``choicebox serve``: a Starlette verify service with NeMo Gym's resources-server endpoints."""

from __future__ import annotations

from ._app import CONFIG_ENV, app_from_env, create_app

__all__ = ["CONFIG_ENV", "app_from_env", "create_app"]
