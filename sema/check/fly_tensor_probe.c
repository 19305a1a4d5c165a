/* fly_tensor_probe.c — the layout algebra on a tensor whose shape is known
 * at compile time but some of whose strides are given at launch.
 *
 * Divides, compositions and partitions use a layout's shape to decide the
 * structure of the result and only multiply its strides: every stride of
 * the result is c * d, for an integer c and one stride d of the input (or a
 * static integer). So the algebra runs on the layout with each runtime
 * stride replaced by a probe, p_j * 2^24 with p_j a prime near 2^13, and a
 * result stride decodes as static (below 2^24) or c * (runtime stride j).
 *
 * Probes are chosen so that no coincidence can merge modes that CuTe, not
 * knowing a dynamic stride, keeps apart: s * d0 == d1 cannot hold between a
 * probe and anything smaller than 2^24, nor between two distinct probes.
 * Where a probe cannot decode (a static stride too large, too many runtime
 * strides, an ambiguous multiple), the caller falls back to following the
 * structure alone. */
#include <string.h>

#include "fly_builtins.h"

#define PROBE_UNIT ((int64_t)1 << 24)

static const int64_t primes[FLY_PROBE_MAX] = {8191, 8209, 8219, 8221, 8231, 8233, 8237, 8243,
                                              8263, 8269, 8273, 8287, 8291, 8293, 8297, 8311};

static FlyTuple *probe_strides(FlyInterp *I, const FlyVal *v, FlyProbe *p) {
  if (v->kind == FLY_V_INT) {
    int64_t d = v->i;
    return d > -PROBE_UNIT && d < PROBE_UNIT ? fly_tuple_int(&I->A, d) : NULL;
  }
  if (v->kind == FLY_V_RUNTIME) {
    if (p->n == FLY_PROBE_MAX)
      return NULL;
    p->leaf[p->n] = v;
    return fly_tuple_int(&I->A, primes[p->n++] * PROBE_UNIT);
  }
  if (v->kind != FLY_V_TUPLE)
    return NULL;
  FlyTuple **e = fly_alloc(&I->A, sizeof *e * (size_t)(v->n ? v->n : 1));
  if (!e)
    return NULL;
  for (int i = 0; i < v->n; i++)
    if (!(e[i] = probe_strides(I, v->elems[i], p)))
      return NULL;
  return fly_tuple_seq(&I->A, v->n, e);
}

const FlyLayout *fly_tensor_probe(FlyInterp *I, const FlyTensor *t, FlyProbe *p) {
  p->n = 0;
  const FlyLayout *L = fly_tensor_static_layout(I, t);
  if (L || !fly_val_is_static(t->shape))
    return L;
  FlyTuple *shape = fly_val_to_tuple(I, t->shape, NULL, "a shape");
  FlyTuple *stride = shape ? probe_strides(I, t->stride, p) : NULL;
  return stride ? fly_layout_make(&I->A, shape, stride) : NULL;
}

typedef struct Decoding {
  const FlyProbe *p;
  const FlyNode *at;
  bool failed;
  bool emit; /* the second pass, once all strides decode: emit their code */
} Decoding;

/* One stride of a result: static, a runtime stride of the input, or a new
   runtime value (a multiple of one). */
static const FlyVal *decode(FlyInterp *I, int64_t d, Decoding *dc) {
  if (d > -PROBE_UNIT && d < PROBE_UNIT)
    return fly_val_int(&I->A, d, NULL);
  int found = -1;
  int64_t c = 0;
  if (d % PROBE_UNIT == 0)
    for (int j = 0; j < dc->p->n; j++)
      if ((d / PROBE_UNIT) % primes[j] == 0) {
        if (found >= 0) /* a multiple of two probes: ambiguous */
          found = -2;
        else
          found = j, c = d / PROBE_UNIT / primes[j];
      }
  if (found < 0) {
    dc->failed = true;
    return fly_val_int(&I->A, 0, NULL);
  }
  if (c == 1)
    return dc->p->leaf[found];
  FlyOrigin o = {dc->at, "a stride given at launch, times a number known at compile time"};
  const FlyVal *r = fly_val_runtime(&I->A, fly_type_scalar(FLY_TYPE_I32), o);
  if (!dc->emit)
    return r;
  const FlyVal *args[2] = {dc->p->leaf[found], fly_val_int(&I->A, c, NULL)};
  return fly_emit_value(I, r, FLY_OPCODE_MUL, 2, args, dc->at);
}

static const FlyVal *decode_tuple(FlyInterp *I, const FlyTuple *t, Decoding *dc) {
  if (fly_tuple_is_int(t))
    return decode(I, t->value, dc);
  const FlyVal **e = fly_alloc(&I->A, sizeof *e * (size_t)(t->n ? t->n : 1));
  if (!e)
    return NULL;
  for (int i = 0; i < t->n; i++)
    if (!(e[i] = decode_tuple(I, t->elem[i], dc)))
      return NULL;
  return fly_val_tuple(&I->A, t->n, e);
}

const FlyVal *fly_tensor_unprobe(FlyInterp *I, const FlyVal *like, const FlyLayout *R,
                                 const FlyProbe *p, const FlyNode *at) {
  const FlyVal *shape = fly_tuple_to_val(I, R->shape);
  if (!shape)
    return NULL;
  const FlyVal *stride;
  Decoding dc = {p, at, false, false};
  if (p->n == 0)
    stride = fly_tuple_to_val(I, R->stride);
  else if ((stride = decode_tuple(I, R->stride, &dc)) && !dc.failed) {
    /* Every stride decodes: now emit the code of the new ones. */
    dc.emit = true;
    stride = decode_tuple(I, R->stride, &dc);
  }
  if (!stride)
    return NULL;
  if (dc.failed) {
    /* The shape is exact; the strides are followed as runtime values. */
    FlyOrigin o = {at, "a stride given at launch"};
    stride = fly_map_leaves(I, shape, fly_leaf_runtime, &o);
  }
  return fly_tensor_like(I, like, shape, stride);
}
