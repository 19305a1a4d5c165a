/* fly_trace_vector.c — vec values: construction, elements read and written
 * at static or runtime indices, reductions, bitcast and where. */
#include "fly_trace_op.h"

bool fly_op_vec(FlyTraceOp *o) {
  FlyTrace *t = o->t;
  const FlyType *ty = o->result->type;
  MlirType rt = fly_trace_type(t, ty);
  MlirValue v[4096];
  if (o->n > 4096)
    return fly_trace_error(t, o->at, "a vector of more than 4096 elements");
  for (int i = 0; i < o->n; i++)
    if (mlirValueIsNull(v[i] = fly_trace_value(t, o->args[i], ty->elem)))
      return false;
  if (o->n == 1)
    return set_result(o, op1(o, "vector.broadcast", rt, 1, v, 0, NULL));
  return set_result(o, op1(o, "vector.from_elements", rt, o->n, v, 0, NULL));
}

/* ---- vectors --------------------------------------------------------------------------------- */

/* Up to this many elements, a runtime index selects among the elements
   (v[i]: a chain of N - 1 compares and selects; insert: one compare of a
   vector and one select), which stays in registers. NVPTX lowers a dynamic
   extractelement or insertelement through a stack slot in local memory
   (the whole vector stored, one element loaded, or the reverse); AMD's
   back end selects too, or indexes the registers when the index is the
   same in every lane. Beyond the bound, the dynamic operations are left to
   the back ends: the chain grows with N, the stack slot's round trip does
   not. 16 bounds the chain's length; it is a choice, not a measurement. */
enum { SELECT_CHAIN_MAX = 16 };

/* vector.extract and vector.insert name their position in an attribute;
   a dynamic one is INT64_MIN there, with the index as an operand. */
static MlirNamedAttribute position(FlyTrace *t, int64_t k) {
  return fly_mlir_named(t->m, "static_position", mlirDenseI64ArrayGet(t->m->ctx, 1, &k));
}

static MlirValue extract_at(FlyTraceOp *o, MlirValue v, MlirType elem, int64_t k) {
  MlirNamedAttribute p = position(o->t, k);
  return op1(o, "vector.extract", elem, 1, &v, 1, &p);
}

/* A runtime index as an `index`, for a dynamic position. */
static MlirValue as_index(FlyTraceOp *o, const FlyVal *i) {
  MlirValue v = fly_trace_value(o->t, i, NULL);
  if (i->type->code == FLY_TYPE_INDEX || mlirValueIsNull(v))
    return v;
  return op1(o, "arith.index_cast", mlirIndexTypeGet(o->t->m->ctx), 1, &v, 0, NULL);
}

/* i == k, for a runtime integer index i. */
static MlirValue index_is(FlyTraceOp *o, MlirValue i, const FlyType *ity, int64_t k) {
  MlirValue v[2] = {i, fly_trace_constant(o->t, ity, 0, k)};
  MlirNamedAttribute eq = int_attr(o->t, "predicate", 0);
  return op1(o, "arith.cmpi", mlirIntegerTypeGet(o->t->m->ctx, 1), 2, v, 1, &eq);
}

/* v[i]: an element at a static position, or at a runtime one by a select
   chain (r = v[0], then r = i == k ? v[k] : r for each k). */
bool fly_op_extract(FlyTraceOp *o) {
  FlyTrace *t = o->t;
  const FlyVal *i = o->args[1];
  int n = o->args[0]->type->n;
  MlirValue v = fly_trace_value(t, o->args[0], NULL);
  MlirType elem = fly_trace_type(t, o->result->type);
  if (mlirValueIsNull(v))
    return false;
  if (i->kind == FLY_V_INT)
    return set_result(o, extract_at(o, v, elem, i->i));
  if (n > SELECT_CHAIN_MAX) {
    MlirValue vi[2] = {v, as_index(o, i)};
    MlirNamedAttribute p = position(t, INT64_MIN);
    return set_result(o, op1(o, "vector.extract", elem, 2, vi, 1, &p));
  }
  MlirValue idx = fly_trace_value(t, i, NULL), r = extract_at(o, v, elem, 0);
  for (int k = 1; k < n && !mlirValueIsNull(idx); k++) {
    MlirValue s[3] = {index_is(o, idx, i->type, k), extract_at(o, v, elem, k), r};
    r = op1(o, "arith.select", elem, 3, s, 0, NULL);
  }
  return set_result(o, r);
}

/* The vector (0, 1, ..., n - 1) of an integer type. */
static MlirValue iota(FlyTraceOp *o, const FlyType *ity, int n) {
  FlyTrace *t = o->t;
  MlirType vt = fly_trace_type(t, fly_type_vec(&t->A, n, ity));
  MlirType et = fly_trace_type(t, ity);
  MlirAttribute *e = fly_alloc(&t->A, sizeof *e * (size_t)n);
  if (!e)
    return (MlirValue){NULL};
  for (int k = 0; k < n; k++)
    e[k] = mlirIntegerAttrGet(et, k);
  MlirNamedAttribute value = fly_mlir_named(t->m, "value", mlirDenseElementsAttrGet(vt, n, e));
  return op1(o, "arith.constant", vt, 0, NULL, 1, &value);
}

/* v.insert(i, x): at a static position, or at a runtime one by a select
   of the vector (i, i, ...) == (0, 1, ...) between x splatted and v. */
bool fly_op_insert(FlyTraceOp *o) {
  FlyTrace *t = o->t;
  const FlyVal *i = o->args[1];
  const FlyType *vty = o->result->type;
  MlirType vt = fly_trace_type(t, vty);
  MlirValue v = fly_trace_value(t, o->args[0], NULL);
  MlirValue x = fly_trace_value(t, o->args[2], vty->elem);
  if (mlirValueIsNull(v) || mlirValueIsNull(x))
    return false;
  if (i->kind == FLY_V_INT) {
    MlirValue xv[2] = {x, v};
    MlirNamedAttribute p = position(t, i->i);
    return set_result(o, op1(o, "vector.insert", vt, 2, xv, 1, &p));
  }
  if (vty->n > SELECT_CHAIN_MAX) {
    MlirValue xvi[3] = {x, v, as_index(o, i)};
    MlirNamedAttribute p = position(t, INT64_MIN);
    return set_result(o, op1(o, "vector.insert", vt, 3, xvi, 1, &p));
  }
  const FlyType *ivty = fly_type_vec(&t->A, vty->n, i->type);
  MlirValue c[2] = {fly_trace_value(t, i, ivty), iota(o, i->type, vty->n)};
  if (mlirValueIsNull(c[0]) || mlirValueIsNull(c[1]))
    return false;
  MlirNamedAttribute eq = int_attr(t, "predicate", 0);
  MlirType mask = fly_trace_type(t, fly_type_vec(&t->A, vty->n, fly_type_scalar(FLY_TYPE_I1)));
  MlirValue s[3] = {op1(o, "arith.cmpi", mask, 2, c, 1, &eq),
                    op1(o, "vector.broadcast", vt, 1, &x, 0, NULL), v};
  return set_result(o, op1(o, "arith.select", vt, 3, s, 0, NULL));
}

/* sum(v), min(v), max(v): one vector.reduction, in element order (no
   reassociation for floats). A float sum starts from -0.0, the identity of
   addition (+0.0 would cost an add and turn a sum of -0.0 into +0.0).
   maxnumf and minnumf ignore a NaN element unless every element is one, as
   max(a, b) does. */
bool fly_op_reduction(FlyTraceOp *o, FlyOpcode op) {
  FlyTrace *t = o->t;
  const FlyType *ty = o->result->type;
  bool fl = fly_type_is_float(ty);
  const char *kind = op == FLY_OPCODE_SUM ? "#vector.kind<add>"
                     : op == FLY_OPCODE_MAX
                         ? (fl ? "#vector.kind<maxnumf>" : "#vector.kind<maxsi>")
                         : (fl ? "#vector.kind<minnumf>" : "#vector.kind<minsi>");
  MlirValue v[2] = {fly_trace_value(t, o->args[0], NULL)};
  if (mlirValueIsNull(v[0]))
    return false;
  bool acc = fl && op == FLY_OPCODE_SUM;
  if (acc)
    v[1] = fly_trace_constant(t, ty, -0.0, 0);
  MlirNamedAttribute k = parsed_attr(t, "kind", kind);
  return set_result(o, op1(o, "vector.reduction", fly_trace_type(t, ty), acc ? 2 : 1, v, 1, &k));
}

/* bitcast(x, T): arith.bitcast where the shapes agree, vector.bitcast
   between vecs of other lengths; a scalar goes through a vector of one
   element. */
bool fly_op_bitcast(FlyTraceOp *o) {
  FlyTrace *t = o->t;
  const FlyVal *x = o->args[0];
  const FlyType *from = x->type, *to = o->result->type;
  MlirValue v = fly_trace_value(t, x, from);
  if (mlirValueIsNull(v))
    return false;
  bool vfrom = from->kind == FLY_TY_VEC, vto = to->kind == FLY_TY_VEC;
  if (vfrom == vto && (!vfrom || from->n == to->n))
    return set_result(o, op1(o, "arith.bitcast", fly_trace_type(t, to), 1, &v, 0, NULL));
  if (!vfrom)
    v = op1(o, "vector.from_elements", fly_trace_type(t, fly_type_vec(&t->A, 1, from)), 1, &v, 0,
            NULL);
  const FlyType *vec_to = vto ? to : fly_type_vec(&t->A, 1, to);
  v = op1(o, "vector.bitcast", fly_trace_type(t, vec_to), 1, &v, 0, NULL);
  return set_result(o, vto ? v : extract_at(o, v, fly_trace_type(t, to), 0));
}

/* where(c, a, b): arith.select, element by element for a mask; scalar
   values are splatted to the result's vec. */
bool fly_op_where(FlyTraceOp *o) {
  FlyTrace *t = o->t;
  const FlyType *ty = o->result->type;
  MlirValue v[3] = {fly_trace_value(t, o->args[0], NULL), fly_trace_value(t, o->args[1], ty),
                    fly_trace_value(t, o->args[2], ty)};
  for (int k = 0; k < 3; k++)
    if (mlirValueIsNull(v[k]))
      return false;
  return set_result(o, op1(o, "arith.select", fly_trace_type(t, ty), 3, v, 0, NULL));
}
