/* fly_lower_swizzle.c — addresses in swizzled shared memory
 * (fly_lower_target.h).
 *
 * Element c of a view of a swizzled tile is at base + swizzle(x + L(c)),
 * x the view's offset in the tile (fly_lower_build.h). A copy asks for
 * many elements whose offsets are one runtime part x and constants c, so
 * the work splits along what is known of x (fly_swizzle_split): when x is
 * a multiple of 2^k, swizzle(x + c) is swizzle(x + hi) ^ flip plus
 * constants, the runtime part shared by every c of the same hi and flip.
 * So a tile whose view offsets are multiples of the swizzle's period costs
 * no instruction at all; otherwise each run of 2^j elements costs one
 * swizzle of its start (a shift, an and, an xor), and the elements inside
 * it are constant steps from it, as the vector accesses of
 * fly_lower_memory.c and the proof of their alignment (fly_lower_align.c)
 * want. */
#include "fly_lower_target.h"

/* swizzle(x) on an i32 value: x ^ ((x >> S) & ZZZ), or << for S < 0. */
static MlirValue emit_swizzle(FlyBuild *b, MlirValue x, FlySwizzle s) {
  if (s.bits == 0)
    return x;
  int64_t zzz = (((int64_t)1 << s.bits) - 1) << (s.base + (s.shift < 0 ? -s.shift : 0));
  MlirValue sh[2] = {x, fly_build_i32(b, s.shift > 0 ? s.shift : -s.shift)};
  MlirValue moved =
      fly_build_op1(b, s.shift > 0 ? "arith.shrui" : "arith.shli", b->i32, 2, sh, 0, NULL);
  MlirValue mask[2] = {moved, fly_build_i32(b, zzz)};
  MlirValue masked = fly_build_op1(b, "arith.andi", b->i32, 2, mask, 0, NULL);
  MlirValue flip[2] = {x, masked};
  return fly_build_op1(b, "arith.xori", b->i32, 2, flip, 0, NULL);
}

/* The largest k (up to the period) with x a multiple of 2^k. */
static int known_multiple(FlyBuild *b, FlySwizzle s, MlirValue x) {
  for (int k = fly_swizzle_top(s); k > 0; k--)
    if (fly_lower_multiple(b, x, (int64_t)1 << k))
      return k;
  return 0;
}

/* x + c with the constants x adds moved into c (a view's offset is often
   a runtime start plus a constant, as s[i, 3] is). */
static FlySym peel(FlySym x, int64_t *c) {
  while (!fly_sym_is_const(x)) {
    MlirValue v = {x.v};
    if (!mlirValueIsAOpResult(v) || !fly_lower_is(mlirOpResultGetOwner(v), "arith.addi"))
      break;
    MlirOperation add = mlirOpResultGetOwner(v);
    int64_t k;
    int i = fly_lower_constant_of(mlirOperationGetOperand(add, 0), &k)   ? 0
            : fly_lower_constant_of(mlirOperationGetOperand(add, 1), &k) ? 1
                                                                         : -1;
    if (i < 0)
      break;
    *c += k;
    x = fly_sym_of(mlirOperationGetOperand(add, 1 - i));
  }
  return x;
}

MlirValue fly_build_swizzled_ptr(FlyBuild *b, FlySwizzledPtrs *p, FlySym x, int64_t c) {
  x = peel(x, &c);
  if (fly_sym_is_const(x))
    return fly_build_gep(b, p->base, p->elem, fly_sym_const(fly_swizzle_apply(p->s, x.c + c)));
  if (x.v != p->known_x) {
    p->known_x = x.v;
    p->known_k = known_multiple(b, p->s, (MlirValue){x.v});
  }
  FlySwizzleSplit sp = fly_swizzle_split(p->s, p->known_k, c);
  int hit = -1;
  for (int i = 0; i < p->n; i++)
    if (p->key[i].x == x.v && p->key[i].hi == sp.hi && p->key[i].flip == sp.flip)
      hit = i;
  if (hit < 0) {
    FlySymOps o = fly_build_ops(b);
    MlirValue X = fly_build_sym(b, fly_sym_add(&o, x, fly_sym_const(sp.hi)));
    MlirValue sx = p->known_k >= fly_swizzle_top(p->s) ? X : emit_swizzle(b, X, p->s);
    if (sp.flip) {
      MlirValue v[2] = {sx, fly_build_i32(b, sp.flip)};
      sx = fly_build_op1(b, "arith.xori", b->i32, 2, v, 0, NULL);
    }
    hit = p->next;
    p->key[hit].x = x.v;
    p->key[hit].hi = sp.hi;
    p->key[hit].flip = sp.flip;
    p->val[hit] = fly_build_gep(b, p->base, p->elem, fly_sym_of(sx));
    p->next = (p->next + 1) % FLY_SWIZZLED_PTRS;
    if (p->n < FLY_SWIZZLED_PTRS)
      p->n++;
  }
  return fly_build_gep(b, p->val[hit], p->elem, fly_sym_const(sp.add + sp.whole));
}

int fly_swizzle_run(FlySwizzle s) { return s.bits ? 1 << s.base : 1 << 30; }
