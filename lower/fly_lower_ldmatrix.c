/* fly_lower_ldmatrix.c — the warp-wide matrix copies of the target pass:
 * ldmatrix (sm_80 and later) and stmatrix (sm_90), as NVVM's
 * nvvm.ldmatrix and nvvm.stmatrix on 8x8 matrices of b16 (the atoms'
 * features keep every other target from reaching here). Which elements
 * go where is the tiled copy's business (fly_builtins_matrix.c); here one
 * instruction takes a lane's row address and moves one i32 (two 16-bit
 * elements) a matrix. */
#include <stdio.h>

#include "fly_atom.h"
#include "fly_lower_target.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

bool fly_lower_matrix_shape(FlyBuild *b, const FlyAtom *atom, int *matrices, bool *trans) {
  /* The register side says both: a lane holds 2 elements a matrix, and
     lane 1's first element is the next column pair (2) or, transposed,
     two rows down (16). */
  const char *text = atom->copy == FLY_COPY_STMATRIX ? atom->src_tv : atom->dst_tv;
  FlyLayout *L = text ? fly_build_layout(b, text, NULL, 0) : NULL;
  FlyLayout *v = L ? fly_layout_get(b->A, L, 1) : NULL;
  int64_t n, x;
  if (!v || !fly_layout_size(b->A, v, &n) || !fly_layout_eval(b->A, L, 1, &x)) {
    fly_build_error(b, "internal error: the atom %s has no register layout", atom->name);
    return false;
  }
  *matrices = (int)(n / 2);
  *trans = x != 2;
  return true;
}

static void matrix_attrs(FlyBuild *b, bool trans, MlirNamedAttribute *a) {
  a[0] = fly_mlir_named(
      b->m, "layout", fly_build_attr(b, trans ? "#nvvm.mma_layout<col>" : "#nvvm.mma_layout<row>"));
  a[1] = fly_mlir_named(b->m, "shape", fly_build_attr(b, "#nvvm.ld_st_matrix_shape<m = 8, n = 8>"));
  a[2] = fly_mlir_named(b->m, "eltType", fly_build_attr(b, "#nvvm.ld_st_matrix_elt_type<b16>"));
}

bool fly_lower_ldmatrix(FlyBuild *b, MlirValue row, int matrices, bool trans, MlirValue *out) {
  MlirNamedAttribute a[4];
  matrix_attrs(b, trans, a);
  a[3] = fly_mlir_named(b->m, "num", mlirIntegerAttrGet(b->i32, matrices));
  MlirType rt = b->i32;
  if (matrices > 1) {
    char text[64];
    snprintf(text, sizeof text, "!llvm.struct<(i32%s%s%s)>", ", i32", matrices > 2 ? ", i32" : "",
             matrices > 2 ? ", i32" : "");
    rt = fly_mlir_type(b->m, text);
  }
  MlirValue r = fly_build_op1(b, "nvvm.ldmatrix", rt, 1, &row, 4, a);
  for (int q = 0; q < matrices; q++) {
    if (matrices == 1) {
      out[q] = r;
      continue;
    }
    char pos[32];
    snprintf(pos, sizeof pos, "array<i64: %d>", q);
    MlirNamedAttribute p = fly_mlir_named(b->m, "position", fly_build_attr(b, pos));
    out[q] = fly_build_op1(b, "llvm.extractvalue", b->i32, 1, &r, 1, &p);
  }
  return !b->failed;
}

bool fly_lower_stmatrix(FlyBuild *b, MlirValue row, int matrices, bool trans, const MlirValue *in) {
  MlirNamedAttribute a[3];
  matrix_attrs(b, trans, a);
  MlirValue ops[5] = {row};
  for (int q = 0; q < matrices && q < 4; q++)
    ops[q + 1] = in[q];
  fly_mlir_op(b->m, b->ip, b->loc, "nvvm.stmatrix", 0, NULL, matrices + 1, ops, 3, a, 0, NULL);
  return !b->failed;
}
