/* fly_trace_tma.c — TMA's tensor maps and copies (sema/check/fly_builtins_tma.c).
 *
 * Each map is an argument of the kernel after its parameters' arguments,
 * in the order the maps are made: a !llvm.ptr to the 128-byte CUtensorMap
 * the runtime passes by value. The gpu.func lists them in its
 * `fly.tensor_maps` attribute, from which the pipeline makes them byval
 * grid constants once the function is an llvm.func (fly_lower_tma.c).
 * Copies become fly.tma_load and fly.tma_store with the box's coordinate
 * in the hardware's order, innermost dimension first. */

#include "fly_trace_op.h"

static MlirStringRef ref(const char *s) { return mlirStringRefCreateFromCString(s); }

/* Appends one !llvm.ptr argument to the kernel: its block argument, its
   function type, and its place in fly.tensor_maps. */
static MlirValue add_map_arg(FlyTrace *t) {
  MlirType ptr = fly_mlir_type(t->m, "!llvm.ptr");
  MlirBlock entry = mlirRegionGetFirstBlock(mlirOperationGetRegion(t->func, 0));
  MlirValue arg = mlirBlockAddArgument(entry, ptr, mlirOperationGetLocation(t->func));
  MlirAttribute ft = mlirOperationGetAttributeByName(t->func, ref("function_type"));
  MlirType fn = mlirTypeAttrGetValue(ft);
  intptr_t n = mlirFunctionTypeGetNumInputs(fn);
  MlirType in[512]; /* more than a kernel has (the runtime takes 256) */
  if (n >= (intptr_t)(sizeof in / sizeof *in))
    return (MlirValue){NULL};
  for (intptr_t i = 0; i < n; i++)
    in[i] = mlirFunctionTypeGetInput(fn, i);
  in[n] = ptr;
  MlirType nft = mlirFunctionTypeGet(t->m->ctx, n + 1, in, 0, NULL);
  mlirOperationSetInherentAttributeByName(t->func, ref("function_type"), mlirTypeAttrGet(nft));
  int32_t idx[FLY_TMAP_MAX_MAPS];
  int k = 0;
  MlirAttribute old = mlirOperationGetAttributeByName(t->func, ref("fly.tensor_maps"));
  for (intptr_t i = 0; !mlirAttributeIsNull(old) && i < mlirDenseArrayGetNumElements(old); i++)
    idx[k++] = mlirDenseI32ArrayGetElement(old, i);
  idx[k++] = (int32_t)n;
  mlirOperationSetDiscardableAttributeByName(t->func, ref("fly.tensor_maps"),
                                             mlirDenseI32ArrayGet(t->m->ctx, k, idx));
  return arg;
}

/* The argument of map `index`, made with those before it if need be (a map
   the interpreter made where nothing was traced keeps its place). */
static MlirValue map_arg(FlyTraceOp *o, const FlyVal *map) {
  FlyTrace *t = o->t;
  int index = map->object.tmap->index;
  while (t->ntmaps <= index) {
    MlirValue v = add_map_arg(t);
    if (mlirValueIsNull(v)) {
      fly_trace_error(t, o->at, "internal error: too many kernel arguments for a tensor map");
      return v;
    }
    t->tmaps[t->ntmaps++] = v;
  }
  return t->tmaps[index];
}

/* fly.tma_load(map, bar, tile, c...), fly.tma_load_multicast(map, bar,
   tile, mask, c...) or fly.tma_store(map, tile, c...): `first` operands,
   then the coordinate, which the interpreter gives in the tensor's mode
   order, in the hardware's. A multicast's mask, an i32, is cut to the
   instruction's i16. */
static bool copy(FlyTraceOp *o, const char *name, int first, bool multicast) {
  FlyTrace *t = o->t;
  const FlyTensorMap *m = o->args[0]->object.tmap;
  MlirValue v[4 + FLY_TMAP_MAX_RANK];
  v[0] = map_arg(o, o->args[0]);
  for (int i = 1; i < first; i++)
    v[i] = multicast && i == 3 ? fly_trace_value(t, o->args[i], fly_type_scalar(FLY_TYPE_I32))
                               : fly_trace_handle(t, o->args[i]);
  if (multicast && !mlirValueIsNull(v[3]))
    v[3] = op1(o, "arith.trunci", mlirIntegerTypeGet(t->m->ctx, 16), 1, &v[3], 0, NULL);
  for (int i = 0; i < m->rank; i++)
    v[first + i] = fly_trace_value(t, o->args[first + m->dims[i]], fly_type_scalar(FLY_TYPE_I32));
  for (int i = 0; i < first + m->rank; i++)
    if (mlirValueIsNull(v[i]))
      return fly_trace_error(t, o->at, "internal error: a TMA copy without its operands");
  fly_mlir_op(t->m, t->ip, t->loc, name, 0, NULL, first + m->rank, v, 0, NULL, 0, NULL);
  return !t->failed;
}

bool fly_op_tma(FlyTraceOp *o, FlyOpcode op) {
  FlyTrace *t = o->t;
  switch (op) {
  case FLY_OPCODE_TENSOR_MAP:
    return !mlirValueIsNull(map_arg(o, o->args[0]));
  case FLY_OPCODE_TMA_LOAD:
    return copy(o, "fly.tma_load", 3, false);
  case FLY_OPCODE_TMA_LOAD_MULTICAST:
    return copy(o, "fly.tma_load_multicast", 4, true);
  case FLY_OPCODE_TMA_STORE:
    return copy(o, "fly.tma_store", 2, false);
  case FLY_OPCODE_TMA_STORE_COMMIT:
    fly_mlir_op(t->m, t->ip, t->loc, "nvvm.cp.async.bulk.commit.group", 0, NULL, 0, NULL, 0, NULL,
                0, NULL);
    return true;
  case FLY_OPCODE_TMA_STORE_WAIT: {
    MlirNamedAttribute a[2] = {
        fly_mlir_named(t->m, "group",
                       mlirIntegerAttrGet(mlirIntegerTypeGet(t->m->ctx, 32), o->args[0]->i)),
        fly_mlir_named(t->m, "read", mlirUnitAttrGet(t->m->ctx))};
    fly_mlir_op(t->m, t->ip, t->loc, "nvvm.cp.async.bulk.wait_group", 0, NULL, 0, NULL, 2, a, 0,
                NULL);
    return true;
  }
  default:
    return fly_trace_error(t, o->at, "internal error: opcode %d is not a TMA operation", (int)op);
  }
}
