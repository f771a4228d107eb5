// JSDoc typedefs of the scene: the JSON that stridewidget/scene/build.py (build_scene) makes and every
// renderer draws; stridewidget/scene/schema.json is its JSON Schema (version 2) and the module docstring
// of build.py explains each field.  Types only: this module exports nothing at run time.  Modules that
// take a scene name these types with `import("../core/types.js").Scene` and the like;
// js/core/types.test.js checks that every property the schema names is listed here.

/**
 * The whole scene: the storages, the tensors over them and the limits it was built with.
 * @typedef {object} Scene
 * @property {2} version
 * @property {Storage[]} storages
 * @property {Tensor[]} tensors
 * @property {string[]} [released] added by StrideWidget: names whose tensor was freed (the widget shows a snapshot)
 * @property {Limits} limits
 */

/**
 * build_scene's budgets (js/core/rules.js LIMITS holds the defaults).
 * @typedef {object} Limits
 * @property {number} edge_items
 * @property {number} threshold
 * @property {number} max_dim_items
 * @property {number} max_slices
 * @property {number} max_storage_cells
 * @property {number} max_strip_cells
 */

/**
 * One storage (a buffer) and the window of its cells that the scene shows.
 * @typedef {object} Storage
 * @property {string} id "s0", "s1", …
 * @property {string} dtype
 * @property {number} itemsize bytes per element
 * @property {number} unit bytes per storage element
 * @property {string} device
 * @property {number} size storage elements
 * @property {number} nbytes
 * @property {boolean} has_values
 * @property {number} wrap suggested cells per row: the whole storage up to max_strip_cells, else the row of its natural layout
 * @property {Segment[]} segments the shown runs of cells and the gaps between them, in storage order
 * @property {StorageCells} cells
 * @property {[number, number] | null} value_range
 * @property {number} text_width
 * @property {string[]} tensors ids of the tensors over this storage
 * @property {string[]} same_memory ids of other storages over the same memory
 */

/**
 * A run of shown cells, or a gap, of a storage: storage elements start … stop - 1.
 * @typedef {object} Segment
 * @property {"cells" | "gap"} kind
 * @property {number} start
 * @property {number} stop
 * @property {boolean} [in_span]
 * @property {number | null} [read] how many of a gap's cells a shown tensor reads (null: not counted)
 */

/**
 * The shown cells of a storage: their storage indices and, when the storage has values, their
 * display text and numeric value (aligned with `index`).
 * @typedef {object} StorageCells
 * @property {number[]} index
 * @property {string[] | null} text
 * @property {(number | null)[] | null} value
 */

/**
 * One tensor (a view) over a storage.
 * @typedef {object} Tensor
 * @property {string} id "t0", "t1", …
 * @property {string} name
 * @property {string} storage id of its storage
 * @property {string} mark the letter its cells carry on the strip
 * @property {number} order its colour and pattern
 * @property {LayoutDict} layout
 * @property {Logical} logical
 * @property {(number | null)[]} touch per shown storage cell: how many logical indices of the whole tensor read it (null: too costly)
 * @property {Arrow[]} arrows
 * @property {Reads | null} [reads] null: the tensor reads memory as stored
 */

/**
 * Layout.to_dict(): the layout data, its flags and derived facts (the schema allows more keys).
 * @typedef {object} LayoutDict
 * @property {number[]} shape
 * @property {number[]} strides in elements
 * @property {number[]} byte_strides
 * @property {number} offset storage offset, in elements
 * @property {number} itemsize
 * @property {number} unit
 * @property {string} dtype
 * @property {string} device
 * @property {number} numel
 * @property {number} storage_size
 * @property {number} storage_nbytes
 * @property {[number, number] | null} span inclusive range of storage elements read; null when empty
 * @property {number} touched
 * @property {boolean} touched_exact
 * @property {boolean} in_bounds
 * @property {boolean} is_contiguous
 * @property {boolean} is_f_contiguous
 * @property {boolean} is_channels_last
 * @property {boolean} is_dense
 * @property {boolean | null} has_overlap null: not decided in the display's budget
 * @property {string[]} notes
 * @property {string} text
 * @property {string} explain
 */

/**
 * The logical window of a tensor: which 2-D slices are shown and how panels are placed.
 * @typedef {object} Logical
 * @property {number[]} shape
 * @property {number} ndim
 * @property {boolean} elided
 * @property {number | null} row_dim
 * @property {number | null} col_dim
 * @property {Panels} panels
 * @property {(Slice | SliceGap)[]} slices
 */

/**
 * Leading dims that place a 2-D slice in the grid of panels; select_dims get a slice selector.
 * @typedef {object} Panels
 * @property {number | null} row_dim
 * @property {number | null} col_dim
 * @property {number[]} select_dims
 */

/**
 * A shown 2-D slice at leading index `lead`: rows/cols are the shown indices (null at an
 * elision; the list itself is null for a dim the tensor lacks), addr[r][c] the storage cell read.
 * @typedef {object} Slice
 * @property {"slice"} kind
 * @property {number[]} lead
 * @property {string} label
 * @property {(number | null)[] | null} rows
 * @property {(number | null)[] | null} cols
 * @property {(number | null)[][]} addr storage cell of each shown cell (null at an elision)
 * @property {boolean} [picked] added in the browser (js/core/scene.js sliceAt): a slice the reader picked
 * @property {boolean} [filled] added in the browser (js/core/scene.js withPickedSlices): a slice the scene did not list, drawn in an empty panel-grid position
 */

/**
 * Slices the scene left out between two listed slices: `count` of them, exactly the boxes of
 * `ranges` (one run along `dim` after prefix `lead` when there is one box, else both null).
 * @typedef {object} SliceGap
 * @property {"gap"} kind
 * @property {number | null} dim
 * @property {number} count
 * @property {number[] | null} lead
 * @property {[number, number][][]} ranges per box, per leading dim [start, stop) (stop exclusive)
 * @property {string} text the boxes as Python indexing, "x[0, 3, 1, :, :], x[1:5, :, :, :, :]": what renderers write
 */

/**
 * One stride arrow: the dims that share this stride, from the first element to its neighbour.
 * @typedef {object} Arrow
 * @property {number[]} dims dims with this stride (merged into one arrow)
 * @property {number} dim the first of dims
 * @property {number} stride
 * @property {number} byte_stride
 * @property {number} from storage cell of the first element
 * @property {number} to its neighbour along dim; equal to from for stride 0 (a loop)
 * @property {number[]} from_index
 * @property {number[]} to_index
 * @property {string} label "d0 +4", "d0,d1 +1" (merged), "d1 ×0" (loop)
 * @property {number} lane band above the strip; no two arrows of a tensor share one
 */

/**
 * What a conj/neg view or a quantized tensor reads at each shown storage cell, aligned with its
 * storage's cells.index (null where not known), and the card's notes.
 * @typedef {object} Reads
 * @property {string[]} notes
 * @property {(string | null)[] | null} text
 * @property {(number | null)[]} [value]
 * @property {number[] | null} [value_range]
 */

export {};
