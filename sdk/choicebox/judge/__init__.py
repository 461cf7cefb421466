"""A model judge for the rows the rules leave undecided: the evaluator's ``needs_judge`` pipeline,
for multiple choice.

A grading mode names the failure kinds it sends to a judge (``judge: [no_answer]`` in its rule
file; ``robust`` does, the Gym-compatible modes do not), and their verdicts carry
``needs_judge``. A ``Judge`` then shows such a row to a model at an OpenAI-compatible endpoint
(``JudgeEndpoint``: Chat Completions or Responses) with a prompt made from a template the user can
replace (``JudgePrompt``): the question, the lettered options, the response, and the question
which single option the response commits to, or none. The reply is read strictly (one letter or
``NONE``; anything else is a judge failure), replies are cached on disk by prompt
(``JudgeCache``), and ``apply_judgement`` records the judge's reading beside the rules' and lets
the reward follow it on flagged rows only. ``choicebox.batch.judge_file`` runs this over a graded
file (``choicebox grade --judge-url``), with calibration on rows the rules decided.

The HTTP client is httpx: ``pip install 'choicebox[judge]'``.
"""

from __future__ import annotations

from ._apply import apply_judgement
from ._cache import JudgeCache, cache_key
from ._client import API_KEY_ENV, Api, JudgeClient, JudgeEndpoint, Reply, api_key_from_env
from ._judge import MAX_RESPONSE_CHARS, Judge, JudgeCost, Judgement, JudgeRequest
from ._prompt import JudgePrompt
from ._reply import NONE, ReplyReading, read_reply
from ._report import Calibration, JudgeReport, JudgeTally, KindTally
from ._rows import JudgedRow, judged_row

__all__ = [
    "API_KEY_ENV",
    "MAX_RESPONSE_CHARS",
    "NONE",
    "Api",
    "Calibration",
    "Judge",
    "JudgeCache",
    "JudgeClient",
    "JudgeCost",
    "JudgeEndpoint",
    "JudgePrompt",
    "JudgeReport",
    "JudgeRequest",
    "JudgeTally",
    "JudgedRow",
    "Judgement",
    "KindTally",
    "Reply",
    "ReplyReading",
    "api_key_from_env",
    "apply_judgement",
    "cache_key",
    "judged_row",
    "read_reply",
]
