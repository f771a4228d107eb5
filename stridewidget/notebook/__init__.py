"""Jupyter: the anywidget (``widget``), the live registry and after-cell refresh (``live``, ``watch``),
``%load_ext stridewidget`` (``display``), the ``as_strided`` playground and kernel-free pages
(``page``, ``static``: the bundles built from ``js/`` ship in ``static/``).
"""
