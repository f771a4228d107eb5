"""Every budget and default of the package, in one place: what a display may spend, how much a
picture or a report may hold, how much the checks may try.

The modules that use a value import it from here under the same name (a test may still patch it
where it is used).  Two kinds of numbers live elsewhere on purpose: the picture's limits that the
front end shares (``stridewidget/style.py`` writes them into ``style.json`` for the JavaScript),
and the exact overlap solver's tuning constants (``stridewidget/layout/overlap/portfolio.py`` and
``search.py``, each explained where it is used and measured by
``benchmarks/bench_overlap_tuning.py``).

>>> DISPLAY_MAX_SECONDS <= 0.05 and DISPLAY_MAX_WORK > 0
True
"""

from __future__ import annotations

# --- what a display (str, explain, to_dict, every renderer) may spend on one tensor -------------

#: Self-overlapping views with at most this many run starts get exact ``touched`` counts by
#: enumeration (see ``count_touched``; about 50 MiB); every view of at most this many elements does.
TOUCHED_ENUMERATION_LIMIT = 10**6
#: Search steps a display may spend on one overlap question: about 50 ms of Python
#: (``benchmarks/bench_inspect.py`` measures it).  Where the budget runs out the display says the
#: question is not decided; the properties stay exact.
DISPLAY_MAX_WORK = 10_000
#: ... and never more than this long, whatever the machine (a safety net: tests use the step
#: count).  The rest of the 50 ms goes to touch counts and the scene.
DISPLAY_MAX_SECONDS = 0.03
#: Run starts a display may enumerate for an exact ``touched`` (about 5 MiB, a few ms).
DISPLAY_ENUMERATION_LIMIT = 10**5

# --- touch counts: how many logical indices read each shown storage cell ------------------------

#: Loop steps the exact touch counter may take per tensor before it gives up (counts -> None):
#: about 20-40 ms of Python, within the display budget.
TOUCH_COUNT_WORK_LIMIT = 5_000
#: Overlapping views whose span is at most this many cells get every count from one histogram
#: (about 3 int64 arrays of the span: 24 MiB).
TOUCH_HISTOGRAM_SPAN_LIMIT = 1_000_000
#: Tensors up to this many element cells get their touch counts by enumerating every address.
TOUCH_ENUMERATE_LIMIT = 200_000

# --- arguments --------------------------------------------------------------------------------

#: Most dims a shape may list (torch's own tensors stop far below; this bounds an endless iterator).
MAX_DIMS = 4096
#: Most storage cells per row a picture takes (a scene holds at most 1024 cells per storage).
MAX_WRAP = 1024

# --- the scene: what a picture shows of a tensor (``build_scene``'s defaults) ------------------

#: Elements shown at each end of an elided dim (as ``torch.set_printoptions(edgeitems=...)``).
EDGE_ITEMS = 3
#: A tensor with more elements than this is elided (as ``torch.set_printoptions(threshold=...)``).
THRESHOLD = 256
#: A dim longer than this is elided whatever the tensor's size.
MAX_DIM_ITEMS = 32
#: Bytes a DTensor's ``sw.render_svg`` may take with a hover title on every cell (a 4x6x5 tensor
#: on 8 ranks takes 135 kB): past it the SVG is written as the picture alone, no per-cell hover
#: groups, as the saved fallback (whose budget, 64 kB, is issue 36's for any saved picture).
MAX_DTENSOR_SVG_BYTES = 256_000
#: Storage cells a scene holds at most per storage (the rest is drawn as gaps).
MAX_STORAGE_CELLS = 1024
#: Names longer than this are cut (a name is a label, not a payload).
MAX_NAME = 80
#: Characters a tensor's name keeps in a saved picture over its weight budget (its distinct end;
#: the facts below the picture keep the whole name).
SHORT_NAME = 20
#: Storage cells shown on each side of a cell that must be visible (a shown element, the storage
#: ends, an arrow end).
CONTEXT_CELLS = 2
#: Runs shorter than this (or than a storage row) are drawn, not collapsed: a gap marker is as wide.
MIN_GAP = 4
#: A suggested row narrower than this reads as a column, not a strip of memory.
MIN_WRAP = 8
#: In a storage longer than one strip, runs of at least this many storage cells that no shown
#: tensor reads collapse into one marked cell ("⋯ 36 cells") instead of rows of them; shorter runs
#: are drawn (a marker is as wide), and so is every cell of a short storage.
COLLAPSE_RUN = 4
#: A storage gap of at most this many cells has its read cells counted exactly (touch counts),
#: so a gap that holds read cells says so; a longer one is said "not shown", never "untouched".
GAP_COUNT_LIMIT = 4096

# --- pictures and pages -----------------------------------------------------------------------

#: The height a picture may take (px): one of tensors of at most 2 dims, and any other (more
#: dims, or more than two tensors).  A taller one is drawn again with fewer digits after the
#: point in its cells (down to one; ``render.picture.draw``) — narrower cells put more panels on
#: a row.  The visual lint checks every picture of its corpus against the same two numbers.
PICTURE_HEIGHT_2D = 1100
PICTURE_HEIGHT_ND = 1600
#: The bytes the saved static fallback (the notebook's ``text/html``: the picture and each
#: tensor's facts) may weigh: tensors of at most 2 dims, at most 4, any.  A heavier picture is laid
#: out again: its cells' addresses said in one line, then its grids cut to their first and last
#: rows and columns, fewer panels, fewer tensors (``render.picture.draw``).
FALLBACK_BYTES_2D = 24_000
FALLBACK_BYTES_4D = 48_000
FALLBACK_BYTES = 64_000
#: ... of which the live widget's controls above the picture take this many px in one row (51
#: measured in Chromium), each further row of them this many more (25-26 measured): the picture
#: itself is laid out for the rest.  The controls wrap (``.sw-toolbar``: a flex row, this gap
#: between items) as their widths say, measured in Chromium with DejaVu fonts (wide ones):
#: "cells show", "storage row width", the status line (480 px + padding at least) and, where a
#: tensor has 3 dims or more, the slice picker: with a one-letter name and a two-digit count of
#: slices not drawn, each further letter at most this many px, at most this wide (its select cuts
#: a longer name), each further character of the count this many.
PICTURE_CONTROLS_HEIGHT = 60
PICTURE_CONTROLS_ROW = 26
PICTURE_CONTROLS_PX = {"mode": 274, "wrap": 190, "picker": 341, "status": 498}
PICTURE_CONTROLS_LETTER, PICTURE_CONTROLS_PICKER, PICTURE_CONTROLS_DIGIT = 12, 419, 7
PICTURE_CONTROLS_GAP = 12

#: The live playground's enumeration limit (js/playground/math.js ENUMERATION_LIMIT).
PHANTOM_ENUMERATION_LIMIT = 200_000
#: A widget label taken from the caller's source longer than this reads worse than the generic one.
MAX_SOURCE_LABEL = 40
#: Pictures a sanitizer / fuzzer report draws at most: a long report stays a table to read.
MAX_HAZARD_PICTURES = 5
#: Copies a saved ``sw.graph`` table draws with their inputs; the rest are listed (a saved
#: notebook stays small: a picture of a small graph's copy is about 60 kB of SVG).
MAX_GRAPH_PICTURES = 6
#: Storages up to this many elements a saved graph table draws cell by cell; a bigger (or
#: symbolic) one is shown as its layout's text, so one picture stays a few kB whatever the size.
MAX_GRAPH_DRAWN_ELEMENTS = 256
#: Tensors the live graph widget draws for one selected node: the node's, then its inputs' (an
#: ``output`` or a ``cat`` of many tensors draws its first ones and says how many it left out).
MAX_GRAPH_TENSORS_DRAWN = 8

#: Copies an audit report's page draws (a picture is 100-200 KB of SVG, so a page or a saved
#: notebook cannot hold one per copy); the rest are listed with their layouts as text.
MAX_AUDIT_PICTURES = 1
#: A picture larger than this (a big tensor draws a cell per element) is left out of an audit
#: page: the page of a short report stays a few hundred kB.
MAX_AUDIT_PICTURE_CHARS = 150_000

# --- the audit's timing of a fix -----------------------------------------------------------------

#: Interleaved rounds at least (A B A B ...): with fewer, the quartiles are two or three samples.
TIMING_ROUNDS = 7
#: Medians this far apart (relative), and IQRs apart, make a "faster" / "slower" verdict.
TIMING_MIN_CHANGE = 0.05
#: An IQR wider than this fraction of its median makes a timing too noisy to call "no measurable
#: change": the spread could hide a change as big as the 5 % a verdict needs, many times over.
TIMING_MAX_SPREAD = 0.5
#: Seconds an audit report's page (``to_html``) spends measuring suggestions not yet measured: it
#: starts no new candidate after this and names those it left unmeasured on the page.
AUDIT_PAGE_MEASURE_SECONDS = 10.0

# --- the checks -------------------------------------------------------------------------------

#: Sub-boxes the sanitizer's ``other_index_witness`` tries before it answers conservatively.
WITNESS_SPLIT_LIMIT = 512
#: Random layout mixes the fuzzer tries at most per tensor (a small tensor has few distinct ones).
FUZZ_RANDOM_TRIES = 64

# --- benchmarks -------------------------------------------------------------------------------

#: A quick benchmark run's bandwidth buffers are at most this big, whatever the cache: the whole
#: quick run stays about a minute on two busy CPU cores (2x a 300 MiB cache took 7-23 minutes).
QUICK_BUFFER_CAP = 16 * 2**20
#: Calls whose meta run ``sw.sanitize`` keeps (``check/resize.py``: the shapes an ``out=`` op
#: leaves, per op and argument layout): a fused optimizer asks the same question every step.
META_RUN_CACHE_LIMIT = 256
