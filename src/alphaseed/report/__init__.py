"""What the pipeline shows: the paper's tables beside this run's, the figures, the grid searches'
files and heat maps, and the published reproduction. Import its modules directly:
``formats`` (marks, number formats, Markdown, LaTeX, HTML), ``tables``, ``figures``, ``search``,
``runs`` (the published runs), ``deviations`` and ``documents`` (the published documents),
``publish``.
"""
