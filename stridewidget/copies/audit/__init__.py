"""``sw.audit``: ``report`` (``audit()`` and :class:`AuditReport`), ``step`` (one audited step),
``recorders`` and ``origins`` (what each event is and where it comes from), ``profiler`` (copies
inside kernels), ``found`` (the copies and rows), ``suggest`` / ``fixes`` / ``timing`` / ``compare``
(measured fixes), ``guard`` (the model it can audit, and its state restored), ``html`` (the report page).
"""
