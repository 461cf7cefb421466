"""``choicebox serve``: a Starlette verify service with NeMo Gym's resources-server endpoints."""

from __future__ import annotations

from ._app import CONFIG_ENV, app_from_env, create_app
from ._gym_config import GymServerConfig, load_gym_config

__all__ = ["CONFIG_ENV", "GymServerConfig", "app_from_env", "create_app", "load_gym_config"]
