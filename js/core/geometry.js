// Sizes, in px, shared by the storage strip and the arrows drawn over it.
export const STORAGE_GEOMETRY = {
  minCellW: 34,
  maxCellW: 64,
  cellH: 27,
  stripH: 13,
  indexH: 11, // the storage index under each cell
  rowGap: 5, // arrows into a later row run in this gap, never across text
  headerH: 15, // column offsets "+0 … +n" above a wrapped strip
  laneH: 13, // one arrow lane (its label is 11 px text on an 11 px background)
  bandPad: 6,
  gapH: 15,
  charW: 6.7, // monospace 11px
  boldCharW: 6.9, // bold monospace 11px (arrow badges, tensor marks)
  smallCharW: 5.9, // monospace 9.5px (indices)
  labelPad: 12,
  channelW: 10, // right of the strip: arrows that go to a later row
  maxWidth: 1180, // automatic rows never make the strip wider than this
};

/** Pixel width of a cell that holds `chars` characters of 11px monospace (`charW` for others). */
export function cellWidth(chars, g = STORAGE_GEOMETRY, charW = g.charW, maxW = g.maxCellW) {
  return Math.min(maxW, Math.max(g.minCellW, Math.ceil(chars * charW + 10)));
}
