"""``wattsched web``: a local web page to configure, launch, watch and compare simulations.

Pick a shipped, uploaded or generated platform and workload, a preset (or ``compose`` and one piece per
slot) with its options in a form generated from the option schema, launch runs in the background (Dask,
as ``wattsched sweep``; several at once, with live progress), then look at a run's metrics, Gantt chart,
power against its budget and host states, download its five Batsim CSVs and its Paraver trace, and
compare runs side by side. Everything lives in one workspace folder and survives a restart.

=================  ============================================================================
module             what
=================  ============================================================================
:mod:`.workspace`  the folder: inputs, run folders, index; no path leaves it
:mod:`.forms`      option forms from the schema, and back to ``-o`` options with the CLI's errors
:mod:`.runs`       runs as Dask tasks, progress and results in each run's ``status.json``
:mod:`.charts`     Plotly figures of a run and of a comparison
:mod:`.app`        the Starlette application (pages, htmx fragments, downloads)
=================  ============================================================================

Needs the extra ``web`` (``pip install 'wattsched[web]'``): Starlette, Jinja2, uvicorn,
python-multipart and Plotly (whose ``plotly.min.js`` the page serves; htmx is vendored in ``static/``).
"""
