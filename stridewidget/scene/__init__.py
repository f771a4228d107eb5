"""The scene: the bounded, JSON-able description of what every renderer draws.

* :mod:`.build` — :func:`~.build.build_scene` assembles it (the format is in its docstring);
* :mod:`.logical` — which logical indices are shown (elision, slices, panels);
* :mod:`.storage` — which storage cells are shown, the gaps between them, the strip's row width;
* :mod:`.values` — the values of the shown storage cells;
* :mod:`.arrows` — the stride arrows and their lanes;
* :mod:`.reads` — what a conj/neg/quantized view reads where memory holds something else;
* :mod:`.index` — the logical index of a drawn cell;
* :mod:`.validate` — the check every scene passes before it is drawn (``schema.json``).
"""
