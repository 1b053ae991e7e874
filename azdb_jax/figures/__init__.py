"""The reproduction's figures: one module per figure group, pure functions ``report -> (Figure, numbers)``.

Each function draws one figure type from a group's report (``reproduction.load_or_evaluate``)
and returns the matplotlib figure with the numbers it shows, so that
``Results.save_figure(fig, name, numbers)`` keeps both side by side. Nothing here trains,
searches or plays: every number comes from the report. matplotlib is imported when a
figure is drawn.
"""
