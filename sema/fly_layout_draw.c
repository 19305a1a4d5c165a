/* fly_layout_draw.c — text tables and SVG pictures of layouts.
 *
 * Each picture is built in two steps: the layout becomes a grid (one label
 * and one colour per cell), and the grid is then printed as a table or as
 * SVG. So the three kinds of layout share both printers. */
#include "fly_layout_draw.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fly_strbuf.h"

/* Light greys in the order of CuTe's print_latex (TikzColor_BWx8: black!00,
 * 40, 20, 60, 10, 50, 30, 70), at half the darkness so that black text stays
 * readable; neighbouring values still differ clearly. */
static const char *const value_palette[8] = {"#ffffff", "#cccccc", "#e6e6e6", "#b3b3b3",
                                             "#f2f2f2", "#bfbfbf", "#d9d9d9", "#a6a6a6"};
/* CuTe's print_svg SVGColor_TV, indexed by thread % 8. */
static const char *const thread_palette[8] = {"#afafff", "#afffaf", "#ffffaf", "#ffafaf",
                                              "#d2d2ff", "#d2ffd2", "#ffffd2", "#ffd2d2"};
static const char *const empty_colour = "#ffffff";

typedef struct Grid {
  const char *title;
  int64_t rows, cols;
  char **label; /* rows * cols, index m + rows * n; NULL leaves the cell empty */
  int *colour;  /* palette index per cell, -1 for an empty cell */
  const char *const *palette;
  int width; /* characters of a cell's text: CuTe's idx_width - 2 */
} Grid;

/* ---- building grids ----------------------------------------------------- */

static bool grid_init(FlyAlgebra *A, Grid *g, const char *title, int64_t rows, int64_t cols) {
  if (!title)
    return false;
  /* Checked one factor at a time so the product cannot overflow. */
  if (rows > FLY_DRAW_MAX_CELLS || cols > FLY_DRAW_MAX_CELLS || rows * cols > FLY_DRAW_MAX_CELLS) {
    fly_fail(A, "too many cells to draw: %lld x %lld (limit is %d)", (long long)rows,
             (long long)cols, FLY_DRAW_MAX_CELLS);
    return false;
  }
  g->title = title;
  g->rows = rows;
  g->cols = cols;
  g->width = 1;
  g->label = fly_alloc(A, (size_t)(rows * cols) * sizeof *g->label);
  g->colour = fly_alloc(A, (size_t)(rows * cols) * sizeof *g->colour);
  if (!g->label || !g->colour)
    return false;
  for (int64_t i = 0; i < rows * cols; i++)
    g->colour[i] = -1;
  return true;
}

static int digits(int64_t v) {
  char buf[32];
  return snprintf(buf, sizeof buf, "%" PRId64, v);
}

static bool set_cell(FlyAlgebra *A, Grid *g, int64_t cell, const char *text, int64_t colour_key) {
  if (!(g->label[cell] = fly_strdup(A, text)))
    return false;
  g->colour[cell] = (int)(((colour_key % 8) + 8) % 8); /* C's % keeps the sign */
  int len = (int)strlen(text);
  if (len > g->width)
    g->width = len;
  return true;
}

/* L(i) for i in [0, n): a mode's values at its 1-D indices. */
static int64_t *mode_values(FlyAlgebra *A, const FlyLayout *mode, int64_t n) {
  int64_t *v = fly_alloc(A, (size_t)n * sizeof *v);
  if (!v)
    return NULL;
  for (int64_t i = 0; i < n; i++)
    if (!fly_layout_eval(A, mode, i, &v[i]))
      return NULL;
  return v;
}

/* The two modes a picture of L shows; a rank-1 L is one column (mode 1 is
 * then NULL, meaning 1:0), as CuTe's append<2>(L, Layout<_1,_0>). */
static bool picture_modes(FlyAlgebra *A, const char *what, const char *whose, const FlyLayout *L,
                          FlyLayout **m0, FlyLayout **m1) {
  int r = fly_layout_rank(L);
  if (r != 1 && r != 2) {
    fly_fail(A, "a %s needs %s of rank 1 or 2; this one has rank %d", what, whose, r);
    return false;
  }
  *m0 = fly_layout_get(A, L, 0);
  *m1 = r == 2 ? fly_layout_get(A, L, 1) : NULL;
  return *m0 && (r == 1 || *m1);
}

/* The value of cell (m,n): L(m,n), or C(m,n); an integer or, for basis
 * strides, a coordinate. */
static FlyTuple *cell_value(FlyAlgebra *A, const FlyLayout *L, const FlyComposed *C, bool two,
                            int64_t m, int64_t n) {
  FlyTuple *crd = fly_tuple_int(A, m);
  if (two)
    crd = fly_tuple_pair(A, crd, fly_tuple_int(A, n));
  return C ? fly_composed_value(A, crd, C) : fly_layout_value(A, crd, L);
}

static int64_t leaf_sum(const FlyTuple *t) {
  if (t->kind != FLY_TUPLE_SEQ)
    return t->value;
  int64_t s = 0;
  for (int i = 0; i < t->n; i++)
    s += leaf_sum(t->elem[i]) % 8;
  return s;
}

/* Cell (m,n) holds L(m,n), or C(m,n) for a composed layout. */
static bool layout_grid(FlyAlgebra *A, Grid *g, const char *what, const FlyLayout *L,
                        const FlyComposed *C, const char *title) {
  FlyLayout *m0, *m1;
  int64_t rows, cols = 1;
  if (!picture_modes(A, what, "a layout", L, &m0, &m1) || !fly_layout_size(A, m0, &rows) ||
      (m1 && !fly_layout_size(A, m1, &cols)) || !grid_init(A, g, title, rows, cols))
    return false;
  bool plain = !C && !fly_layout_has_basis(L); /* row + column, added */
  int64_t *row = plain ? mode_values(A, m0, rows) : NULL;
  int64_t *col = plain && m1 ? mode_values(A, m1, cols) : NULL;
  if (plain && (!row || (m1 && !col)))
    return false;
  int64_t largest = INT64_MIN;
  for (int64_t n = 0; n < cols; n++)
    for (int64_t m = 0; m < rows; m++) {
      int64_t v = 0;
      char text[32];
      const char *shown = text;
      FlyTuple *x = NULL; /* a coordinate, shown as it is */
      if (plain) {
        if (!fly_add(A, row[m], col ? col[n] : 0, &v))
          return false;
      } else {
        if (!(x = cell_value(A, L, C, m1 != NULL, m, n)))
          return false;
        v = leaf_sum(x);
        if (x->kind != FLY_TUPLE_SEQ)
          x = NULL;
        else if (!(shown = fly_tuple_str(A, x)))
          return false;
      }
      snprintf(text, sizeof text, "%" PRId64, v);
      if (!set_cell(A, g, m + rows * n, shown, v))
        return false;
      if (!x && v > largest)
        largest = v;
    }
  /* CuTe sizes cells by num_digits(cosize), one past the largest index. */
  if (largest > INT64_MIN && largest < INT64_MAX && digits(largest + 1) > g->width)
    g->width = digits(largest + 1);
  g->palette = value_palette;
  return true;
}

/* The tile's rows and columns: the size of each of its (one or two) modes. */
static bool tile_extent(FlyAlgebra *A, const char *what, FlyTuple *tile, int64_t *rows,
                        int64_t *cols) {
  int r = fly_tuple_rank(tile);
  if (r != 1 && r != 2) {
    fly_fail(A, "a TV %s needs a tile of rank 1 or 2; this one has rank %d", what, r);
    return false;
  }
  FlyTuple *first = fly_tuple_get(A, tile, 0), *second = r == 2 ? fly_tuple_get(A, tile, 1) : NULL;
  *cols = 1;
  if (!first || !fly_tuple_product(A, first, rows) ||
      (r == 2 && (!second || !fly_tuple_product(A, second, cols))))
    return false;
  /* A tile built by hand may say anything; make_tiled_copy's are positive. */
  if (*rows < 1 || *cols < 1) {
    fly_fail(A, "a TV %s needs a tile of positive sizes; this one is %lld x %lld", what,
             (long long)*rows, (long long)*cols);
    return false;
  }
  return true;
}

static const char *tv_title(FlyAlgebra *A, const FlyTvLayout *T) {
  FlyStrBuf sb;
  char *tv = fly_layout_str(A, T->tv), *tile = fly_tuple_str(A, T->tile);
  if (!tv || !tile)
    return NULL;
  fly_sb_init(&sb, A);
  fly_sb_puts(&sb, tv);
  fly_sb_puts(&sb, " on tile ");
  fly_sb_puts(&sb, tile);
  return fly_sb_finish(&sb);
}

/* Marks the cell that (t,v) owns, unless an earlier (t,v) owns it already. */
static bool own_cell(FlyAlgebra *A, Grid *g, int64_t t, int64_t v, int64_t idx) {
  if (idx < 0 || idx >= g->rows * g->cols) {
    fly_fail(A, "thread %lld value %lld owns index %lld, outside the tile of %lld x %lld cells",
             (long long)t, (long long)v, (long long)idx, (long long)g->rows, (long long)g->cols);
    return false;
  }
  if (g->label[idx])
    return true;
  char text[48];
  snprintf(text, sizeof text, "T%" PRId64 "V%" PRId64, t, v);
  return set_cell(A, g, idx, text, t);
}

static bool tv_grid(FlyAlgebra *A, Grid *g, const char *what, const FlyTvLayout *T) {
  FlyLayout *thr_mode, *val_mode;
  int64_t rows, cols, threads, values = 1;
  if (!tile_extent(A, what, T->tile, &rows, &cols) ||
      !picture_modes(A, what, "a (thread, value) layout", T->tv, &thr_mode, &val_mode) ||
      !fly_layout_size(A, thr_mode, &threads) ||
      (val_mode && !fly_layout_size(A, val_mode, &values)) ||
      !grid_init(A, g, tv_title(A, T), rows, cols))
    return false;
  if (threads > FLY_DRAW_MAX_PAIRS || values > FLY_DRAW_MAX_PAIRS ||
      threads * values > FLY_DRAW_MAX_PAIRS) {
    fly_fail(A, "too many (thread, value) pairs to draw: %lld x %lld (limit is %d)",
             (long long)threads, (long long)values, FLY_DRAW_MAX_PAIRS);
    return false;
  }
  int64_t *tidx = mode_values(A, thr_mode, threads);
  int64_t *vidx = val_mode ? mode_values(A, val_mode, values) : NULL;
  if (!tidx || (val_mode && !vidx))
    return false;
  for (int64_t t = 0; t < threads; t++)
    for (int64_t v = 0; v < values; v++) {
      int64_t idx;
      if (!fly_add(A, tidx[t], vidx ? vidx[v] : 0, &idx) || !own_cell(A, g, t, v, idx))
        return false;
    }
  g->palette = thread_palette;
  return true;
}

/* ---- the text table ----------------------------------------------------- */

static void put_repeat(FlyStrBuf *sb, char c, int n) {
  for (int i = 0; i < n; i++)
    fly_sb_putc(sb, c);
}

/* Right-aligned in width characters, as printf's %*d. */
static void put_right(FlyStrBuf *sb, const char *text, int width) {
  put_repeat(sb, ' ', width - (int)strlen(text));
  fly_sb_puts(sb, text);
}

static void put_separator(FlyStrBuf *sb, const Grid *g) {
  fly_sb_puts(sb, "    ");
  for (int64_t n = 0; n < g->cols; n++) {
    fly_sb_putc(sb, '+');
    put_repeat(sb, '-', g->width + 2);
  }
  fly_sb_puts(sb, "+\n");
}

/* Line for line what CuTe's print_layout prints, trailing blanks included. */
static char *grid_table(FlyAlgebra *A, const Grid *g) {
  FlyStrBuf sb;
  char num[32];
  fly_sb_init(&sb, A);
  fly_sb_puts(&sb, g->title);
  fly_sb_puts(&sb, "\n    ");
  for (int64_t n = 0; n < g->cols; n++) {
    snprintf(num, sizeof num, "%" PRId64, n);
    fly_sb_puts(&sb, "  ");
    put_right(&sb, num, g->width);
    fly_sb_putc(&sb, ' ');
  }
  fly_sb_putc(&sb, '\n');
  for (int64_t m = 0; m < g->rows; m++) {
    put_separator(&sb, g);
    snprintf(num, sizeof num, "%2" PRId64 "  ", m);
    fly_sb_puts(&sb, num);
    for (int64_t n = 0; n < g->cols; n++) {
      const char *text = g->label[m + g->rows * n];
      fly_sb_puts(&sb, "| ");
      put_right(&sb, text ? text : "", g->width);
      fly_sb_putc(&sb, ' ');
    }
    fly_sb_puts(&sb, "|\n");
  }
  put_separator(&sb, g);
  return fly_sb_finish(&sb);
}

/* ---- SVG ---------------------------------------------------------------- */

enum {
  CHAR_WIDTH = 8, /* a generous monospace advance at FONT_SIZE */
  FONT_SIZE = 12,
  CELL_HEIGHT = 24,
  MARGIN = 2, /* keeps the outer strokes inside the picture */
};

static int cell_width(int chars) {
  int w = chars * CHAR_WIDTH + 12;
  return w < CELL_HEIGHT ? CELL_HEIGHT : w;
}

/* Text content and attribute values alike: the five characters XML reserves. */
static void put_escaped(FlyStrBuf *sb, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '<':
      fly_sb_puts(sb, "&lt;");
      break;
    case '>':
      fly_sb_puts(sb, "&gt;");
      break;
    case '&':
      fly_sb_puts(sb, "&amp;");
      break;
    case '"':
      fly_sb_puts(sb, "&quot;");
      break;
    case '\'':
      fly_sb_puts(sb, "&apos;");
      break;
    default:
      fly_sb_putc(sb, *s);
    }
  }
}

static void put_attr(FlyStrBuf *sb, const char *name, int64_t v) {
  fly_sb_putc(sb, ' ');
  fly_sb_puts(sb, name);
  fly_sb_puts(sb, "=\"");
  fly_sb_int(sb, v);
  fly_sb_putc(sb, '"');
}

/* A text element of the given class centred on (x, y). The baseline is
 * placed by hand, a third of the font size below the centre, because
 * renderers disagree on dominant-baseline. */
static void put_text(FlyStrBuf *sb, const char *cls, int64_t x, int64_t y, const char *text) {
  fly_sb_puts(sb, "<text class=\"");
  fly_sb_puts(sb, cls);
  fly_sb_putc(sb, '"');
  put_attr(sb, "x", x);
  put_attr(sb, "y", y + FONT_SIZE / 3);
  fly_sb_puts(sb, " text-anchor=\"middle\">");
  put_escaped(sb, text);
  fly_sb_puts(sb, "</text>\n");
}

typedef struct Geometry {
  int64_t cell_w, index_w; /* a cell's width; the row-index column's width */
  int64_t width, height;
} Geometry;

static Geometry geometry_of(const Grid *g) {
  Geometry geo;
  geo.cell_w = cell_width(g->width);
  geo.index_w = cell_width(digits(g->rows - 1));
  geo.width = 2 * MARGIN + geo.index_w + g->cols * geo.cell_w;
  geo.height = 2 * MARGIN + CELL_HEIGHT + g->rows * CELL_HEIGHT;
  return geo;
}

static void put_header(FlyStrBuf *sb, const Grid *g, const Geometry *geo) {
  fly_sb_puts(sb, "<svg xmlns=\"http://www.w3.org/2000/svg\"");
  put_attr(sb, "width", geo->width);
  put_attr(sb, "height", geo->height);
  fly_sb_puts(sb, " viewBox=\"0 0 ");
  fly_sb_int(sb, geo->width);
  fly_sb_putc(sb, ' ');
  fly_sb_int(sb, geo->height);
  fly_sb_puts(sb, "\" font-family=\"monospace\"");
  put_attr(sb, "font-size", FONT_SIZE);
  fly_sb_puts(sb, ">\n<title>");
  put_escaped(sb, g->title);
  fly_sb_puts(sb, "</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
}

static void put_indices(FlyStrBuf *sb, const Grid *g, const Geometry *geo) {
  char num[32];
  int64_t x0 = MARGIN + geo->index_w, y0 = MARGIN + CELL_HEIGHT;
  for (int64_t n = 0; n < g->cols; n++) {
    snprintf(num, sizeof num, "%" PRId64, n);
    put_text(sb, "index", x0 + n * geo->cell_w + geo->cell_w / 2, MARGIN + CELL_HEIGHT / 2, num);
  }
  for (int64_t m = 0; m < g->rows; m++) {
    snprintf(num, sizeof num, "%" PRId64, m);
    put_text(sb, "index", MARGIN + geo->index_w / 2, y0 + m * CELL_HEIGHT + CELL_HEIGHT / 2, num);
  }
}

static void put_cell(FlyStrBuf *sb, const Grid *g, const Geometry *geo, int64_t m, int64_t n) {
  int64_t cell = m + g->rows * n;
  int64_t x = MARGIN + geo->index_w + n * geo->cell_w, y = MARGIN + CELL_HEIGHT + m * CELL_HEIGHT;
  fly_sb_puts(sb, "<rect class=\"cell\"");
  put_attr(sb, "data-m", m);
  put_attr(sb, "data-n", n);
  put_attr(sb, "x", x);
  put_attr(sb, "y", y);
  put_attr(sb, "width", geo->cell_w);
  put_attr(sb, "height", CELL_HEIGHT);
  fly_sb_puts(sb, " fill=\"");
  fly_sb_puts(sb, g->colour[cell] < 0 ? empty_colour : g->palette[g->colour[cell]]);
  fly_sb_puts(sb, "\" stroke=\"#000000\"/>\n");
  put_text(sb, "label", x + geo->cell_w / 2, y + CELL_HEIGHT / 2,
           g->label[cell] ? g->label[cell] : "");
}

static char *grid_svg(FlyAlgebra *A, const Grid *g) {
  FlyStrBuf sb;
  Geometry geo = geometry_of(g);
  fly_sb_init(&sb, A);
  put_header(&sb, g, &geo);
  put_indices(&sb, g, &geo);
  for (int64_t m = 0; m < g->rows; m++)
    for (int64_t n = 0; n < g->cols; n++)
      put_cell(&sb, g, &geo, m, n);
  fly_sb_puts(&sb, "</svg>\n");
  return fly_sb_finish(&sb);
}

/* ---- the public functions ---------------------------------------------- */

char *fly_layout_table(FlyAlgebra *A, const FlyLayout *L) {
  Grid g;
  if (!L || !layout_grid(A, &g, "table", L, NULL, fly_layout_str(A, L)))
    return NULL;
  return grid_table(A, &g);
}

char *fly_composed_table(FlyAlgebra *A, const FlyComposed *C) {
  Grid g;
  if (!C || !layout_grid(A, &g, "table", C->layout, C, fly_composed_str(A, C)))
    return NULL;
  return grid_table(A, &g);
}

char *fly_tv_layout_table(FlyAlgebra *A, const FlyTvLayout *T) {
  Grid g;
  if (!T || !T->tv || !T->tile || !tv_grid(A, &g, "table", T))
    return NULL;
  return grid_table(A, &g);
}

char *fly_layout_svg(FlyAlgebra *A, const FlyLayout *L) {
  Grid g;
  if (!L || !layout_grid(A, &g, "picture", L, NULL, fly_layout_str(A, L)))
    return NULL;
  return grid_svg(A, &g);
}

char *fly_composed_svg(FlyAlgebra *A, const FlyComposed *C) {
  Grid g;
  if (!C || !layout_grid(A, &g, "picture", C->layout, C, fly_composed_str(A, C)))
    return NULL;
  return grid_svg(A, &g);
}

char *fly_tv_layout_svg(FlyAlgebra *A, const FlyTvLayout *T) {
  Grid g;
  if (!T || !T->tv || !T->tile || !tv_grid(A, &g, "picture", T))
    return NULL;
  return grid_svg(A, &g);
}
