"""One static picture of a scene, assembled from its parts, as primitives in px for any backend.

:func:`draw` lays out what the widget shows, without interaction: each storage as a strip of
memory with its stride arrows over it, then one card per tensor.  :mod:`.svg` writes the
primitives as SVG and :mod:`.mpl` draws them with matplotlib, so both show the same picture.
Where each part is drawn:

* :mod:`.strip` — the storage strip (header, legend, cells, gaps, wrapped rows);
* :mod:`.arrows` — the stride arrows over the strip and their labels;
* :mod:`.card` — a tensor's card (title, facts line from :mod:`.facts`, its slices laid out);
* :mod:`.grid` — the logical grid of one 2-D slice (a panel for 3-D and more);
* :mod:`.primitives` — Rect / Text / Path / Group / Picture, text widths, the px budget;
* :mod:`.canvas`, :mod:`.labels` — what the parts draw onto, and their shared labels and colours.

No layout math happens here beyond turning indices into coordinates: addresses, touch counts,
values and arrows all come from the scene (:func:`scene_of` builds it when given tensors).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from ..layout.ints import as_wrap
from ..limits import (
    PICTURE_CONTROLS_DIGIT,
    PICTURE_CONTROLS_GAP,
    PICTURE_CONTROLS_HEIGHT,
    PICTURE_CONTROLS_LETTER,
    PICTURE_CONTROLS_PICKER,
    PICTURE_CONTROLS_PX,
    PICTURE_CONTROLS_ROW,
    PICTURE_HEIGHT_2D,
    PICTURE_HEIGHT_ND,
    SHORT_NAME,
)
from ..scene.validate import validate_scene
from .canvas import Canvas, Lookup
from .card import draw_card
from .digits import has_digits
from .elide import (
    cut_scene,
    has_long_grid,
    has_long_names,
    has_panels,
    most_picks,
    picks_not_drawn,
)
from .labels import listed, one_memory_words
from .primitives import (
    MAX_WIDTH,
    PAD,
    G,
    Picture,
    text_width,
    translated,
    wrapped,
)
from .strip import draw_strip
from .weight import address_bytes, weight, weight_budget

__all__ = ["draw", "height_budget", "scene_of"]


def scene_of(*tensors: Any, wrap: int | None = None, **named: Any) -> dict[str, Any]:
    """The scene to draw: a scene dict or a widget as is, else :func:`build_scene` of the tensors.

    Positional tensors are named ``t0``, ``t1``, ...; keyword ones keep their names.  ``wrap``
    (storage cells per row) overrides the scene's suggestion; a widget's own ``wrap`` is used
    when it has one.

    >>> import torch
    >>> scene = scene_of(torch.zeros(2, 3), y=torch.ones(3))
    >>> [t["name"] for t in scene["tensors"]]
    ['t0', 'y']
    >>> scene_of(scene) == scene
    True
    >>> scene_of(scene, wrap=2)["storages"][0]["wrap"]
    2
    """
    wrap = as_wrap(wrap)
    if len(tensors) == 1 and not named:
        only = tensors[0]
        given = None
        if isinstance(only, Mapping) and "storages" in only and "tensors" in only:
            given = only
        elif isinstance(getattr(only, "scene", None), Mapping):  # a StrideWidget (duck-typed)
            given = only.scene
            if wrap is None:
                wrap = getattr(only, "wrap", None)
        elif isinstance(only, Mapping):  # names -> tensors as one mapping: any name, even "wrap"
            tensors, named = (), dict(only)
        if given is not None:
            validate_scene(given)
            scene = dict(given)
            if wrap is not None:
                scene["storages"] = [{**st, "wrap": wrap} for st in scene.get("storages", [])]
            return scene
    if not tensors and not named:
        raise TypeError(
            "nothing to draw: pass tensors/arrays (render_svg(x), render_svg(a=x, b=x.t())), "
            "a scene from build_scene, or a StrideWidget"
        )
    from ..scene.build import build_scene

    mapping: dict[str, Any] = {f"t{i}": obj for i, obj in enumerate(tensors)}
    clash = set(mapping) & set(named)
    if clash:
        raise TypeError(f"names {sorted(clash)} are used both positionally and as keywords")
    mapping.update(named)
    return build_scene(mapping, wrap=wrap)


def described(scene: Mapping[str, Any]) -> str:
    """The picture in words, for its one ``<title>`` and ``aria-label``: each tensor's layout and
    the storage it is drawn over.

    >>> import torch
    >>> from stridewidget.scene.build import build_scene
    >>> x = torch.zeros(2, 3)
    >>> described(build_scene({"x": x, "xt": x.t()}))
    'memory layout of x: float32 (2,3):(3,1) +0 · storage 6 · contiguous; xt: float32 (3,2):(1,3) +0 · storage 6 · F-contiguous; both over storage s0'
    """
    tensors = list(scene.get("tensors", []))
    parts = [f"{t['name']}: {t['layout']['text']}" for t in tensors]
    storages: dict[str, list[str]] = {}
    for tensor in tensors:
        storages.setdefault(tensor["storage"], []).append(tensor["name"])
    for storage, names in storages.items():
        if len(names) > 1:
            who = "both" if len(names) == 2 else f"all {len(names)}"
            if len(storages) > 1:
                who = listed(names)
            parts.append(f"{who} over storage {storage}")
    words = "memory layout of " + "; ".join(parts)
    memory = "".join(f"; {w}" for w in one_memory_words(scene.get("storages", [])))
    if len(words) + len(memory) > _MAX_DESCRIBED:  # many tensors, long names: listed in full
        words = words[: max(_MAX_DESCRIBED - len(memory) - 1, 40)].rstrip()
        words += f"… ({len(tensors)} tensors)"
    return words + memory


#: Characters the picture's words (its ``<title>`` and ``aria-label``) take at most.
_MAX_DESCRIBED = 400


def draw(
    scene: Mapping[str, Any],
    theme: str = "light",
    *,
    width: float = MAX_WIDTH,
    roles: bool = False,
    every_tensor: bool = False,
    light: bool = True,
) -> Picture:
    """The picture of ``scene`` (see the module docstring) in ``theme`` ("light" or "dark"),
    laid out for ``width`` px (the static fallback's default; the widget passes its column's).
    With ``roles`` its colours are theme role tokens (``"@text"``), resolved by the painter.
    A picture taller than :func:`height_budget` is laid out again with fewer digits, as colour,
    with fewer panels, strip rows and stride arrows (:func:`_height_steps`) and, with more than two tensors (unless ``every_tensor``: the graph
    widget's node and its inputs, bounded there), with the last tensors listed in words.
    Fewer panels keep the slices a reader picked (``"picked"``: :func:`.card._thinned`).
    A picture whose saved fallback is over :func:`.weight.weight_budget` is laid out lighter (see
    :func:`_lightened`) unless ``light=False`` (the live widget's own layout: nothing saved).

    >>> import torch
    >>> from stridewidget.render.primitives import Group
    >>> from stridewidget.scene.build import build_scene
    >>> picture = draw(build_scene({"x": torch.arange(6.0).reshape(2, 3)}))
    >>> arrows = [i for i in picture.items if isinstance(i, Group) and i.cls == "sws-arrow"]
    >>> picture.width <= MAX_WIDTH + PAD, [a.data["dim"] for a in arrows]
    (True, ['1', '0'])
    """
    budget = height_budget(scene, width)
    many = not every_tensor and len(scene.get("tensors", [])) > _MAX_DRAWN_CUT
    # many tensors: a layout stops far past the budget (all of 100 cards a step took seconds)
    stop = 3 * budget if many else None
    lay = partial(_laid_out, scene, theme, width, roles, stop_at=stop, lookups={})
    measured = partial(lay, measure=True)  # a trial whose height alone is read
    lighter = partial(_lightened, lay, scene, every_tensor=every_tensor, tall=budget)
    tensors = scene.get("tensors", [])
    # 3 dims or more: most often over budget, so the first layouts are trials (see _lightened)
    first = measured if any(len(t["layout"]["shape"]) > 2 for t in tensors) else lay
    picture = first()
    if picture.height <= budget:
        return lighter(picture, {}, light=light)
    steps = _height_steps(scene, many)

    def ladder(tried: dict[str, Any], best: Picture) -> tuple[Picture, dict[str, Any]]:
        """Each step on the ones that helped (a trial layout each): the shortest, its settings."""
        for step in steps:
            trial = measured(**{**tried, **step})
            if trial.height < best.height:
                best, tried = trial, {**tried, **step}
            if best.height <= budget:
                break
        return best, tried

    tried: dict[str, Any] = {}
    if len(tensors) >= 2:  # first what loses nothing: two cards side by side
        side = {"card": (width - G["panel_gap"]) / 2}
        paired = first(**side)
        if paired.height <= budget:
            return lighter(paired, side, light=light)
        picture, tried = ladder({}, picture)
        if picture.height > budget:
            other, settings = ladder(side, paired)
            if other.height < picture.height:
                picture, tried = other, settings
    else:
        picture, tried = ladder({}, picture)
    if picture.height > budget and len(tensors) >= 2 and not every_tensor:
        # last: the last tensors listed in words, one line each (two large 5-D tensors too)
        picture, tried = _listed_last(measured, picture, tried, len(tensors), budget)
    return lighter(picture, tried, light=light)


def _height_steps(scene: Mapping[str, Any], many: bool) -> list[dict[str, Any]]:
    """The height ladder's steps for ``scene``, in order (each a trial layout's settings): fewer
    digits, colour, a grid's ends, fewer panels, inline gap markers, then (not ``many`` tensors)
    fewer strip rows and fewer stride arrows, fewer of a grid's ends; last, fewer of the slices a
    reader picked (:func:`.elide.fewer_picks`)."""
    storages = scene.get("storages", [])
    tensors = scene.get("tensors", [])
    steps: list[dict[str, Any]] = [{"at_most": 1}] if has_digits(scene) else []
    if any(s["cells"]["text"] is not None for s in storages):
        steps.append({"colour": True})
    if has_long_grid(scene, 2 * _EDGE + 1):  # a grid drawn whole: its first and last rows
        steps.append({"edge": _EDGE})
    steps += [{"panels": most} for most in (4, 2) if has_panels(scene, most)]
    steps.append({"inline_gaps": True})  # a strip's markers beside its cells
    if not many:  # last: a strip's first rows and its arrows' (the rest one counted gap)
        steps += [{"strip_rows": rows} for rows in _STRIP_ROWS_TALL]
        # then fewer arrows: a strip keeps a row for each arrow's end (a tensor of many dims)
        most = max((len(t["arrows"]) for t in tensors), default=0)
        rows = {"strip_rows": min(_STRIP_ROWS_TALL)} if _STRIP_ROWS_TALL else {}
        steps += [{"arrows": k, **rows} for k in _ARROWS_TALL if most > k]
    if has_long_grid(scene, 2 * _EDGE_TALL + 1):  # then fewer of a grid's ends
        steps.append({"edge": _EDGE_TALL})
    # last: fewer of the slices a reader picked (the most recent kept)
    steps += [{"panels": 2, "picks": k} for k in range(most_picks(scene) - 1, 0, -1)]
    return steps


def _listed_last(
    measured: Callable[..., Picture], picture: Picture, tried: dict, count: int, budget: float
) -> tuple[Picture, dict]:
    """The height ladder's last step: the last of ``count`` tensors listed in words, fewer drawn
    until the picture fits ``budget``; one card left is laid out at the whole width (not the
    half it had beside another)."""
    for keep in range(min(count - 1, _MAX_DRAWN_CUT), 0, -1):
        kept = {k: v for k, v in tried.items() if keep > 1 or k != "card"}
        trial = measured(**{**kept, "keep": keep})
        if trial.height < picture.height:
            picture, tried = trial, {**kept, "keep": keep}
        if picture.height <= budget:
            break
    if picture.height <= budget and "arrows" in tried:  # the room listing made: arrows back
        return _arrows_back(measured, picture, tried, budget)
    return picture, tried


def _arrows_back(measured: Callable[..., Picture], picture: Picture, tried: dict, budget: float):
    """``picture`` (``tried``: fewer stride arrows) with its arrows and strip rows back as far as
    it fits ``budget``: listing tensors in words, after the ladder took them, may make room."""
    rest = {k: v for k, v in tried.items() if k not in ("arrows", "strip_rows")}
    rows = {"strip_rows": tried["strip_rows"]} if "strip_rows" in tried else {}
    more = [{**tried, "arrows": k} for k in _ARROWS_TALL if k > tried["arrows"]]
    for settings in (rest, {**rest, **rows}, *more):
        trial = measured(**settings)
        if trial.height <= budget:
            return trial, settings
    return picture, tried


#: The items of a trial layout whose height alone is read (``_laid_out(..., measure=True)``).
_MEASURED: list = []


def _lightened(
    lay: Callable[..., Picture],
    scene: Mapping[str, Any],
    picture: Picture,
    tried: dict[str, Any],
    *,
    every_tensor: bool,
    light: bool,
    tall: int,
) -> Picture:
    """``picture`` (``lay(**tried)``; a trial's, laid out in full), or, when its saved fallback weighs more than
    :func:`.weight.weight_budget`, laid out again: its cells' addresses said in one line per card
    (not in each cell), then its grids cut to their first and last rows and columns, its storage
    strips to their first and last rows, its values to one digit after the point, fewer panels,
    long names shortened, then fewer tensors; each step on the ones that helped, until it fits.
    No step makes it taller than its height budget ``tall`` (or than it was), the address line
    included."""
    if picture.items is _MEASURED:  # the chosen trial, laid out in full
        picture = lay(**tried)
    budgets: dict[tuple[str, ...], int] = {}

    def budget_of(p: Picture) -> int:
        """Its weight budget (the facts of the tensors it lists in words are shorter), once per
        set of drawn tensors."""
        drawn = tuple(t["id"] for t in p.tensors)
        if drawn not in budgets:
            budgets[drawn] = weight_budget(scene, drawn)
        return budgets[drawn]

    def over(p: Picture) -> int:
        """Bytes over its budget."""
        budget = budget_of(p)
        return weight(p, budget) - budget

    if not light:
        return _restored(lay, picture, tried, None, tall)
    if over(picture) <= 0:
        return _restored(lay, picture, tried, budget_of(picture), tall)
    steps: list[dict[str, Any]] = [{"address_line": True}]
    if "edge" not in tried and has_long_grid(scene, 2 * _EDGE + 1):
        if over(picture) - address_bytes(picture.items) > 0:
            steps = [{"address_line": True, "edge": _EDGE}]  # the line alone cannot do it
        else:
            steps.append({"edge": _EDGE})
    steps.append({"strip_rows": _STRIP_ROWS_LIGHT})  # a strip's first and last rows
    if "at_most" not in tried and has_digits(scene):
        steps.append({"at_most": 1})
    steps += [
        {"panels": most}
        for most in (4, 2)
        if has_panels(scene, most) and tried.get("panels", most + 1) > most
    ]
    tensors = scene.get("tensors", [])
    if has_long_names(scene, SHORT_NAME):  # long names, written in every line that names them
        steps.append({"short_names": SHORT_NAME})
    if not every_tensor and len(tensors) >= 2:  # last: the last tensors listed in words
        most = min(len(tensors) - 1, _MAX_DRAWN_CUT, tried.get("keep", len(tensors)) - 1)
        why = "height and size budgets" if "keep" in tried else "size budget"
        steps += [{"keep": keep, "listed_for": why} for keep in range(most, 0, -1)]
    tallest = max(tall, picture.height)
    for step in steps:
        trial = lay(**{**tried, **step})
        if trial.height <= tallest and over(trial) < over(picture):
            picture, tried = trial, {**tried, **step}
            picture.lightened = True
        if over(picture) <= 0:
            break
    return _restored(lay, picture, tried, budget_of(picture), tall)


def _restored(
    lay: Callable[..., Picture],
    picture: Picture,
    tried: dict[str, Any],
    budget: int | None,
    tall: int,
) -> Picture:
    """A picture whose grids were cut to their ends (``edge``) after its values lost digits or
    became colour: laid out again with every digit, when that fits its height budget and
    ``budget`` bytes (None: no weight budget; ``tall``: the height budget) — a grid's ends with true values over a grid of
    colours.  A picture that draws one tensor lays its card out at the whole width (a card kept
    half wide for two side by side has no neighbour now); a grid that would then continue below
    in blocks of columns keeps its colours."""
    if "edge" not in tried or not ("at_most" in tried or "colour" in tried):
        return picture
    dropped = ("at_most", "colour", "card") if len(picture.tensors) == 1 else ("at_most", "colour")
    trial = lay(**{k: v for k, v in tried.items() if k not in dropped})
    if trial.height > tall or trial.split_grids > picture.split_grids:
        return picture
    if budget is not None and weight(trial, budget) > budget:
        return picture
    trial.lightened = picture.lightened
    return trial


#: The rows a storage strip keeps in a picture over its weight budget: its first and last (and
#: the rows stride arrows start or end in); the rest one marker that counts what it holds.
_STRIP_ROWS_LIGHT = 2
#: A picture over its height budget: its storage strips at most this many rows, then fewer.
_STRIP_ROWS_TALL = (6, 2)
#: ... and at most this many stride arrows per tensor, then fewer (those of its smallest strides)
_ARROWS_TALL = (8, 4)
#: Rows and columns a grid keeps at each end when its picture is over its height budget (as
#: ``torch.set_printoptions(edgeitems=3)`` prints a long tensor).
_EDGE = 3
#: ... and, the ladder's last step, this many (a grid of wide cells that wraps in blocks of columns)
_EDGE_TALL = 2


def height_budget(scene: Mapping[str, Any], width: float = MAX_WIDTH) -> int:
    """The px a picture of ``scene`` laid out for ``width`` px may be tall: ``PICTURE_HEIGHT_2D``
    for one or two tensors of at most 2 dims, else ``PICTURE_HEIGHT_ND``, less the live widget's
    controls above it at that width (:func:`controls_height`; a tensor of 3 dims or more may
    leave slices out: the slice picker names it and counts them).

    >>> import torch
    >>> height_budget(scene_of(torch.zeros(3, 4)), 1280), height_budget(scene_of(torch.zeros(3, 4)))
    (1040, 1014)
    >>> height_budget(scene_of(torch.zeros(2, 3, 4)), 1280)  # the slice picker: two rows
    1514
    """
    tensors = scene.get("tensors", [])
    small = len(tensors) <= 2 and all(len(t["layout"]["shape"]) <= 2 for t in tensors)
    deep = [t for t in tensors if len(t["layout"]["shape"]) > 2]
    picker = max((t.get("name") or "x" for t in deep), key=len) if deep else None
    count = max((math.prod(t["layout"]["shape"][:-2]) for t in deep), default=0)
    return (PICTURE_HEIGHT_2D if small else PICTURE_HEIGHT_ND) - controls_height(
        width, picker, count
    )


def controls_height(width: float, picker: str | None, count: int = 99) -> int:
    """The px the live widget's controls take above a picture ``width`` px wide, with the slice
    picker (naming at most ``picker``, counting at most ``count`` slices not drawn) or not
    (None): their rows as a flex row wraps them (``limits.PICTURE_CONTROLS_PX``; 8 px to spare).
    A pick the picker refuses is said in the status line (two lines kept): no row is added.

    >>> controls_height(1256, None), controls_height(876, None), controls_height(876, "x")
    (60, 86, 86)
    >>> controls_height(876, "attention_scores"), controls_height(676, "x"), controls_height(376, "x")
    (112, 112, 138)
    """
    px = dict(PICTURE_CONTROLS_PX)
    advances = round(text_width(picker or "x", 1.0) / G["char_em"])  # a CJK letter: two
    letters = PICTURE_CONTROLS_LETTER * max(advances - 1, 0)
    digits = PICTURE_CONTROLS_DIGIT * max(len(f"{count:,}") - 2, 0)
    px["picker"] = min(px["picker"] + letters, PICTURE_CONTROLS_PICKER) + digits
    room = width - 8
    rows, used = 1, 0.0
    for kind in ["mode", "wrap", *(["picker"] if picker is not None else []), "status"]:
        if used and used + PICTURE_CONTROLS_GAP + px[kind] > room:
            rows, used = rows + 1, px[kind]
        else:
            used += (PICTURE_CONTROLS_GAP if used else 0) + px[kind]
        if kind != "status" and px[kind] > room:  # wider than the row: its own words wrap
            rows += math.ceil(px[kind] / room) - 1
    return PICTURE_CONTROLS_HEIGHT + PICTURE_CONTROLS_ROW * (rows - 1)


#: Tensors a picture lists in words at most when their cards do not fit (the rest are counted).
_MAX_LISTED = 12
#: ... and names this many more at most (their layouts: ``sw.inspect``).
_MAX_NAMED = 40
#: Tensors a picture too tall for its budget draws at most (in the strips and as cards); the
#: rest are listed in words.  More arrows over one strip than this many tensors' are a tangle.
_MAX_DRAWN_CUT = 4


def _listed(canvas: Canvas, tensors: list, y: float, why: str = "height budget") -> float:
    """The tensors whose cards do not fit the picture's ``why`` (its height budget, its size
    budget or both), one line each (name and layout); the y below them."""
    if not tensors:
        return y
    lines = [f"{len(tensors)} more not drawn (the picture's {why}); their layouts:"]
    room = canvas.max_width - 2 * PAD
    same = {
        s["id"]: s["same_memory"] for s in canvas.scene.get("storages", []) if s.get("same_memory")
    }
    for t in tensors[:_MAX_LISTED]:
        line = f"· {t['name']} over storage {t['storage']}"
        if t["storage"] in same:  # its strip is not drawn: say whose memory it is
            line += f" (same memory as {', '.join(same[t['storage']])}, viewed as {t['layout']['dtype']})"
        line += f": {t['layout']['text']}"
        lines += wrapped(line, room, G["font_size"])
    rest = tensors[_MAX_LISTED:]
    if rest:  # named, at most _MAX_NAMED of them (a name is at most MAX_NAME characters)
        names = ", ".join(t["name"] for t in rest[:_MAX_NAMED])
        more = f", … ({len(rest) - _MAX_NAMED} more)" if len(rest) > _MAX_NAMED else ""
        if len(names) > _MAX_DESCRIBED:  # long names: the first of them
            names, more = names[: _MAX_DESCRIBED - 1].rstrip(), "…"
        lines += wrapped(f"· and {len(rest)} more: {names}{more}", room, G["font_size"])
    for t in tensors:  # a reader's picks of a tensor listed here: said, not dropped unsaid
        note = picks_not_drawn(t["logical"]["slices"], (), t["name"], why, most=6)
        lines += wrapped(f"· {t['name']}: {note}", room, G["font_size"]) if note else []
    for line in lines:
        y += G["line_h"]
        canvas.items.append(canvas.text(PAD, y, line, muted=True))
        canvas.width = max(canvas.width, PAD + text_width(line, G["font_size"]))
    return y + 6


def _cards(canvas: Canvas, tensors: list, y: float, stop_at: float | None = None) -> float:
    """Each tensor's card from ``y`` down, side by side while they fit; the y below them (once
    past ``stop_at``, the cards left are not drawn: infinity)."""
    x, row_h = 0.0, 0.0
    for tensor in tensors:
        if stop_at is not None and y > stop_at:
            return float("inf")
        items, w, h = draw_card(canvas, tensor)
        if x > 0 and x + w > canvas.max_width:
            x, y, row_h = 0.0, y + row_h + G["panel_gap"], 0.0
        canvas.items.extend(translated(items, x, y))
        canvas.width = max(canvas.width, x + w)
        x += w + G["panel_gap"]
        row_h = max(row_h, h)
    return y + row_h + 6


def _lookup(
    lookups: dict[tuple[int, int | None], tuple[Mapping[str, Any], Lookup]] | None,
    scene: Mapping[str, Any],
    at_most: int | None,
) -> Lookup | None:
    """The cells' lookup of ``scene`` for ``at_most`` digits, made once per picture (``lookups``:
    the layouts of one :func:`draw`; None: none kept); the scene is kept with it, so that its id
    names no other scene."""
    if lookups is None:
        return None
    key = (id(scene), at_most)
    if key not in lookups:
        lookups[key] = (scene, Lookup(scene, at_most))
    return lookups[key][1]


def _laid_out(
    scene: Mapping[str, Any],
    theme: str,
    width: float,
    roles: bool,
    at_most: int | None = None,
    colour: bool = False,
    keep: int | None = None,
    panels: int | None = None,
    card: float | None = None,
    inline_gaps: bool = False,
    edge: int | None = None,
    address_line: bool = False,
    listed_for: str = "height budget",
    strip_rows: int | None = None,
    short_names: int | None = None,
    picks: int | None = None,
    arrows: int | None = None,
    stop_at: float | None = None,
    lookups: dict[tuple[int, int | None], tuple[Mapping[str, Any], Lookup]] | None = None,
    measure: bool = False,
) -> Picture:
    """The picture with values to ``at_most`` digits after the point, its grids as ``colour``;
    with ``keep``, only the first ``keep`` tensors are drawn (in the strips and as cards) and
    the rest listed in words (for the picture's ``listed_for``); with ``panels``, a card draws at
    most that many panels; with ``card``, its words and panels wrap at that many px; with
    ``inline_gaps``, a strip's gap markers sit beside its cells; with ``edge``, each grid keeps
    that many rows and columns at each end (:func:`.elide.elided_scene`); with
    ``address_line``, each card says its cells' addresses in one line, not in each cell; with
    ``strip_rows``, a strip draws at most that many rows; with ``short_names``, a name longer
    than that is shortened (:func:`.elide.short_named`); with ``picks``, the panels keep that
    many of the slices a reader picked (:func:`.elide.fewer_picks`); with ``arrows``, a strip
    draws at most that many stride arrows per tensor (:func:`.arrows.fewest_arrows`); with
    ``stop_at`` (and every tensor drawn), a layout past that height is not finished: its height
    is infinity.  ``lookups`` keeps the cells' lookups for the picture's next layout.  With
    ``measure``, its height and width alone are the picture's: no grid cell is drawn, its items
    are ``_MEASURED``."""
    scene = cut_scene(scene, edge=edge, short_names=short_names, picks=picks)
    canvas = Canvas(
        scene,
        theme,
        max_width=width,
        roles=roles,
        at_most=at_most,
        colour_values=colour,
        max_panels=panels,
        card_width=card,
        inline_gaps=inline_gaps,
        address_line=address_line,
        max_strip_rows=strip_rows,
        lookup=_lookup(lookups, scene, at_most),
        max_arrows=arrows,
    )
    canvas.measure = measure
    tensors = list(scene.get("tensors", []))
    left_out: list[Mapping[str, Any]] = []
    if keep is not None:
        tensors, left_out = tensors[:keep], tensors[keep:]
    y = 4.0
    stop = stop_at if keep is None else None
    for storage in scene.get("storages", []):
        if stop is not None and y > stop:  # far too tall: never the picture (see draw)
            return Picture(canvas.width, float("inf"), theme, [], described(scene), tensors)
        drawn = [t for t in tensors if t["storage"] == storage["id"]]
        if drawn or keep is None:
            # every tensor over it marks and counts its reads (one listed in words too); the
            # drawn ones alone get arrows (first: a crowded cell names its first readers)
            members = drawn + [t for t in left_out if t["storage"] == storage["id"]]
            y = draw_strip(canvas, storage, members, y, drawn) + 6
    y = _cards(canvas, tensors, y, stop)
    if y == float("inf"):
        return Picture(canvas.width, y, theme, [], described(scene), tensors)
    y = _listed(canvas, left_out, y, listed_for)
    for name in scene.get("released", []):
        y += G["line_h"]
        freed = f"{name}: snapshot — the tensor was freed; this shows its layout when drawn"
        canvas.items.append(canvas.text(PAD, y, freed, muted=True))
    width, words = max(canvas.width, 240.0), described(scene)
    items = _MEASURED if measure else canvas.items
    return Picture(width, y + 8, theme, items, words, tensors, split_grids=canvas.split_grids)
