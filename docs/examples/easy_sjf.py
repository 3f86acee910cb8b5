"""EASY backfilling with the queue in shortest-walltime-first order."""

import math

from schedulers.easy import EASY


class EasySJF(EASY):
    name = "easy-sjf"
    summary = "EASY backfilling whose queue is ordered by walltime, shortest first."

    def queue_key(self, job):
        # smallest first; EASY breaks ties by arrival order
        return job.walltime if job.has_walltime else math.inf
