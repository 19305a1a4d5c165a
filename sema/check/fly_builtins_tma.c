/* fly_builtins_tma.c — TMA, the tensor memory accelerator (NVIDIA sm_90, the
 * feature tma): tensor maps, and the bulk tensor copies through them
 * between global and shared memory.
 *
 * tensor_map(A, box) describes a map of the kernel's tensor parameter A:
 * the box is the shared tile one copy fills, a compact layout (maybe
 * swizzled) whose shape is the box. The map becomes an argument of the
 * kernel that the runtime builds at launch from A's pointer, shape and
 * strides (docs/bundle.md), so everything the hardware requires of the box
 * is checked here and what it requires of the tensor there. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_builtins.h"
#include "fly_kernel_info.h"
#include "fly_tensor_map.h"

enum { MAX_BOX = 256 };

static bool has_tma(FlyInterp *I, const FlyArgs *a, const char *what) {
  return fly_gpu_feature(I, a, what, FLY_FEATURE_TMA, "needs TMA", "it runs");
}

/* The index of the kernel parameter that v is, or -1. */
static int param_of(const FlyInterp *I, const FlyVal *v) {
  for (int i = 0; i < I->nkernel_params; i++)
    if (I->kernel_params[i] == v)
      return i;
  return -1;
}

static const char *param_name(const FlyInterp *I, int param) {
  const FlyNode *p = I->kernel ? I->kernel->kid[0] : NULL;
  for (int i = 0; p && i < param; i++)
    p = p->next;
  return p ? p->str : "?";
}

/* The modes of a flat tuple (a leaf is one mode); -1 when a mode is a
   tuple itself. */
static int flat_modes(const FlyVal *t, const FlyVal **out, int cap) {
  if (t->kind != FLY_V_TUPLE) {
    out[0] = t;
    return 1;
  }
  if (t->n > cap)
    return t->n;
  for (int i = 0; i < t->n; i++) {
    if (t->elems[i]->kind == FLY_V_TUPLE)
      return -1;
    out[i] = t->elems[i];
  }
  return t->n;
}

static int log2_exact(int64_t n) {
  int k = 0;
  while (((int64_t)1 << k) < n)
    k++;
  return ((int64_t)1 << k) == n ? k : -1;
}

/* The hardware's swizzle in bytes (32, 64, 128) of S<B,M,S> over elements
   of eb bytes: B bits of the 16-byte chunk index XORed with those 3 bits
   above, which in elements is M = 4 - log2(eb). 0 after an error. */
static int swizzle_bytes(FlyInterp *I, const FlySwizzle *s, int eb, const FlyNode *at) {
  int m = 4 - log2_exact(eb);
  if (s->base == m && s->shift == 3 && s->bits >= 1 && s->bits <= 3)
    return 16 << s->bits;
  fly_err(I, at,
          "TMA swizzles 32, 64 or 128 bytes: for %d-byte elements the box's swizzle is "
          "swizzle(1, %d, 3), swizzle(2, %d, 3) or swizzle(3, %d, 3), not swizzle(%d, %d, %d)",
          eb, m, m, m, s->bits, s->base, s->shift);
  return 0;
}

/* The box argument: a layout, or a layout composed with a swizzle. */
static const FlyLayout *box_layout(FlyInterp *I, const FlyVal *v, const FlyNode *at,
                                   FlyTensorMap *m) {
  if (v->kind == FLY_V_LAYOUT)
    return v->layout;
  if (v->kind == FLY_V_COMPOSED && !v->composed->inner && !v->composed->offset_crd &&
      v->composed->offset == 0) {
    m->swizzled = true;
    m->swizzle = v->composed->swizzle;
    return v->composed->layout;
  }
  fly_err(I, at,
          "tensor_map's box is the layout of the shared tile one copy fills, such as "
          "(64, 64):(64, 1) or composition(swizzle(3, 3, 3), (64, 64):(64, 1)), not %s",
          fly_val_describe(&I->A, v));
  return NULL;
}

/* The modes in the hardware's order: the tensor's mode of static stride 1
   (the last, else the first), then the others from the last. */
static bool order_modes(FlyInterp *I, const FlyVal *A, const FlyVal **stride, FlyTensorMap *m,
                        const FlyNode *at) {
  int r = m->rank, inner = -1;
  if (stride[r - 1]->kind == FLY_V_INT && stride[r - 1]->i == 1)
    inner = r - 1;
  else if (stride[0]->kind == FLY_V_INT && stride[0]->i == 1)
    inner = 0;
  if (inner < 0) {
    fly_err(I, at,
            "tensor_map needs the stride 1 of the tensor's innermost mode in its type, as in "
            "tensor<%s, (?, ?):(?, 1)>; '%s' is %s",
            fly_type_str(&I->A, A->tensor.elem), m->name, fly_val_describe(&I->A, A));
    return false;
  }
  int n = 0;
  m->dims[n++] = inner;
  for (int i = r - 1; i >= 0; i--)
    if (i != inner)
      m->dims[n++] = i;
  return true;
}

/* L with each mode made one number where it can be (std.smem_layout's
   tiles are built of atoms: ((8,16),(64,1)):((64,512),(1,0)) is
   (128,64):(64,1)), its modes kept: the same box, however a layout
   algebra arrived at it. */
static const FlyLayout *by_mode(FlyInterp *I, const FlyLayout *L) {
  int modes = L->shape->kind == FLY_TUPLE_SEQ ? L->shape->n : 1;
  if (modes <= 1 || modes > FLY_TMAP_MAX_RANK)
    return L;
  FlyTuple *ones[FLY_TMAP_MAX_RANK];
  for (int i = 0; i < modes; i++)
    ones[i] = fly_tuple_int(&I->A, 1);
  FlyTuple *profile = fly_tuple_seq(&I->A, modes, ones);
  FlyLayout *C = profile ? fly_layout_coalesce_by(&I->A, L, profile) : NULL;
  return C ? C : L;
}

/* The box's shape and strides: in range, and the compact tile TMA writes
   (hardware dimension 0 contiguous, each next one after it). */
static bool check_box(FlyInterp *I, const FlyLayout *L, FlyTensorMap *m, const FlyNode *at) {
  char *text = fly_layout_str(&I->A, L);
  L = by_mode(I, L);
  FlyTuple *sh = L->shape, *st = L->stride;
  int r = sh->kind == FLY_TUPLE_SEQ ? sh->n : 1;
  if (r != m->rank) {
    fly_err(I, at, "the box %s has %d mode%s and the tensor '%s' %d", text ? text : "?", r,
            r == 1 ? "" : "s", m->name, m->rank);
    return false;
  }
  int64_t stride[FLY_TMAP_MAX_RANK];
  for (int i = 0; i < r; i++) {
    FlyTuple *s = sh->kind == FLY_TUPLE_SEQ ? sh->elem[i] : sh;
    FlyTuple *d = st->kind == FLY_TUPLE_SEQ ? st->elem[i] : st;
    if (s->kind != FLY_TUPLE_INT || d->kind != FLY_TUPLE_INT) {
      fly_err(I, at, "the box %s has a mode of modes; TMA's box has one number a mode",
              text ? text : "?");
      return false;
    }
    if (s->value > MAX_BOX) {
      fly_err(I, at, "the box %s is %" PRId64 " elements along mode %d; TMA's box is at most %d",
              text ? text : "?", s->value, i, MAX_BOX);
      return false;
    }
    m->box[i] = s->value;
    stride[i] = d->value;
  }
  int64_t want = 1;
  bool compact = true;
  for (int i = 0; i < r; i++) {
    compact = compact && (stride[m->dims[i]] == want || m->box[m->dims[i]] == 1);
    want *= m->box[m->dims[i]];
  }
  if (compact)
    return true;
  /* The tile TMA writes, for the message. */
  char buf[256];
  size_t u = 0;
  int64_t w[FLY_TMAP_MAX_RANK], acc = 1;
  for (int i = 0; i < r; i++) {
    w[m->dims[i]] = acc;
    acc *= m->box[m->dims[i]];
  }
  u += (size_t)snprintf(buf + u, sizeof buf - u, "(");
  for (int i = 0; i < r; i++)
    u += (size_t)snprintf(buf + u, sizeof buf - u, "%s%" PRId64, i ? ", " : "", m->box[i]);
  u += (size_t)snprintf(buf + u, sizeof buf - u, "%s):(", r == 1 ? "," : "");
  for (int i = 0; i < r; i++)
    u += (size_t)snprintf(buf + u, sizeof buf - u, "%s%" PRId64, i ? ", " : "", w[i]);
  snprintf(buf + u, sizeof buf - u, "%s)", r == 1 ? "," : "");
  fly_err(I, at,
          "the box %s is not the tile TMA writes: the tensor's mode of stride 1 innermost, "
          "the others after it, from the last: %s",
          text ? text : "?", buf);
  return false;
}

/* What the hardware requires of the box's bytes. */
static bool check_bytes(FlyInterp *I, FlyTensorMap *m, int eb, const FlyNode *at) {
  int64_t inner = m->box[m->dims[0]] * eb;
  if (inner % 16)
    return fly_err(I, at,
                   "the box's innermost mode is %" PRId64 " bytes (%" PRId64
                   " elements); TMA moves multiples of 16 bytes along it",
                   inner, m->box[m->dims[0]]),
           false;
  if (m->swizzled && !(m->swizzle_bytes = swizzle_bytes(I, &m->swizzle, eb, at)))
    return false;
  if (m->swizzle_bytes && inner > m->swizzle_bytes)
    return fly_err(I, at,
                   "with a swizzle of %d bytes the box's innermost mode holds at most %d bytes, "
                   "and it has %" PRId64,
                   m->swizzle_bytes, m->swizzle_bytes, inner),
           false;
  m->bytes = eb;
  for (int i = 0; i < m->rank; i++)
    m->bytes *= m->box[i];
  return true;
}

static bool same_map(const FlyTensorMap *a, const FlyTensorMap *b) {
  if (a->param != b->param || a->swizzle_bytes != b->swizzle_bytes || a->elem != b->elem ||
      !fly_layout_equal(a->tile, b->tile))
    return false;
  return !a->swizzled || memcmp(&a->swizzle, &b->swizzle, sizeof a->swizzle) == 0;
}

/* The map in the kernel's list (a new one is added, and recorded for the
   bundle); NULL after an error. */
static const FlyTensorMap *add_map(FlyInterp *I, FlyTensorMap *m, const FlyNode *at) {
  for (int i = 0; i < I->ntmaps; i++)
    if (same_map(I->tmaps[i], m))
      return I->tmaps[i];
  if (I->ntmaps == FLY_TMAP_MAX_MAPS)
    return fly_err(I, at, "too many tensor maps in one kernel (limit is %d)", FLY_TMAP_MAX_MAPS),
           NULL;
  const FlyTensorMap **list = fly_alloc(&I->A, sizeof *list * (size_t)(I->ntmaps + 1));
  FlyTensorMap *copy = fly_alloc(&I->A, sizeof *copy);
  if (!list || !copy)
    return NULL;
  if (I->ntmaps)
    memcpy(list, I->tmaps, sizeof *list * (size_t)I->ntmaps);
  *copy = *m;
  copy->index = I->ntmaps;
  list[I->ntmaps++] = copy;
  I->tmaps = list;
  FlyKernelInfo *info = I->kernel_info;
  if (!info)
    return copy;
  FlyBundleTensorMap *grown = realloc(info->tmaps, sizeof *grown * (info->ntmaps + 1));
  if (!grown)
    return fly_err(I, at, "out of memory"), NULL;
  info->tmaps = grown;
  FlyBundleTensorMap *r = &grown[info->ntmaps++];
  memset(r, 0, sizeof *r);
  r->param = (uint32_t)m->param;
  r->arg = info->nargs++;
  r->dtype = info->params[m->param].dtype;
  r->rank = (uint32_t)m->rank;
  for (int i = 0; i < m->rank; i++) {
    r->dims[i] = (uint32_t)m->dims[i];
    r->box[i] = (uint32_t)m->box[m->dims[i]];
  }
  r->swizzle = (uint32_t)m->swizzle_bytes;
  r->l2_promotion = 256;
  return copy;
}

const FlyVal *fly_builtin_tensor_map(FlyInterp *I, const FlyArgs *a) {
  static const char what[] = "tensor_map(A, box)";
  if (!has_tma(I, a, what))
    return NULL;
  const FlyVal *A = fly_arg_tensor(I, a, 0, what);
  if (!A)
    return NULL;
  FlyTensorMap m;
  memset(&m, 0, sizeof m);
  m.param = param_of(I, A);
  if (A->tensor.space != FLY_SPACE_GLOBAL || m.param < 0)
    return fly_err(I, a->node[0],
                   "tensor_map takes a tensor parameter of the kernel, whose pointer, shape and "
                   "strides the runtime builds the map from, not %s",
                   fly_val_describe(&I->A, A));
  m.name = param_name(I, m.param);
  m.elem = A->tensor.elem;
  int eb = fly_type_bits(m.elem) / 8;
  if (m.elem->kind != FLY_TY_SCALAR || eb < 1 || m.elem->code == FLY_TYPE_INDEX)
    return fly_err(I, a->node[0], "TMA copies elements of 1, 2, 4 or 8 bytes, not %s",
                   fly_type_str(&I->A, m.elem));
  const FlyVal *shape[FLY_TMAP_MAX_RANK], *stride[FLY_TMAP_MAX_RANK];
  int r = flat_modes(A->tensor.shape, shape, FLY_TMAP_MAX_RANK);
  if (r < 1 || r > FLY_TMAP_MAX_RANK ||
      flat_modes(A->tensor.stride, stride, FLY_TMAP_MAX_RANK) != r)
    return fly_err(I, a->node[0], "TMA maps tensors of 1 to %d modes, each a number; '%s' is %s",
                   FLY_TMAP_MAX_RANK, m.name, fly_val_describe(&I->A, A));
  m.rank = r;
  if (!order_modes(I, A, stride, &m, a->node[0]))
    return NULL;
  m.tile = box_layout(I, a->v[1], a->node[1], &m);
  if (!m.tile || !check_box(I, m.tile, &m, a->node[1]) || !check_bytes(I, &m, eb, a->node[1]))
    return NULL;
  const FlyTensorMap *map = add_map(I, &m, a->call);
  if (!map)
    return NULL;
  FlyVal *v = fly_new_object(I, FLY_OBJ_TENSOR_MAP);
  if (!v)
    return NULL;
  v->object.tmap = map;
  v->object.name = map->name;
  const FlyVal *arg = v;
  return fly_emit_effect(I, FLY_OPCODE_TENSOR_MAP, 1, &arg, a->call) ? v : NULL;
}

static const FlyTensorMap *arg_map(FlyInterp *I, const FlyArgs *a, const char *what) {
  const FlyVal *v = a->v[0];
  if (v->kind == FLY_V_OBJECT && v->object.kind == FLY_OBJ_TENSOR_MAP)
    return v->object.tmap;
  return fly_err(I, a->node[0], "%s takes a tensor map, made by tensor_map(A, box), not %s", what,
                 fly_val_describe(&I->A, v)),
         NULL;
}

const FlyVal *fly_builtin_tma_bytes(FlyInterp *I, const FlyArgs *a) {
  const FlyTensorMap *m = arg_map(I, a, "tma_bytes(map)");
  return m ? fly_val_int(&I->A, m->bytes, NULL) : NULL;
}

/* The shared tile of a copy: the map's box, of its element type. */
static bool check_tile(FlyInterp *I, const FlyArgs *a, int i, const FlyTensorMap *m,
                       const char *what) {
  const FlyVal *t = fly_arg_tensor(I, a, i, what);
  if (!t)
    return false;
  const FlyLayout *L =
      t->tensor.space == FLY_SPACE_SHARED ? fly_tensor_static_layout(I, &t->tensor) : NULL;
  /* Equal mode by mode, as check_box reads the box: a stage cut from a
     bigger tile may come with its modes grouped otherwise. */
  bool same = L && t->tensor.elem == m->elem &&
              fly_layout_equal(by_mode(I, L), by_mode(I, m->tile)) &&
              t->tensor.swizzled == m->swizzled &&
              (!m->swizzled || memcmp(&t->tensor.swizzle, &m->swizzle, sizeof m->swizzle) == 0);
  if (same)
    return true;
  char *box = fly_layout_str(&I->A, m->tile);
  char *got = L ? fly_layout_str(&I->A, L) : NULL;
  if (got)
    fly_err(I, a->node[i],
            "%s moves a shared tile of the map's box, %s%s of %s elements, not %s%s of %s", what,
            m->swizzled ? "swizzled " : "", box ? box : "?", fly_type_str(&I->A, m->elem),
            t->tensor.swizzled ? "swizzled " : "", got, fly_type_str(&I->A, t->tensor.elem));
  else
    fly_err(I, a->node[i], "%s moves a shared tile of the map's box, %s%s of %s elements, not %s",
            what, m->swizzled ? "swizzled " : "", box ? box : "?", fly_type_str(&I->A, m->elem),
            fly_val_describe(&I->A, t));
  return false;
}

/* The box's coordinate: one integer a mode of the tensor (a tuple, or one
   integer for a tensor of one mode), each made an i32. */
static bool coords(FlyInterp *I, const FlyArgs *a, int i, const FlyTensorMap *m, const char *what,
                   const FlyVal **out) {
  const FlyVal *c = a->v[i];
  int n = c->kind == FLY_V_TUPLE ? c->n : 1;
  const FlyVal *const *e = c->kind == FLY_V_TUPLE ? c->elems : &a->v[i];
  bool ok = n == m->rank;
  for (int k = 0; ok && k < n; k++)
    ok = fly_val_is_integer(e[k]);
  if (!ok)
    return fly_err(I, a->node[i],
                   "%s takes the coordinate of the box's first element: %d integer%s, one a mode "
                   "of '%s', not %s",
                   what, m->rank, m->rank == 1 ? "" : "s", m->name, fly_val_describe(&I->A, c)),
           false;
  for (int k = 0; k < n; k++)
    if (!(out[k] = fly_convert(I, e[k], fly_type_scalar(FLY_TYPE_I32), a->node[i], true)))
      return false;
  return true;
}

/* A multicast's mask: an integer whose bit r sends the box to block r of
   the cluster; a static one names at least one of 16 blocks. Made an i32
   (the tracer keeps its low 16 bits, the instruction's i16). */
static const FlyVal *multicast_mask(FlyInterp *I, const FlyArgs *a, int i, const char *what) {
  const FlyVal *x = a->v[i];
  if (!fly_has_cluster(I, a->node[i], what))
    return NULL;
  if (!fly_val_is_integer(x))
    return fly_err(I, a->node[i],
                   "%s takes a mask of the cluster's blocks here: an integer whose bit r sends "
                   "the box to block r, not %s",
                   what, fly_val_describe(&I->A, x));
  if (x->kind == FLY_V_INT && (x->i < 1 || x->i > 0xffff))
    return fly_err(I, a->node[i],
                   "%s multicasts to the blocks whose ranks are the mask's bits, of 16 at most: "
                   "a mask from 1 to 0xffff, not %" PRId64,
                   what, x->i);
  return fly_convert(I, x, fly_type_scalar(FLY_TYPE_I32), a->node[i], true);
}

const FlyVal *fly_builtin_tma_load(FlyInterp *I, const FlyArgs *a) {
  const char *what =
      a->n == 5 ? "tma_load(map, bar, tile, coord, mask)" : "tma_load(map, bar, tile, coord)";
  if (!has_tma(I, a, what))
    return NULL;
  const FlyTensorMap *m = arg_map(I, a, what);
  if (!m)
    return NULL;
  const FlyVal *bar = fly_arg_tensor(I, a, 1, what);
  int64_t n;
  if (!bar)
    return NULL;
  if (bar->tensor.space != FLY_SPACE_SHARED || bar->tensor.elem->kind != FLY_TY_SCALAR ||
      bar->tensor.elem->code != FLY_TYPE_I64 || !fly_tensor_static_size(I, bar, &n) || n != 1)
    return fly_err(I, a->node[1],
                   "%s completes its bytes on an mbarrier: one i64 of shared memory, such as "
                   "bars[0] of smem<i64>(2), not %s",
                   what, fly_val_describe(&I->A, bar));
  const FlyVal *args[4 + FLY_TMAP_MAX_RANK] = {a->v[0], bar, a->v[2]};
  if (!check_tile(I, a, 2, m, what))
    return NULL;
  if (a->n == 5) {
    /* map, bar, tile, mask, coord... */
    if (!(args[3] = multicast_mask(I, a, 4, what)) || !coords(I, a, 3, m, what, args + 4))
      return NULL;
    return fly_emit_effect(I, FLY_OPCODE_TMA_LOAD_MULTICAST, 4 + m->rank, args, a->call)
               ? fly_val_none()
               : NULL;
  }
  if (!coords(I, a, 3, m, what, args + 3))
    return NULL;
  return fly_emit_effect(I, FLY_OPCODE_TMA_LOAD, 3 + m->rank, args, a->call) ? fly_val_none()
                                                                             : NULL;
}

const FlyVal *fly_builtin_tma_store(FlyInterp *I, const FlyArgs *a) {
  static const char what[] = "tma_store(map, tile, coord)";
  if (!has_tma(I, a, what))
    return NULL;
  const FlyTensorMap *m = arg_map(I, a, what);
  if (!m)
    return NULL;
  const FlyVal *args[2 + FLY_TMAP_MAX_RANK] = {a->v[0], a->v[1]};
  if (!check_tile(I, a, 1, m, what) || !coords(I, a, 2, m, what, args + 2))
    return NULL;
  return fly_emit_effect(I, FLY_OPCODE_TMA_STORE, 2 + m->rank, args, a->call) ? fly_val_none()
                                                                              : NULL;
}

const FlyVal *fly_builtin_tma_store_commit(FlyInterp *I, const FlyArgs *a) {
  if (!has_tma(I, a, "tma_store_commit()"))
    return NULL;
  return fly_emit_effect(I, FLY_OPCODE_TMA_STORE_COMMIT, 0, NULL, a->call) ? fly_val_none() : NULL;
}

const FlyVal *fly_builtin_tma_store_wait(FlyInterp *I, const FlyArgs *a) {
  int64_t n;
  if (!has_tma(I, a, "tma_store_wait(n)") ||
      !fly_arg_int(I, a, 0, "the groups tma_store_wait leaves in flight", &n))
    return NULL;
  if (n < 0 || n > 255)
    return fly_err(I, a->node[0], "tma_store_wait leaves 0 to 255 groups in flight, not %" PRId64,
                   n);
  return fly_emit_effect(I, FLY_OPCODE_TMA_STORE_WAIT, 1, a->v, a->call) ? fly_val_none() : NULL;
}
