/* fly_lower_async.c — asynchronous copies and mbarriers of the target
 * pass (an arrival on another block's mbarrier through its cluster address
 * included). cp.async
 * (NVIDIA sm_80 and later; the atoms' feature keeps every other target from
 * reaching here), as NVVM's cp.async.shared.global. A copy's runs of
 * contiguous, aligned elements (fly_lower_memory.c) become one cp.async of
 * 4, 8 or 16 bytes each. A masked run is either skipped (a branch) or, with
 * fill = 0, copied with a source size of 0 bytes, which the instruction
 * fills with zeros: no branch, and the shared tile holds zeros where the
 * source ends, which is what an MMA over a partial tile wants. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_atom.h"
#include "fly_lower_target.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

bool fly_lower_cp_async(FlyBuild *b, const FlyAtom *atom, MlirValue to, MlirValue from, int bytes,
                        MlirValue p, bool zero_fill) {
  if (bytes != 4 && bytes != 8 && bytes != 16) {
    fly_build_error(b,
                    "%s moves 4, 8 or 16 bytes at a time, but this copy has a run of %d "
                    "contiguous, aligned bytes: copy whole 4-byte words, or use universal",
                    atom->name, bytes);
    return false;
  }
  bool cg = atom->id == FLY_ATOM_NV_CP_ASYNC_CG;
  MlirNamedAttribute attrs[2] = {
      fly_mlir_named(b->m, "modifier",
                     fly_build_attr(b, cg ? "#nvvm<load_cache_modifier cg>"
                                          : "#nvvm<load_cache_modifier ca>")),
      fly_mlir_named(b->m, "size", mlirIntegerAttrGet(b->i32, bytes))};
  if (mlirValueIsNull(p) || zero_fill) {
    MlirValue ops[3] = {to, from, {NULL}};
    int n = 2;
    if (!mlirValueIsNull(p)) {
      /* The bytes read: all of them, or none (zeros written). */
      char text[16];
      snprintf(text, sizeof text, "%d", bytes);
      MlirValue sel[3] = {p, fly_build_constant(b, b->i32, text),
                          fly_build_constant(b, b->i32, "0")};
      ops[n++] = fly_build_op1(b, "arith.select", b->i32, 3, sel, 0, NULL);
    }
    fly_mlir_op(b->m, b->ip, b->loc, "nvvm.cp.async.shared.global", 0, NULL, n, ops, 2, attrs, 0,
                NULL);
    return !b->failed;
  }
  /* Masked and not filled: the copy happens only where p holds. */
  MlirRegion r = mlirRegionCreate();
  MlirBlock blk = mlirBlockCreate(0, NULL, NULL);
  mlirRegionAppendOwnedBlock(r, blk);
  FlyBuild in = *b;
  in.ip = (FlyInsert){blk, {NULL}};
  MlirValue ops[2] = {to, from};
  fly_mlir_op(b->m, in.ip, b->loc, "nvvm.cp.async.shared.global", 0, NULL, 2, ops, 2, attrs, 0,
              NULL);
  fly_mlir_op(b->m, in.ip, b->loc, "scf.yield", 0, NULL, 0, NULL, 0, NULL, 0, NULL);
  MlirRegion regions[2] = {r, mlirRegionCreate()};
  fly_mlir_op(b->m, b->ip, b->loc, "scf.if", 0, NULL, 1, &p, 0, NULL, 2, regions);
  return !b->failed;
}

void fly_lower_mbarrier(FlyBuild *b, MlirOperation op) {
  FlyMemDesc d;
  if (!fly_memdesc_of(b, mlirOperationGetOperand(op, 0), &d))
    return;
  MlirValue bar = fly_lower_element_ptr(b, &d);
  fly_memdesc_free(&d);
  if (mlirValueIsNull(bar))
    return;
  char *kind = fly_lower_str_attr(op, "kind");
  MlirValue x =
      mlirOperationGetNumOperands(op) > 1 ? mlirOperationGetOperand(op, 1) : (MlirValue){NULL};
  MlirValue ops[3] = {bar, x, {NULL}};
  if (kind && strcmp(kind, "init") == 0) {
    fly_mlir_op(b->m, b->ip, b->loc, "nvvm.mbarrier.init", 0, NULL, 2, ops, 0, NULL, 0, NULL);
  } else if (kind && strcmp(kind, "arrive") == 0) {
    fly_build_op1(b, "nvvm.mbarrier.arrive", mlirIntegerTypeGet(b->m->ctx, 64), 1, ops, 0, NULL);
  } else if (kind && strcmp(kind, "arrive_remote") == 0) {
    /* mapa.shared::cluster to block x's copy of the barrier, then
       mbarrier.arrive.shared::cluster.b64 (no state: a remote arrival
       returns none). Its release is PTX's default, the block's scope: a
       release at the cluster's would fence every arrival with a MEMBAR
       the arriving warp waits on (a Hopper GEMM releasing each stage to
       its cluster ran at 60% of its speed with one). */
    MlirValue mapa[2] = {bar, x};
    MlirValue remote =
        fly_build_op1(b, "nvvm.mapa", fly_mlir_type(b->m, "!llvm.ptr<7>"), 2, mapa, 0, NULL);
    fly_mlir_op(b->m, b->ip, b->loc, "nvvm.mbarrier.arrive", 0, NULL, 1, &remote, 0, NULL, 0, NULL);
  } else if (kind && strcmp(kind, "arrive_expect_tx") == 0) {
    fly_mlir_op(b->m, b->ip, b->loc, "nvvm.mbarrier.arrive.expect_tx", 0, NULL, 2, ops, 0, NULL, 0,
                NULL);
  } else if (kind && strcmp(kind, "wait") == 0) {
    /* No time limit hint: the hardware's own. */
    ops[2] = fly_build_constant(b, b->i32, "0");
    fly_mlir_op(b->m, b->ip, b->loc, "nvvm.mbarrier.try_wait.parity", 0, NULL, 3, ops, 0, NULL, 0,
                NULL);
  } else {
    fly_build_error(b, "internal error: an mbarrier operation of kind '%s'", kind ? kind : "?");
  }
  free(kind);
  if (!b->failed)
    mlirOperationDestroy(op);
}
