"""Pure layout math: ints in, ints out — no torch or NumPy objects, no IPython.

``strides`` (contiguity tests, address, span, ``check_view``), ``ints`` (what torch accepts as a
size, stride or offset), ``layout`` (:class:`~stridewidget.Layout`: the data, its flags and words),
``touch`` (how many logical indices read each storage cell) and ``overlap/`` (the exact solver).
"""
