"""The only code that reads live objects: a torch tensor or NumPy array -> :class:`~stridewidget.Layout`.

``inspect`` dispatches (``sw.inspect``, ``same_storage``, ``overlap``, ``read_cells``); ``torch``,
``numpy`` and ``symbolic`` (FakeTensors with SymInts, never guarding) know their library;
``as_strided`` is the checked ``sw.as_strided``; ``numbers`` / ``printed`` format values as the
library prints them; ``rebuild`` re-creates a freed view over memory a live tensor still holds.
"""
