"""Renderers of a scene: the one style source (:mod:`.style`) and the static pictures."""
