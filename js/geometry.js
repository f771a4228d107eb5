// Sizes, in px, shared by the storage grid and the arrows drawn over it.
export const STORAGE_GEOMETRY = {
  cellW: 46,
  cellH: 34,
  stripH: 11,
  rowGap: 4,
  labelW: 104, // row labels (left) + a channel for arrows that change rows
  topPad: 40, // room for stride arrows above the first row
  gapH: 24,
  charW: 6.7, // monospace 11px
};
