"""The one error type of campaigns: a bad campaign file, folder or request, as one line."""

from __future__ import annotations


class CampaignError(ValueError):
    """A bad campaign file or output folder. The message is one line naming the file, the key
    (dotted TOML path such as ``policy[1].options``) and what is wrong."""


#: What to do with a file of ``results/`` that is no readable run record (cut by a copy, edited):
#: the way out the error messages give.
MOVE_IT_OUT = "move it out of results/ (`gridsched campaign run` runs again a run whose record is missing)"
