"""Shortest job first: the waiting job with the smallest walltime starts first (no backfilling)."""

import math

from schedulers.core.policy import Policy, first_hosts


class ShortestJobFirst(Policy):
    name = "sjf"
    summary = "Starts waiting jobs by increasing walltime; nothing overtakes the first one."

    def __init__(self, options=None):
        super().__init__(options)
        self.queue = []                            # the waiting jobs

    def on_job_submitted(self, job):
        if job.res > len(self.platform.hosts):
            self.reject(job)                       # it could never start
        else:
            self.queue.append(job)

    def schedule(self):                            # called after every Batsim message
        # a walltime of -1 means "none": such a job goes last
        self.queue.sort(key=lambda job: (job.walltime if job.has_walltime else math.inf, job.subtime))
        while self.queue and self.queue[0].res <= self.nb_available:
            job = self.queue.pop(0)
            self.execute(job, first_hosts(self.available, job.res))
