"""Which calls copy data: ``sw.track_copies`` (``tracker``: the dispatch modes; ``ops``: what one
ATen op does; ``snapshot``: what is kept of a tensor; ``log`` and ``format``: what is shown) and
``sw.audit`` of a whole training step (``audit/``).
"""
