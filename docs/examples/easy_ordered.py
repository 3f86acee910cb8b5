"""EASY backfilling with a queue order chosen by an option."""

import math

from schedulers.core.policy import Option, option_choice
from schedulers.easy import EASY


class EasyOrdered(EASY):
    name = "easy-ordered"
    summary = "EASY backfilling whose queue order is an option: by walltime or by number of hosts."
    option_docs = {
        "by": Option("the queue order, smallest first: the job's walltime or its number of hosts",
                     type="'walltime' or 'hosts'", default="'walltime'"),
    }

    def __init__(self, options=None):
        super().__init__(options)
        # a bad value stops the run with one line naming the policy, the option and the choices
        self.by = option_choice(self.name, self.options, "by", "walltime", ("walltime", "hosts"))

    def queue_key(self, job):
        if self.by == "hosts":
            return job.res
        return job.walltime if job.has_walltime else math.inf
