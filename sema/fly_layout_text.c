/* fly_layout_text.c — a recursive-descent reader for the canonical text of
 * tuples, layouts, tilers, swizzles and composed layouts.
 *
 *   value    = swizzle [ "o" int "o" item ] | item [ "o" atom "o" item ]
 *   swizzle  = "S" "<" int "," int "," int ">"
 *   item     = atom [ ":" atom ]                   (a ':' makes a layout)
 *   atom     = int { "@" mode } | "_" | "(" [ item { "," item } ] ")"
 *
 * int@m@... is a basis element scaled by int (fly_tuple.h): 3@1, 1@0@1.
 *
 * The text is first read into a small syntax tree that remembers where each
 * piece started; turning that tree into a tuple, layout or tiler is a second
 * step, so every error points at the character that caused it. */
#include "fly_layout_text.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "fly_layout_internal.h"
#include "fly_strbuf.h"

typedef enum { NODE_INT, NODE_UNDER, NODE_DYN, NODE_SEQ, NODE_LAYOUT, NODE_BASIS } NodeKind;

typedef struct Node Node;
struct Node {
  NodeKind kind;
  long pos;
  int64_t value;
  int n;
  Node **elem;          /* NODE_SEQ */
  Node *shape, *stride; /* NODE_LAYOUT */
  int *modes;           /* NODE_BASIS: n modes as written, innermost first */
};

typedef struct Reader {
  FlyAlgebra *A;
  const char *text;
  size_t len, pos;
  int depth;
  bool patterns; /* `?` is allowed: a leaf known only at run time */
} Reader;

/* ---- characters ---------------------------------------------------------- */

static void skip_blanks(Reader *r) {
  while (r->pos < r->len && isspace((unsigned char)r->text[r->pos]))
    r->pos++;
}

static int peek(Reader *r) {
  skip_blanks(r);
  return r->pos < r->len ? (unsigned char)r->text[r->pos] : -1;
}

/* The next character as messages show it: 'x', byte 0x07, or "" at the end. */
typedef struct Shown {
  char text[24];
} Shown;

static Shown shown_here(Reader *r) {
  Shown s = {""};
  int c = r->pos < r->len ? (unsigned char)r->text[r->pos] : -1;
  if (c >= 0 && isprint(c))
    snprintf(s.text, sizeof s.text, "'%c'", c);
  else if (c >= 0)
    snprintf(s.text, sizeof s.text, "byte 0x%02x", c);
  return s;
}

static Shown shown(Reader *r) {
  peek(r);
  return shown_here(r);
}

static void *expected_here(Reader *r, const char *what) {
  Shown s = shown_here(r);
  if (!s.text[0])
    return fly_fail_at(r->A, (long)r->pos, "expected %s but the text ended", what);
  return fly_fail_at(r->A, (long)r->pos, "expected %s but found %s", what, s.text);
}

static void *expected(Reader *r, const char *what) {
  Shown s = shown(r);
  if (!s.text[0])
    return fly_fail_at(r->A, (long)r->pos, "expected %s but the text ended", what);
  return fly_fail_at(r->A, (long)r->pos, "expected %s but found %s", what, s.text);
}

static bool accept(Reader *r, char c) {
  if (peek(r) != c)
    return false;
  r->pos++;
  return true;
}

/* ---- syntax tree ------------------------------------------------------- */

static Node *new_node(Reader *r, NodeKind kind, long pos) {
  Node *n = fly_alloc(r->A, sizeof *n);
  if (n) {
    n->kind = kind;
    n->pos = pos;
  }
  return n;
}

static bool read_int(Reader *r, int64_t *out) {
  long start = (long)(r->pos);
  bool neg = r->pos < r->len && r->text[r->pos] == '-';
  if (neg)
    r->pos++;
  if (r->pos >= r->len || !isdigit((unsigned char)r->text[r->pos])) {
    expected_here(r, neg ? "a digit after '-'" : "a digit"); /* "- 3" is wrong at the blank */
    return false;
  }
  int64_t v = 0;
  while (r->pos < r->len && isdigit((unsigned char)r->text[r->pos])) {
    int digit = r->text[r->pos] - '0';
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_sub_overflow(v, digit, &v)) {
      fly_fail_at(r->A, start, "number too large for 64 bits");
      return false;
    }
    r->pos++;
  }
  if (!neg && v == INT64_MIN) {
    fly_fail_at(r->A, start, "number too large for 64 bits");
    return false;
  }
  *out = neg ? v : -v; /* accumulated negatively so INT64_MIN is readable */
  return true;
}

static Node *read_item(Reader *r);

/* The "@mode" parts after the scale n of a basis element. */
static Node *read_basis(Reader *r, Node *n) {
  n->kind = NODE_BASIS;
  n->modes = fly_alloc(r->A, FLY_MAX_DEPTH * sizeof *n->modes);
  if (!n->modes)
    return NULL;
  while (accept(r, '@')) {
    int64_t m;
    if (n->n >= FLY_MAX_DEPTH)
      return fly_fail_at(r->A, n->pos, "basis elements nested too deeply (limit is %d modes)",
                         FLY_MAX_DEPTH);
    peek(r);
    long at = (long)r->pos;
    if (r->pos < r->len && r->text[r->pos] == '-')
      return fly_fail_at(r->A, at, "a basis mode is a number from 0 to %d", FLY_MAX_MODES - 1);
    if (!read_int(r, &m))
      return NULL;
    if (m >= FLY_MAX_MODES)
      return fly_fail_at(r->A, at, "a basis mode is a number from 0 to %d", FLY_MAX_MODES - 1);
    n->modes[n->n++] = (int)m;
  }
  return n;
}

static Node *read_seq(Reader *r) {
  long open = (long)r->pos;
  r->pos++; /* '(' */
  if (++r->depth > FLY_MAX_DEPTH)
    return fly_fail_at(r->A, open, "tuples nested too deeply (limit is %d)", FLY_MAX_DEPTH);
  Node *seq = new_node(r, NODE_SEQ, open);
  Node **elem = NULL;
  int cap = 0;
  if (!seq)
    return NULL;
  if (!accept(r, ')')) {
    for (;;) {
      if (seq->n == cap) {
        if (cap >= FLY_MAX_MODES)
          return fly_fail_at(r->A, (long)r->pos, "too many modes in a tuple (limit is %d)",
                             FLY_MAX_MODES);
        int ncap = cap ? 2 * cap : 4;
        Node **grown = fly_alloc(r->A, (size_t)ncap * sizeof *grown);
        if (!grown)
          return NULL;
        if (cap)
          memcpy(grown, elem, (size_t)cap * sizeof *grown);
        elem = grown;
        cap = ncap;
      }
      if (!(elem[seq->n++] = read_item(r)))
        return NULL;
      if (accept(r, ')'))
        break;
      if (!accept(r, ',')) {
        char what[64];
        snprintf(what, sizeof what, "',' or ')' to close the '(' at column %ld", open + 1);
        return expected(r, what);
      }
    }
  }
  seq->elem = elem;
  r->depth--;
  return seq;
}

static Node *read_atom(Reader *r) {
  int c = peek(r);
  long pos = (long)r->pos;
  if (c == '(')
    return read_seq(r);
  if (c == '_') {
    r->pos++;
    return new_node(r, NODE_UNDER, pos);
  }
  if (c == '?' && r->patterns) {
    r->pos++;
    return new_node(r, NODE_DYN, pos);
  }
  if (c == '-' || (c >= 0 && isdigit(c))) {
    Node *n = new_node(r, NODE_INT, pos);
    if (!n || !read_int(r, &n->value))
      return NULL;
    return peek(r) == '@' ? read_basis(r, n) : n;
  }
  return expected(r, "a number, '_' or '('");
}

static Node *read_item(Reader *r) {
  Node *a = read_atom(r);
  if (!a || !accept(r, ':'))
    return a;
  Node *layout = new_node(r, NODE_LAYOUT, a->pos);
  if (!layout || !(layout->stride = read_atom(r)))
    return NULL;
  layout->shape = a;
  return layout;
}

static bool at_end(Reader *r) {
  if (peek(r) < 0)
    return true;
  fly_fail_at(r->A, (long)r->pos, "unexpected %s after the end of the value", shown(r).text);
  return false;
}

/* ---- from syntax tree to values ------------------------------------------- */

static bool has_layout(const Node *n) {
  if (n->kind == NODE_LAYOUT)
    return true;
  for (int i = 0; n->kind == NODE_SEQ && i < n->n; i++)
    if (has_layout(n->elem[i]))
      return true;
  return false;
}

typedef enum { AS_COORD, AS_SHAPE, AS_STRIDE } TupleRole;

static FlyTuple *to_tuple(Reader *r, const Node *n, TupleRole role) {
  switch (n->kind) {
  case NODE_INT:
    if (role == AS_SHAPE && n->value < 1)
      return fly_fail_at(r->A, n->pos, "shape %lld is not positive", (long long)n->value);
    return fly_tuple_int(r->A, n->value);
  case NODE_UNDER:
    if (role != AS_COORD)
      return fly_fail_at(r->A, n->pos, "'_' cannot be part of a %s",
                         role == AS_SHAPE ? "shape" : "stride");
    return fly_tuple_underscore(r->A);
  case NODE_DYN:
    return fly_tuple_dynamic(r->A, NULL);
  case NODE_BASIS: {
    if (role == AS_SHAPE)
      return fly_fail_at(r->A, n->pos, "a basis element is a stride, not part of a shape");
    int path[FLY_MAX_DEPTH];
    for (int i = 0; i < n->n; i++) /* written innermost first, kept outermost first */
      path[i] = n->modes[n->n - 1 - i];
    return fly_tuple_basis(r->A, n->value, n->n, path);
  }
  case NODE_LAYOUT:
    return fly_fail_at(r->A, n->pos, "a layout cannot be part of a %s",
                       role == AS_COORD   ? "tuple"
                       : role == AS_SHAPE ? "shape"
                                          : "stride");
  case NODE_SEQ:
    break;
  }
  FlyTuple **e = fly_alloc(r->A, (size_t)(n->n ? n->n : 1) * sizeof *e);
  if (!e)
    return NULL;
  for (int i = 0; i < n->n; i++)
    if (!(e[i] = to_tuple(r, n->elem[i], role)))
      return NULL;
  return fly_tuple_seq(r->A, n->n, e);
}

static FlyLayout *to_layout(Reader *r, const Node *n) {
  if (n->kind != NODE_LAYOUT)
    return fly_fail_at(r->A, n->pos, "expected a layout shape:stride, such as (8,16):(1,8)");
  FlyTuple *shape = to_tuple(r, n->shape, AS_SHAPE);
  FlyTuple *stride = shape ? to_tuple(r, n->stride, AS_STRIDE) : NULL;
  if (!stride)
    return NULL;
  if (!fly_tuple_congruent(shape, stride)) {
    char *s = fly_tuple_str(r->A, shape), *d = fly_tuple_str(r->A, stride);
    return fly_fail_at(r->A, n->stride->pos, "stride %s does not have the structure of shape %s",
                       d ? d : "?", s ? s : "?");
  }
  int64_t size;
  if (!fly_tuple_product(r->A, shape, &size)) {
    r->A->error_pos = n->shape->pos;
    return NULL;
  }
  FlyLayout *L = fly_layout_make(r->A, shape, stride);
  if (!L && fly_algebra_error_pos(r->A) < 0) /* basis elements that do not add up */
    r->A->error_pos = n->stride->pos;
  return L;
}

static FlyTiler *to_tiler(Reader *r, const Node *n) {
  switch (n->kind) {
  case NODE_INT:
    if (n->value < 1)
      return fly_fail_at(r->A, n->pos, "tile size %lld is not positive", (long long)n->value);
    return fly_tiler_layout(r->A, fly_layout_leaf(r->A, n->value, 1));
  case NODE_UNDER:
    return fly_tiler_underscore(r->A);
  case NODE_DYN: /* patterns are tuples and layouts only */
    return fly_fail_at(r->A, n->pos, "a tiler is static");
  case NODE_BASIS:
    return fly_fail_at(r->A, n->pos, "a basis element is a stride, not a tile: write n:1@0");
  case NODE_LAYOUT:
    return fly_tiler_layout(r->A, to_layout(r, n));
  case NODE_SEQ:
    break;
  }
  FlyTiler **e = fly_alloc(r->A, (size_t)(n->n ? n->n : 1) * sizeof *e);
  if (!e)
    return NULL;
  for (int i = 0; i < n->n; i++)
    if (!(e[i] = to_tiler(r, n->elem[i])))
      return NULL;
  return fly_tiler_seq(r->A, n->n, e);
}

/* ---- entry points -------------------------------------------------------- */

static void start(Reader *r, FlyAlgebra *A, const char *text, size_t len) {
  r->A = A;
  r->text = text;
  r->len = len;
  r->pos = 0;
  r->depth = 0;
  r->patterns = false;
}

static Node *read_whole_item(Reader *r) {
  Node *n = read_item(r);
  return n && at_end(r) ? n : NULL;
}

FlyTuple *fly_parse_tuple(FlyAlgebra *A, const char *text, size_t len) {
  Reader r;
  start(&r, A, text, len);
  Node *n = read_whole_item(&r);
  return n ? to_tuple(&r, n, AS_COORD) : NULL;
}

FlyLayout *fly_parse_layout(FlyAlgebra *A, const char *text, size_t len) {
  Reader r;
  start(&r, A, text, len);
  Node *n = read_whole_item(&r);
  return n ? to_layout(&r, n) : NULL;
}

FlyTuple *fly_parse_tuple_pattern(FlyAlgebra *A, const char *text, size_t len) {
  Reader r;
  start(&r, A, text, len);
  r.patterns = true;
  Node *n = read_whole_item(&r);
  return n ? to_tuple(&r, n, AS_COORD) : NULL;
}

FlyLayout *fly_parse_layout_pattern(FlyAlgebra *A, const char *text, size_t len) {
  Reader r;
  start(&r, A, text, len);
  r.patterns = true;
  Node *n = read_whole_item(&r);
  if (!n)
    return NULL;
  if (n->kind != NODE_LAYOUT)
    return fly_fail_at(A, n->pos, "expected a layout shape:stride, such as (8,?):(1,8)");
  /* As written: a pattern's shape is not checked for size, nor unwrapped. */
  FlyTuple *shape = to_tuple(&r, n->shape, AS_SHAPE);
  FlyTuple *stride = shape ? to_tuple(&r, n->stride, AS_STRIDE) : NULL;
  if (!stride)
    return NULL;
  if (!fly_tuple_congruent(shape, stride))
    return fly_fail_at(A, n->stride->pos, "the stride does not have the structure of the shape");
  FlyLayout *L = fly_alloc(A, sizeof *L);
  if (L) {
    L->shape = shape;
    L->stride = stride;
  }
  return L;
}

FlyTiler *fly_parse_tiler(FlyAlgebra *A, const char *text, size_t len) {
  Reader r;
  start(&r, A, text, len);
  Node *n = read_whole_item(&r);
  return n ? to_tiler(&r, n) : NULL;
}

static bool read_swizzle(Reader *r, FlySwizzle *out) {
  peek(r);
  long pos = (long)r->pos;
  int64_t v[3];
  if (!accept(r, 'S') || !accept(r, '<')) {
    expected(r, "a swizzle S<B,M,S>");
    return false;
  }
  for (int i = 0; i < 3; i++) {
    peek(r);
    if (!read_int(r, &v[i]))
      return false;
    if (v[i] < -64 || v[i] > 64) {
      fly_fail_at(r->A, pos, "swizzle parameter %lld is out of range", (long long)v[i]);
      return false;
    }
    if (!accept(r, i < 2 ? ',' : '>')) {
      expected(r, i < 2 ? "','" : "'>'");
      return false;
    }
  }
  if (!fly_swizzle_make(r->A, (int)v[0], (int)v[1], (int)v[2], out)) {
    r->A->error_pos = pos;
    return false;
  }
  return true;
}

static bool accept_compose(Reader *r) {
  if (peek(r) != 'o')
    return false;
  r->pos++;
  return true;
}

/* "o offset o layout" after a swizzle, or after a layout (inner != NULL),
 * whose offset may be a coordinate. */
static FlyComposed *read_composed_rest(Reader *r, FlySwizzle s, FlyLayout *inner) {
  int64_t offset = 0;
  FlyTuple *crd = NULL;
  if (!accept_compose(r))
    return expected(r, inner ? "'o' after the layout" : "'o' after the swizzle");
  peek(r);
  long at = (long)r->pos;
  if (inner) {
    Node *o = read_atom(r);
    if (!o || !(crd = to_tuple(r, o, AS_COORD)))
      return NULL;
  } else if (!read_int(r, &offset)) {
    return NULL;
  }
  if (!accept_compose(r))
    return expected(r, "'o' after the offset");
  peek(r);
  long outer_at = (long)r->pos;
  Node *n = read_whole_item(r);
  FlyLayout *L = n ? to_layout(r, n) : NULL;
  if (!L)
    return NULL;
  FlyComposed *C =
      inner ? fly_composed_make_layout(r->A, inner, crd, L) : fly_composed_make(r->A, s, offset, L);
  if (!C && fly_algebra_error_pos(r->A) < 0) /* an offset or layout that does not fit */
    r->A->error_pos = inner ? at : outer_at;
  return C;
}

bool fly_parse_swizzle(FlyAlgebra *A, const char *text, size_t len, FlySwizzle *out) {
  Reader r;
  start(&r, A, text, len);
  return read_swizzle(&r, out) && at_end(&r);
}

FlyComposed *fly_parse_composed(FlyAlgebra *A, const char *text, size_t len) {
  Reader r;
  FlySwizzle s = {0, 0, 0};
  start(&r, A, text, len);
  int c = peek(&r);
  if (c == 'S')
    return read_swizzle(&r, &s) ? read_composed_rest(&r, s, NULL) : NULL;
  if (c != '(' && c != '-' && !(c >= 0 && isdigit(c)))
    return expected(&r, "a swizzle S<B,M,S> or a layout");
  Node *n = read_item(&r);
  FlyLayout *inner = n ? to_layout(&r, n) : NULL;
  return inner ? read_composed_rest(&r, s, inner) : NULL;
}

bool fly_parse_value(FlyAlgebra *A, const char *text, size_t len, FlyValue *out) {
  Reader r;
  start(&r, A, text, len);
  if (peek(&r) == 'S') {
    FlySwizzle s;
    if (!read_swizzle(&r, &s))
      return false;
    if (peek(&r) < 0) {
      out->kind = FLY_VALUE_SWIZZLE;
      out->as.swizzle = s;
      return true;
    }
    out->kind = FLY_VALUE_COMPOSED;
    return (out->as.composed = read_composed_rest(&r, s, NULL)) != NULL;
  }
  Node *n = read_item(&r);
  if (n && n->kind == NODE_LAYOUT && peek(&r) == 'o') { /* layout o offset o layout */
    FlyLayout *inner = to_layout(&r, n);
    FlySwizzle none = {0, 0, 0};
    out->kind = FLY_VALUE_COMPOSED;
    return inner && (out->as.composed = read_composed_rest(&r, none, inner)) != NULL;
  }
  if (!n || !at_end(&r))
    return false;
  if (n->kind == NODE_LAYOUT) {
    out->kind = FLY_VALUE_LAYOUT;
    return (out->as.layout = to_layout(&r, n)) != NULL;
  }
  if (has_layout(n)) {
    out->kind = FLY_VALUE_TILER;
    return (out->as.tiler = to_tiler(&r, n)) != NULL;
  }
  out->kind = FLY_VALUE_TUPLE;
  return (out->as.tuple = to_tuple(&r, n, AS_COORD)) != NULL;
}

char *fly_value_str(FlyAlgebra *A, const FlyValue *v) {
  switch (v->kind) {
  case FLY_VALUE_TUPLE:
    return fly_tuple_str(A, v->as.tuple);
  case FLY_VALUE_LAYOUT:
    return fly_layout_str(A, v->as.layout);
  case FLY_VALUE_TILER:
    return fly_tiler_str(A, v->as.tiler);
  case FLY_VALUE_SWIZZLE:
    return fly_swizzle_str(A, v->as.swizzle);
  case FLY_VALUE_COMPOSED:
    return fly_composed_str(A, v->as.composed);
  }
  return NULL;
}
