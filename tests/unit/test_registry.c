/* test_registry.c — the tables every layer reads: the atoms
 * (fly_atoms.def), the builtins and opcodes (fly_ops.def), and how they
 * answer what tools and messages ask of them. (The targets are tested in
 * test_interp.c, beside the semantic pass that uses them.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "fly_algebra.h"
#include "fly_atom.h"
#include "fly_builtin_info.h"
#include "fly_emit.h"
#include "fly_layout.h"
#include "fly_layout_text.h"

static void atoms_are_found_by_name(void **state) {
  (void)state;
  const FlyAtom *a = fly_atom_find("nv.mma_sync_16x8x16", 19);
  assert_non_null(a);
  assert_int_equal(a->id, FLY_ATOM_NV_MMA_SYNC_16X8X16);
  assert_int_equal(a->kind, FLY_ATOM_MMA);
  assert_int_equal(a->mma, FLY_MMA_NV_MMA_SYNC);
  assert_int_equal(fly_atom_vendor(a), FLY_VENDOR_NVIDIA);
  assert_ptr_equal(fly_atom_find_in("nv", "mma_sync_16x8x16", 16), a);
  assert_null(fly_atom_find_in("amd", "mma_sync_16x8x16", 16));
  assert_null(fly_atom_find("nv.mma_sync", 11));
  const FlyAtom *u = fly_atom_find("universal", 9);
  assert_non_null(u);
  assert_int_equal(u->kind, FLY_ATOM_COPY);
  assert_int_equal(fly_atom_vendor(u), -1);
  assert_true((u->widths >> 7) & 1u); /* 128 bits */
  assert_false((u->widths >> 8) & 1u);
}

static void atoms_run_where_their_family_is(void **state) {
  (void)state;
  const FlyAtom *mfma = fly_atom_find("amd.mfma_16x16x16", 17);
  assert_true(fly_atom_available(mfma, fly_target_find("gfx942")));
  assert_false(fly_atom_available(mfma, fly_target_find("gfx1201")));
  assert_false(fly_atom_available(mfma, fly_target_find("sm_90")));
  assert_string_equal(fly_atom_targets(mfma), "gfx90a, gfx942, gfx950");
  const FlyAtom *u = fly_atom_find("universal", 9);
  for (int i = 0; fly_target_at(i); i++)
    assert_true(fly_atom_available(u, fly_target_at(i)));
  assert_true(fly_atom_takes(mfma, FLY_TYPE_BF16));
  assert_false(fly_atom_takes(mfma, FLY_TYPE_F32));
  /* Only the fp8 atoms (wgmma's, MFMA's) take A and B of different types. */
  for (int i = 0; fly_atom_at(i); i++) {
    const FlyAtom *a = fly_atom_at(i);
    bool fp8 = a->kind == FLY_ATOM_MMA &&
               (fly_atom_takes(a, FLY_TYPE_F8E5M2) || fly_atom_takes(a, FLY_TYPE_F8E5M2FNUZ));
    assert_int_equal(a->mixes, fp8);
  }
  /* The later chips' MFMA: the family and a feature. */
  const FlyAtom *k32 = fly_atom_find("amd.mfma_16x16x32", 17);
  assert_true(fly_atom_available(k32, fly_target_find("gfx950")));
  assert_false(fly_atom_available(k32, fly_target_find("gfx942")));
  assert_false(fly_atom_available(k32, fly_target_find("gfx1201")));
  assert_string_equal(fly_atom_targets(k32), "gfx950");
  const FlyAtom *i8 = fly_atom_find("amd.mfma_16x16x32_i8", 20);
  assert_true(fly_atom_available(i8, fly_target_find("gfx942")));
  assert_false(fly_atom_available(i8, fly_target_find("gfx90a")));
  assert_string_equal(fly_atom_targets(i8), "gfx942, gfx950");
  assert_int_equal(i8->acc, FLY_TYPE_I32);
  /* 8-bit float MFMAs: OCP's formats on gfx950 only, FNUZ's on gfx942
     only (the same instruction reads one or the other). */
  const FlyAtom *ocp = fly_atom_find("amd.mfma_16x16x32_f8", 20);
  const FlyAtom *fnuz = fly_atom_find("amd.mfma_16x16x32_f8fnuz", 24);
  assert_string_equal(fly_atom_targets(ocp), "gfx950");
  assert_string_equal(fly_atom_targets(fnuz), "gfx942");
  assert_true(fly_atom_takes(fnuz, FLY_TYPE_F8E4M3FNUZ) && !fly_atom_takes(fnuz, FLY_TYPE_F8E4M3));
  assert_true(fly_atom_takes(ocp, FLY_TYPE_F8E4M3) && !fly_atom_takes(ocp, FLY_TYPE_F8E4M3FNUZ));
}

/* Every MFMA atom's A and B are CDNA's operand layout: lane l holds row
   l % M (of B: N) and depth (l / M) V + v of its V values, and C is that
   of 16x16x16 or 32x32x8, whatever the depth and the inputs: the deeper
   atoms only deepen the operands. */
static void mfma_operands_are_cdna_layouts(void **state) {
  (void)state;
  FlyAlgebra A;
  fly_algebra_init(&A);
  const FlyAtom *c16 = fly_atom_find("amd.mfma_16x16x16", 17);
  const FlyAtom *c32 = fly_atom_find("amd.mfma_32x32x8", 16);
  int checked = 0;
  for (int i = 0; fly_atom_at(i); i++) {
    const FlyAtom *a = fly_atom_at(i);
    if (a->kind != FLY_ATOM_MMA || a->mma != FLY_MMA_AMD_MFMA)
      continue;
    for (int op = 0; op < 2; op++) {
      int rows = op == 0 ? a->m : a->n, v_per = rows * a->k / 64;
      FlyLayout *l = fly_parse_layout(&A, a->tv[op], strlen(a->tv[op]));
      assert_non_null(l);
      for (int64_t t = 0; t < 64; t++)
        for (int64_t v = 0; v < v_per; v++) {
          int64_t at;
          assert_true(fly_layout_eval(&A, l, t + 64 * v, &at));
          assert_int_equal(at % rows, t % rows);               /* the row */
          assert_int_equal(at / rows, (t / rows) * v_per + v); /* the depth */
        }
    }
    assert_string_equal(a->tv[2], (a->m == 16 ? c16 : c32)->tv[2]);
    checked++;
  }
  assert_int_equal(checked, 14);
  fly_algebra_release(&A);
}

/* Every MMA atom's TV layouts cover its tiles: threads x values is M x K,
   N x K and M x N, which the partitions and the lowering rely on. */
static void atom_shapes_are_consistent(void **state) {
  (void)state;
  for (int i = 0; fly_atom_at(i); i++) {
    const FlyAtom *a = fly_atom_at(i);
    if (a->kind != FLY_ATOM_MMA)
      continue;
    assert_int_equal(a->m * a->k % a->threads, 0);
    assert_int_equal(a->n * a->k % a->threads, 0);
    assert_int_equal(a->m * a->n % a->threads, 0);
    for (int k = 0; k < 3; k++)
      assert_non_null(a->tv[k]);
    /* A warp, a wavefront (RDNA's WMMA: of 32), or for wgmma a warpgroup of
       4 warps. */
    int want = a->mma == FLY_MMA_NV_WGMMA                               ? 128
               : fly_target_has_mma(fly_target_find("sm_90"), a->mma)   ? 32
               : fly_target_has_mma(fly_target_find("gfx1201"), a->mma) ? 32
                                                                        : 64;
    assert_int_equal(a->threads, want);
  }
}

/* A copy atom has source and destination TV layouts exactly when a warp
   makes it together (ldmatrix, stmatrix), and those need a feature. */
static void warp_copies_have_layouts(void **state) {
  (void)state;
  for (int i = 0; fly_atom_at(i); i++) {
    const FlyAtom *a = fly_atom_at(i);
    if (a->kind != FLY_ATOM_COPY)
      continue;
    assert_int_equal(a->src_tv != NULL, fly_atom_is_matrix(a));
    assert_int_equal(a->dst_tv != NULL, fly_atom_is_matrix(a));
    if (fly_atom_is_matrix(a)) {
      assert_true(a->feature >= 0);
      assert_int_equal(a->widths, 1u << 7);
    }
  }
}

/* MFMA 16x16x16's accumulator is, value for value, its B operand with the
   accumulator's rows as depth: lane l holds column l % 16 of C and rows
   4 (l / 16) + v, and of B (N x K) row l % 16, depth 4 (l / 16) + v. The
   AMD attention kernel (flash_attn_mfma.fly) computes S^T = K Q^T and
   feeds its registers as P^T to O^T = V^T P^T on this, and takes a
   query's column sums over lanes l ^ 16 and l ^ 32. */
static void mfma_accumulator_is_its_b_operand(void **state) {
  (void)state;
  const FlyAtom *a = fly_atom_find("amd.mfma_16x16x16", 17);
  FlyAlgebra A;
  fly_algebra_init(&A);
  FlyLayout *b = fly_parse_layout(&A, a->tv[1], strlen(a->tv[1]));
  FlyLayout *c = fly_parse_layout(&A, a->tv[2], strlen(a->tv[2]));
  assert_non_null(b);
  assert_non_null(c);
  for (int64_t t = 0; t < 64; t++) {
    for (int64_t v = 0; v < 4; v++) {
      int64_t ib, ic;
      assert_true(fly_layout_eval(&A, b, t + 64 * v, &ib));
      assert_true(fly_layout_eval(&A, c, t + 64 * v, &ic));
      /* Column-major: C (M, N) at m + 16 n; B (N, K) at n + 16 k. */
      assert_int_equal(ic % 16, ib / 16); /* C's row is B's depth */
      assert_int_equal(ic / 16, ib % 16); /* C's column is B's row */
      assert_int_equal(ic / 16, t % 16);  /* a column, lanes l % 16 */
    }
  }
  fly_algebra_release(&A);
}

static void builtins_are_listed_once(void **state) {
  (void)state;
  int functions = 0, runtime = 0;
  for (int i = 0; fly_builtin_info_at(i); i++) {
    const FlyBuiltinInfo *b = fly_builtin_info_at(i);
    for (int j = 0; j < i; j++)
      assert_string_not_equal(fly_builtin_info_at(j)->name, b->name);
    assert_true(b->group < FLY_GROUP_COUNT);
    assert_true(strlen(b->doc) > 0);
    functions += b->kind == FLY_WORD_FUNCTION;
    runtime += b->runtime;
    /* A function's usage starts with its name (as a call or a method). */
    if (b->kind == FLY_WORD_FUNCTION)
      assert_non_null(strstr(b->usage, b->name));
  }
  assert_true(functions > 60);
  assert_true(runtime > 20);
  assert_string_equal(fly_group_title(FLY_GROUP_ALGEBRA), "layout algebra");
}

static void opcodes_have_names(void **state) {
  (void)state;
  assert_string_equal(fly_opcode_name(FLY_OPCODE_EXP), "exp");
  assert_string_equal(fly_opcode_name(FLY_OPCODE_PARTITION_S), "partition_S");
  assert_string_equal(fly_opcode_name(FLY_OPCODE_ADD), "+");
  assert_string_equal(fly_opcode_name(FLY_OPCODE_INDEX), "INDEX");
  assert_int_equal(fly_opcode_of_operator(FLY_OP_SHL), FLY_OPCODE_SHL);
  assert_int_equal(fly_opcode_of_operator(FLY_OP_BITNOT), FLY_OPCODE_BITNOT);
  assert_string_equal(fly_opcode_name(FLY_OPCODE_COUNT), "?");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(atoms_are_found_by_name),
      cmocka_unit_test(atoms_run_where_their_family_is),
      cmocka_unit_test(atom_shapes_are_consistent),
      cmocka_unit_test(warp_copies_have_layouts),
      cmocka_unit_test(mfma_accumulator_is_its_b_operand),
      cmocka_unit_test(mfma_operands_are_cdna_layouts),
      cmocka_unit_test(builtins_are_listed_once),
      cmocka_unit_test(opcodes_have_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
