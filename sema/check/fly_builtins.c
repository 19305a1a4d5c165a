/* fly_builtins.c — the builtin names: lookup, calls, members, and the
 * conversions between interpreter values and layout-algebra values. */
#include <inttypes.h>
#include <string.h>

#include "fly_atom.h"
#include "fly_builtins.h"

/* The rows of fly_ops.def: builtin functions first, then values, then
   types, in the table's order; a FlyBuiltinId is an index of the first
   part. */
static const FlyBuiltinInfo infos[] = {
#define FLY_BUILTIN(id, name, min, max, group, usage, doc)                                         \
  {#name, FLY_WORD_FUNCTION, FLY_GROUP_##group, usage, doc, false},
#define FLY_BUILTIN_OP(id, name, min, max, group, usage, doc)                                      \
  {#name, FLY_WORD_FUNCTION, FLY_GROUP_##group, usage, doc, true},
#include "fly_ops.def"
#define FLY_VALUE(id, name, group, doc)                                                            \
  {#name, FLY_WORD_VALUE, FLY_GROUP_##group, #name, doc, false},
#include "fly_ops.def"
#define FLY_TYPE_NAME(id, name, code, doc)                                                         \
  {#name, FLY_WORD_TYPE, FLY_GROUP_TYPES, #name, doc, false},
#include "fly_ops.def"
};
enum { NINFOS = sizeof infos / sizeof infos[0] };

/* Each function's bounds on its arguments and its body, by FlyBuiltinId. */
static const struct {
  int min_args, max_args; /* max -1: any number */
  FlyBuiltinFn fn;
} functions[] = {
#define FLY_BUILTIN(id, name, min, max, ...) {min, max, fly_builtin_##name},
#define FLY_BUILTIN_OP FLY_BUILTIN
#include "fly_ops.def"
};

/* The named arguments of each function ("scope order"), NULL for none. */
static const char *const named_args[FLY_BUILTIN_COUNT] = {
#define FLY_BUILTIN_NAMED(id, names) [FLY_BUILTIN_##id] = names,
#include "fly_ops.def"
};

static const FlyTypeCode type_codes[] = {
#define FLY_TYPE_NAME(id, name, code, doc) code,
#include "fly_ops.def"
};

static const char *const group_titles[] = {
#define X(id, title) title,
    FLY_GROUPS(X)
#undef X
};

const FlyBuiltinInfo *fly_builtin_info_at(int i) { return i >= 0 && i < NINFOS ? &infos[i] : NULL; }
const char *fly_group_title(FlyGroup g) { return group_titles[g]; }
const FlyBuiltinInfo *fly_builtin_function(FlyBuiltinId id) { return &infos[id]; }

static bool name_is(const char *name, uint32_t len, const char *s) {
  return strlen(s) == len && memcmp(name, s, len) == 0;
}

/* The row of a name, or -1. */
static int find(const char *name, uint32_t len) {
  for (int i = 0; i < NINFOS; i++)
    if (name_is(name, len, infos[i].name))
      return i;
  return -1;
}

bool fly_is_builtin_name(const char *name, uint32_t len) { return find(name, len) >= 0; }

/* Whether the n bytes at w are one of the words of list ("scope order"). */
static bool word_in(const char *list, const char *w, uint32_t n) {
  for (const char *p = list; *p;) {
    size_t k = strcspn(p, " ");
    if (k == n && memcmp(p, w, n) == 0)
      return true;
    p += k;
    while (*p == ' ')
      p++;
  }
  return false;
}

const FlyVal *fly_arg_named(const FlyArgs *a, const char *name, const FlyNode **at) {
  for (int i = 0; i < a->nnamed; i++)
    if (name_is(a->named[i]->str, a->named[i]->len, name)) {
      if (at)
        *at = a->named[i];
      return a->named_v[i];
    }
  return NULL;
}

int fly_arg_choice(FlyInterp *I, const FlyArgs *a, const char *name, const char *const *choices,
                   int missing) {
  const FlyNode *at;
  const FlyVal *v = fly_arg_named(a, name, &at);
  if (!v)
    return missing;
  for (int i = 0; v->kind == FLY_V_STR && choices[i]; i++)
    if (name_is(v->s, v->len, choices[i]))
      return i;
  char list[256];
  size_t n = 0;
  for (int i = 0; choices[i] && n < sizeof list; i++)
    n += (size_t)snprintf(list + n, sizeof list - n, "%s\"%s\"", i ? ", " : "", choices[i]);
  if (v->kind == FLY_V_STR)
    fly_err(I, at, "%s is one of %s, not \"%.*s\"", name, list, (int)v->len, v->s);
  else
    fly_err(I, at, "%s is one of %s, a string known at compile time, not %s", name, list,
            fly_val_describe(&I->A, v));
  return -1;
}

static const FlyVal *object(FlyInterp *I, FlyObjectKind kind, const char *name) {
  FlyVal *v = fly_val_new(&I->A, FLY_V_OBJECT);
  if (v) {
    v->object.kind = kind;
    v->object.name = name;
  }
  return v;
}

static const FlyVal *index3(FlyInterp *I, const char *name, FlyOpcode op) {
  FlyVal *v = (FlyVal *)object(I, FLY_OBJ_INDEX3, name);
  if (v)
    v->object.which = op;
  return v;
}

static const FlyVal *value(FlyInterp *I, FlyValueId id, const char *name) {
  switch (id) {
  case FLY_VALUE_TARGET:
    return object(I, FLY_OBJ_TARGET, name);
  case FLY_VALUE_WARP_SIZE:
    return fly_val_int(&I->A, I->target->warp_size, NULL);
  case FLY_VALUE_THREAD_IDX:
    return index3(I, name, FLY_OPCODE_THREAD_IDX);
  case FLY_VALUE_BLOCK_IDX:
    return index3(I, name, FLY_OPCODE_BLOCK_IDX);
  case FLY_VALUE_BLOCK_DIM:
    return index3(I, name, FLY_OPCODE_BLOCK_DIM);
  case FLY_VALUE_GRID_DIM:
    return index3(I, name, FLY_OPCODE_GRID_DIM);
  case FLY_VALUE_CLUSTER_IDX:
    return index3(I, name, FLY_OPCODE_CLUSTER_IDX);
  case FLY_VALUE_CLUSTER_DIM:
    return index3(I, name, FLY_OPCODE_CLUSTER_DIM);
  case FLY_VALUE_LANE: {
    FlyOrigin o = {NULL, "the lane index"};
    return fly_emit_value(I, fly_val_runtime(&I->A, fly_type_scalar(FLY_TYPE_I32), o),
                          FLY_OPCODE_LANE, 0, NULL, NULL);
  }
  case FLY_VALUE_NV:
  case FLY_VALUE_AMD:
    return object(I, FLY_OBJ_NAMESPACE, name);
  case FLY_VALUE_COUNT:
    break;
  }
  return NULL;
}

const FlyVal *fly_builtin_lookup(FlyInterp *I, const char *name, uint32_t len) {
  int i = find(name, len);
  if (i < 0)
    return NULL;
  if (i < FLY_BUILTIN_COUNT) {
    FlyVal *v = fly_val_new(&I->A, FLY_V_BUILTIN);
    if (v)
      v->builtin = i;
    return v;
  }
  if (i < FLY_BUILTIN_COUNT + FLY_VALUE_COUNT)
    return value(I, (FlyValueId)(i - FLY_BUILTIN_COUNT), infos[i].name);
  return fly_val_type(&I->A, fly_type_static(type_codes[i - FLY_BUILTIN_COUNT - FLY_VALUE_COUNT]));
}

const FlyVal *fly_call_builtin(FlyInterp *I, const FlyVal *b, const FlyArgs *args) {
  if (b->builtin < 0 || b->builtin >= FLY_BUILTIN_COUNT)
    return NULL;
  const FlyBuiltinInfo *f = &infos[b->builtin];
  int min_args = functions[b->builtin].min_args, max_args = functions[b->builtin].max_args;
  const char *names = named_args[b->builtin];
  for (int i = 0; i < args->nnamed; i++) {
    const FlyNode *na = args->named[i];
    if (!names)
      return fly_err(I, na, "%s takes no named arguments", f->name);
    if (!word_in(names, na->str, na->len))
      return fly_err(I, na, "%s has no argument named '%.*s' (it takes %s)", f->name, (int)na->len,
                     na->str, names);
    for (int j = 0; j < i; j++)
      if (args->named[j]->len == na->len && memcmp(args->named[j]->str, na->str, na->len) == 0)
        return fly_err(I, na, "the argument '%.*s' is given twice", (int)na->len, na->str);
  }
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
  if (a.n < min_args || (max_args >= 0 && a.n > max_args)) {
    int shown = a.n - (b->self ? 1 : 0);
    return fly_err(I, args->call, "wrong number of arguments (%d) for %s; usage: %s", shown,
                   f->name, f->usage);
  }
  return functions[b->builtin].fn(I, &a);
}

/* ---- members ------------------------------------------------------------------------- */

static const FlyVal *index3_member(FlyInterp *I, const FlyVal *base, const FlyNode *m) {
  if (!name_is(m->str, m->len, "x") && !name_is(m->str, m->len, "y") &&
      !name_is(m->str, m->len, "z"))
    return fly_err(I, m, "%s has the members x, y and z, not '%s'", base->object.name, m->str);
  if (I->in_launch)
    return fly_err(I, m, "%s is known only on the GPU; a launch block runs on the host",
                   base->object.name);
  FlyOpcode op = (FlyOpcode)base->object.which;
  bool cluster = op == FLY_OPCODE_CLUSTER_IDX || op == FLY_OPCODE_CLUSTER_DIM;
  if (cluster && !fly_has_cluster(I, m, base->object.name))
    return NULL;
  const char *w = op == FLY_OPCODE_BLOCK_IDX     ? "the block index"
                  : op == FLY_OPCODE_BLOCK_DIM   ? "the block size (block_dim)"
                  : op == FLY_OPCODE_GRID_DIM    ? "the grid size (grid_dim)"
                  : op == FLY_OPCODE_CLUSTER_IDX ? "the cluster index"
                  : op == FLY_OPCODE_CLUSTER_DIM ? "the grid size in clusters (cluster_dim)"
                                                 : "the thread index";
  FlyOrigin o = {m, w};
  /* The dimension, 0 for x to 2 for z, is the operation's argument. */
  const FlyVal *dim = fly_val_int(&I->A, m->str[0] - 'x', NULL);
  return fly_emit_value(I, fly_val_runtime(&I->A, fly_type_scalar(FLY_TYPE_I32), o), op, 1, &dim,
                        m);
}

const FlyVal *fly_member(FlyInterp *I, const FlyVal *base, const FlyNode *m) {
  if (base->kind == FLY_V_OBJECT) {
    const FlyObject *o = &base->object;
    if (o->kind == FLY_OBJ_TARGET && !name_is(m->str, m->len, "has")) {
      const char *text = name_is(m->str, m->len, "vendor")   ? fly_vendor_name(I->target->vendor)
                         : name_is(m->str, m->len, "arch")   ? I->target->arch
                         : name_is(m->str, m->len, "family") ? I->target->family
                                                             : NULL;
      if (!text)
        return fly_err(I, m,
                       "target has the members vendor, arch and family and the method "
                       "has(name), not '%s'",
                       m->str);
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
  int id = find(m->str, m->len);
  if (id < 0 || id >= FLY_BUILTIN_COUNT)
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
  case FLY_V_BASIS:
    return (FlyTuple *)v->basis;
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
  if (t->kind == FLY_TUPLE_BASIS) {
    FlyVal *v = fly_val_new(&I->A, FLY_V_BASIS);
    if (v)
      v->basis = t;
    return v;
  }
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
