/* fly_layout_draw.h — pictures of layouts: CuTe's text table and SVG.
 *
 * A layout of rank 2 is drawn as its grid of cells: cell (m,n) shows L(m,n),
 * where m and n are 1-D indices into modes 0 and 1 (for hierarchical modes,
 * as fly_layout_crd2idx reads an (m,n) of two integers). A rank-1 layout is
 * drawn as one column, as make_layout(L, 1:0); any other rank is an error,
 * as are pictures of more than FLY_DRAW_MAX_CELLS cells.
 *
 * The TV form draws the tile of a thread-value layout (fly_layout_tv.h):
 * cell (m,n) with m + M*n == tv(t,v) shows "T{t}V{v}". A cell that several
 * (t,v) own (stride-0 broadcast) shows the first of them with t outer and v
 * inner, as CuTe's print_latex_tv does; a cell nobody owns stays empty. An
 * index outside the tile is an error.
 *
 * Every function returns an arena string, or NULL after recording an error
 * (NULL at once for a NULL input), following fly_layout.h. */
#ifndef FLY_LAYOUT_DRAW_H
#define FLY_LAYOUT_DRAW_H

#include "fly_layout_tv.h"
#include "fly_swizzle.h"

enum {
  FLY_DRAW_MAX_CELLS = 65536,   /* rows * columns of one picture */
  FLY_DRAW_MAX_PAIRS = 1 << 20, /* (thread, value) pairs a TV picture visits */
};

/* CuTe's print_layout (include/cute/util/print_tensor.hpp): the layout's text
 * on the first line, then a grid with column indices on top, row indices on
 * the left, +----+ separators and | v | cells, as wide as the digits of the
 * layout's cosize (one past its largest index), or as the widest cell's text
 * where that is wider (negative indices, TV labels). Rows past 99 and columns
 * wider than the cells shift the grid, exactly as CuTe's %2d and %*d do. */
char *fly_layout_table(FlyAlgebra *A, const FlyLayout *L);
/* The same for a swizzled layout: cell (m,n) shows swizzle(offset + L(m,n)). */
char *fly_composed_table(FlyAlgebra *A, const FlyComposed *C);
/* The tile of a TV layout, each cell holding its owner "T3V1"; the first
 * line is "<tv> on tile <tile>". */
char *fly_tv_layout_table(FlyAlgebra *A, const FlyTvLayout *T);

/* SVG pictures of the same three: a <title> with the first line's text; per
 * cell one <rect class="cell" data-m data-n fill> and then one
 * <text class="label">; row and column indices as <text class="index">.
 * Layout cells are coloured by value % 8 (light greys in the order of CuTe's
 * print_latex), TV cells by thread % 8 (the colours of CuTe's print_svg). */
char *fly_layout_svg(FlyAlgebra *A, const FlyLayout *L);
char *fly_composed_svg(FlyAlgebra *A, const FlyComposed *C);
char *fly_tv_layout_svg(FlyAlgebra *A, const FlyTvLayout *T);

#endif
