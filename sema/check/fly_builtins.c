/* fly_builtins.c — the builtin names: lookup, calls, members, and the
 * conversions between interpreter values and layout-algebra values. */
#include <inttypes.h>
#include <string.h>

#include "fly_atom.h"
#include "fly_builtins.h"

static const FlyBuiltin *const tables[] = {fly_algebra_builtins, fly_gpu_builtins,
                                           fly_data_builtins};

static bool name_is(const char *name, uint32_t len, const char *s) {
  return strlen(s) == len && memcmp(name, s, len) == 0;
}

/* Builtin ids are an index into the concatenated tables. */
static const FlyBuiltin *builtin_by_id(int id) {
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (const FlyBuiltin *b = tables[t]; b->name; b++)
      if (id-- == 0)
        return b;
  return NULL;
}

static int builtin_id(const char *name, uint32_t len) {
  int id = 0;
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (const FlyBuiltin *b = tables[t]; b->name; b++, id++)
      if (name_is(name, len, b->name))
        return id;
  return -1;
}

/* Names that are values rather than functions. */
static const struct {
  const char *name;
  FlyTypeCode type; /* a compile-time type name, or NONE */
} value_names[] = {
    {"int", FLY_TYPE_INT},         {"float", FLY_TYPE_FLOAT},    {"bool", FLY_TYPE_BOOL},
    {"str", FLY_TYPE_STR},         {"tuple", FLY_TYPE_TUPLE},    {"type", FLY_TYPE_TYPE},
    {"layout", FLY_TYPE_LAYOUT},   {"target", FLY_TYPE_NONE},    {"warp_size", FLY_TYPE_NONE},
    {"thread_idx", FLY_TYPE_NONE}, {"block_idx", FLY_TYPE_NONE}, {"block_dim", FLY_TYPE_NONE},
    {"grid_dim", FLY_TYPE_NONE},   {"lane", FLY_TYPE_NONE},      {"nv", FLY_TYPE_NONE},
    {"amd", FLY_TYPE_NONE},
};

void fly_builtin_words(void (*each)(const char *word, const char *kind, void *ctx), void *ctx) {
  for (size_t i = 0; i < sizeof value_names / sizeof value_names[0]; i++)
    each(value_names[i].name, value_names[i].type == FLY_TYPE_NONE ? "builtin-value" : "type", ctx);
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (const FlyBuiltin *b = tables[t]; b->name; b++)
      each(b->name, "builtin-function", ctx);
}

bool fly_is_builtin_name(const char *name, uint32_t len) {
  for (size_t i = 0; i < sizeof value_names / sizeof value_names[0]; i++)
    if (name_is(name, len, value_names[i].name))
      return true;
  return builtin_id(name, len) >= 0;
}

static const FlyVal *object(FlyInterp *I, FlyObjectKind kind, const char *name) {
  FlyVal *v = fly_val_new(&I->A, FLY_V_OBJECT);
  if (v) {
    v->object.kind = kind;
    v->object.name = name;
  }
  return v;
}

const FlyVal *fly_builtin_lookup(FlyInterp *I, const char *name, uint32_t len) {
  for (size_t i = 0; i < sizeof value_names / sizeof value_names[0]; i++) {
    const char *n = value_names[i].name;
    if (!name_is(name, len, n))
      continue;
    if (value_names[i].type != FLY_TYPE_NONE)
      return fly_val_type(&I->A, fly_type_static(value_names[i].type));
    if (strcmp(n, "warp_size") == 0)
      return fly_val_int(&I->A, I->target->warp_size, NULL);
    if (strcmp(n, "target") == 0)
      return object(I, FLY_OBJ_TARGET, n);
    if (strcmp(n, "nv") == 0 || strcmp(n, "amd") == 0)
      return object(I, FLY_OBJ_NAMESPACE, n);
    if (strcmp(n, "lane") == 0) {
      FlyOrigin o = {NULL, "the lane index"};
      return fly_emit_value(I, fly_val_runtime(&I->A, fly_type_scalar(FLY_TYPE_I32), o), "lane", 0,
                            NULL, NULL);
    }
    return object(I, FLY_OBJ_INDEX3, n);
  }
  int id = builtin_id(name, len);
  if (id < 0)
    return NULL;
  FlyVal *v = fly_val_new(&I->A, FLY_V_BUILTIN);
  if (v)
    v->builtin = id;
  return v;
}

const FlyVal *fly_call_builtin(FlyInterp *I, const FlyVal *b, const FlyArgs *args) {
  const FlyBuiltin *f = builtin_by_id(b->builtin);
  if (!f)
    return NULL;
  if (args->nnamed)
    return fly_err(I, args->named[0], "%s takes no named arguments", f->name);
  FlyArgs a = *args;
  if (b->self) {
    /* A method call: the receiver becomes the first argument. */
    int n = args->n + 1;
    a.v = fly_alloc(&I->A, sizeof *a.v * (size_t)n);
    a.node = fly_alloc(&I->A, sizeof *a.node * (size_t)n);
    if (!a.v || !a.node)
      return NULL;
    /* Its node is the x of the x.f that made the method, which need not
       be the callee of this call: let f = x.size; f(). */
    a.v[0] = b->self;
    a.node[0] = b->self_at ? b->self_at : args->call;
    memcpy(a.v + 1, args->v, sizeof *a.v * (size_t)args->n);
    memcpy(a.node + 1, args->node, sizeof *a.node * (size_t)args->n);
    a.n = n;
  }
  if (a.n < f->min_args || (f->max_args >= 0 && a.n > f->max_args)) {
    int shown = a.n - (b->self ? 1 : 0);
    return fly_err(I, args->call, "wrong number of arguments (%d) for %s; usage: %s", shown,
                   f->name, f->usage);
  }
  return f->fn(I, &a);
}

/* ---- members ------------------------------------------------------------------------- */

static const FlyVal *index3_member(FlyInterp *I, const FlyVal *base, const FlyNode *m) {
  if (!name_is(m->str, m->len, "x") && !name_is(m->str, m->len, "y") &&
      !name_is(m->str, m->len, "z"))
    return fly_err(I, m, "%s has the members x, y and z, not '%s'", base->object.name, m->str);
  if (I->in_launch)
    return fly_err(I, m, "%s is known only on the GPU; a launch block runs on the host",
                   base->object.name);
  static const char *const why[] = {"the thread index", "the block index",
                                    "the block size (block_dim)", "the grid size (grid_dim)"};
  const char *w = why[0];
  if (strcmp(base->object.name, "block_idx") == 0)
    w = why[1];
  else if (strcmp(base->object.name, "block_dim") == 0)
    w = why[2];
  else if (strcmp(base->object.name, "grid_dim") == 0)
    w = why[3];
  FlyOrigin o = {m, w};
  /* The emitter's name for it: "thread_idx.x", "grid_dim.z" ... */
  char *op = fly_alloc(&I->A, strlen(base->object.name) + 3);
  if (!op)
    return NULL;
  sprintf(op, "%s.%c", base->object.name, m->str[0]);
  return fly_emit_value(I, fly_val_runtime(&I->A, fly_type_scalar(FLY_TYPE_I32), o), op, 0, NULL,
                        m);
}

const FlyVal *fly_member(FlyInterp *I, const FlyVal *base, const FlyNode *m) {
  if (base->kind == FLY_V_OBJECT) {
    const FlyObject *o = &base->object;
    if (o->kind == FLY_OBJ_TARGET) {
      const char *text = name_is(m->str, m->len, "vendor")   ? fly_vendor_name(I->target->vendor)
                         : name_is(m->str, m->len, "arch")   ? I->target->arch
                         : name_is(m->str, m->len, "family") ? I->target->family
                                                             : NULL;
      if (!text)
        return fly_err(I, m, "target has the members vendor, arch and family, not '%s'", m->str);
      return fly_val_str(&I->A, text, (uint32_t)strlen(text));
    }
    if (o->kind == FLY_OBJ_INDEX3)
      return index3_member(I, base, m);
    if (o->kind == FLY_OBJ_NAMESPACE) {
      const FlyAtom *atom = fly_atom_find_in(o->name, m->str, m->len);
      if (!atom)
        return fly_err(I, m, "'%s' has no atom named '%s'", o->name, m->str);
      FlyVal *v = fly_val_new(&I->A, FLY_V_OBJECT);
      if (v) {
        v->object.kind = FLY_OBJ_ATOM_NAME;
        v->object.name = atom->name;
        v->object.atom = atom;
      }
      return v;
    }
  }
  /* x.f is the builtin f with x as its receiver. */
  int id = builtin_id(m->str, m->len);
  if (id < 0)
    return fly_err(I, m, "%s has no member '%s'", fly_val_describe(&I->A, base), m->str);
  FlyVal *v = fly_val_new(&I->A, FLY_V_BUILTIN);
  if (v) {
    v->builtin = id;
    v->self = base;
    v->self_at = m->kid[0];
  }
  return v;
}

/* ---- values as algebra inputs ----------------------------------------------------------- */

FlyTuple *fly_val_to_tuple(FlyInterp *I, const FlyVal *v, const FlyNode *at, const char *what) {
  switch (v->kind) {
  case FLY_V_INT:
    return fly_tuple_int(&I->A, v->i);
  case FLY_V_UNDERSCORE:
    return fly_tuple_underscore(&I->A);
  case FLY_V_TUPLE: {
    if (v->n > FLY_MAX_MODES) {
      fly_err(I, at, "too many modes (limit is %d)", FLY_MAX_MODES);
      return NULL;
    }
    FlyTuple **e = fly_alloc(&I->A, sizeof *e * (size_t)(v->n ? v->n : 1));
    if (!e)
      return NULL;
    for (int i = 0; i < v->n; i++)
      if (!(e[i] = fly_val_to_tuple(I, v->elems[i], at, what)))
        return NULL;
    FlyTuple *t = fly_tuple_seq(&I->A, v->n, e);
    if (!t)
      fly_err_algebra(I, at);
    return t;
  }
  case FLY_V_RUNTIME:
    fly_err_not_static(I, at, v, what);
    return NULL;
  default:
    fly_err(I, at, "%s must be an integer or a tuple of integers, not %s", what,
            fly_val_describe(&I->A, v));
    return NULL;
  }
}

const FlyVal *fly_tuple_to_val(FlyInterp *I, const FlyTuple *t) {
  if (!t)
    return NULL;
  if (t->kind == FLY_TUPLE_INT)
    return fly_val_int(&I->A, t->value, NULL);
  if (t->kind == FLY_TUPLE_UNDERSCORE)
    return fly_val_underscore();
  const FlyVal **e = fly_alloc(&I->A, sizeof *e * (size_t)(t->n ? t->n : 1));
  if (!e)
    return NULL;
  for (int i = 0; i < t->n; i++)
    if (!(e[i] = fly_tuple_to_val(I, t->elem[i])))
      return NULL;
  return fly_val_tuple(&I->A, t->n, e);
}

FlyTiler *fly_val_to_tiler(FlyInterp *I, const FlyVal *v, const FlyNode *at) {
  switch (v->kind) {
  case FLY_V_LAYOUT:
    return fly_tiler_layout(&I->A, (FlyLayout *)v->layout);
  case FLY_V_INT: {
    if (v->i < 1) {
      fly_err(I, at, "a tile size must be positive, not %" PRId64, v->i);
      return NULL;
    }
    FlyLayout *L = fly_layout_make(&I->A, fly_tuple_int(&I->A, v->i), fly_tuple_int(&I->A, 1));
    return L ? fly_tiler_layout(&I->A, L) : NULL;
  }
  case FLY_V_UNDERSCORE:
    return fly_tiler_underscore(&I->A);
  case FLY_V_TUPLE: {
    FlyTiler **e = fly_alloc(&I->A, sizeof *e * (size_t)(v->n ? v->n : 1));
    if (!e)
      return NULL;
    for (int i = 0; i < v->n; i++)
      if (!(e[i] = fly_val_to_tiler(I, v->elems[i], at)))
        return NULL;
    return fly_tiler_seq(&I->A, v->n, e);
  }
  case FLY_V_RUNTIME:
    fly_err_not_static(I, at, v, "a tiler");
    return NULL;
  default:
    fly_err(I, at, "a tiler is a layout, an integer, '_' or a tuple of them, not %s",
            fly_val_describe(&I->A, v));
    return NULL;
  }
}

const FlyLayout *fly_val_to_layout(FlyInterp *I, const FlyVal *v, const FlyNode *at,
                                   const char *what) {
  if (v->kind == FLY_V_LAYOUT)
    return v->layout;
  if (v->kind == FLY_V_INT && v->i >= 1) /* n means n:1, as in tilers */
    return fly_layout_make(&I->A, fly_tuple_int(&I->A, v->i), fly_tuple_int(&I->A, 1));
  if (v->kind == FLY_V_RUNTIME)
    fly_err_not_static(I, at, v, what);
  else
    fly_err(I, at, "%s must be a layout, not %s", what, fly_val_describe(&I->A, v));
  return NULL;
}

bool fly_val_to_int(FlyInterp *I, const FlyVal *v, const FlyNode *at, const char *what,
                    int64_t *out) {
  if (v->kind == FLY_V_INT) {
    *out = v->i;
    return true;
  }
  if (v->kind == FLY_V_RUNTIME)
    fly_err_not_static(I, at, v, what);
  else
    fly_err(I, at, "%s must be an integer, not %s", what, fly_val_describe(&I->A, v));
  return false;
}

bool fly_arg_int(FlyInterp *I, const FlyArgs *a, int i, const char *what, int64_t *out) {
  return fly_val_to_int(I, a->v[i], a->node[i], what, out);
}

const FlyLayout *fly_arg_layout(FlyInterp *I, const FlyArgs *a, int i, const char *what) {
  return fly_val_to_layout(I, a->v[i], a->node[i], what);
}

const FlyType *fly_arg_type(FlyInterp *I, const FlyArgs *a, int i, const char *what) {
  if (a->v[i]->kind == FLY_V_TYPE)
    return a->v[i]->type_value;
  fly_err(I, a->node[i], "%s must be a type, not %s", what, fly_val_describe(&I->A, a->v[i]));
  return NULL;
}
