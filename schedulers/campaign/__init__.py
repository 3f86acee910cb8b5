"""Campaigns: many simulations (policies x scenarios x seeds x option axes) on Dask.

A campaign is a TOML file (:mod:`.spec`) expanded into runs with stable ids; ``gridsched campaign
run`` executes the missing ones on a Dask cluster (:mod:`.runner`, a ``LocalCluster`` by default)
and writes one result file per run, atomically (:mod:`.store`); ``collect``, ``plot`` and
``report`` aggregate them (:mod:`.collect`, :mod:`.plot`, :mod:`.report`).

Output folder layout (``--out DIR``)::

    DIR/campaign.json          the manifest: campaign name, source file, axes, every run's id and params,
                               the [report] section (written at every ``run``)
    DIR/results/<id>.json      one record per finished run (format below), written atomically
    DIR/outputs/<id>/          Batsim's output files of the run (only with ``keep_outputs = true``)
    DIR/runs.csv               ``collect``: one row per run
    DIR/summary.csv            ``collect``: one row per group (all params but the seed)
    DIR/plots/*.png|svg        ``plot`` / ``report``
    DIR/report.md              ``report``

A run record (``results/<id>.json``, format ``gridsched-campaign-run/1``)::

    {"format": "gridsched-campaign-run/1",
     "id": "<16 hex digits>",            # stable: hash of the run's canonical parameters
     "campaign": "<name>",
     "status": "done" | "failed",
     "params": {"policy": "<label>", "scenario": "<label>", "seed": 3, "<axis>": value, ...},
     "policy_name": "easy", "policy_options": {...}, "scenario_spec": {...}, "engine_options": {...},
     "inputs_sha256": "<64 hex digits>",   # file scenarios only: the SHA-256 of their files
     "policy_sha256": "<64 hex digits>",   # a policy of the user's own code only: its file's SHA-256
     "simulator": "engine" | "batsim",
     "summary": {"jobs": 40, "success": 40, "killed": 0, "rejected": 0, "makespan": 1234.5,   # s
                 "mean_waiting_time": ..., "max_waiting_time": ...,                        # s
                 "mean_bounded_slowdown": ..., "utilisation": ...,                          # [0, 1]
                 "energy_joules": ... | null, "energy_kwh": ... | null} | null,
     "policy_metrics": {"<name>": number, ...},
     "wall_time_s": 0.012,
     "error": null | "<one line>", "traceback": null | "<text>",
     "outputs": null | "outputs/<id>",
     "gridsched_version": "0.1.0",
     "gridsched_code_sha256": "<64 hex digits>"}   # the code that made it (schedulers.campaign.provenance)

``params`` values are scalars (str, int, float, bool); the group of a run is its ``params``
without ``seed``.
"""
