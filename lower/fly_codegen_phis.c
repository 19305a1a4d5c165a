/* fly_codegen_phis.c — struct phis split into a phi per field before
 * instruction selection (fly_codegen.h).
 *
 * A loop that carries wgmma's accumulator carries the struct of floats the
 * instruction gives and takes (fly_lower_carry.c), and LLVM's optimiser
 * keeps it one phi of that struct. The instruction selector reads a value
 * made in another block (a phi's is) by copying all of its registers out,
 * again for each field read: 128 reads of a 128-float phi made 16 thousand
 * copy nodes a loop, a fifth of a 128 x 256 GEMM's compile time. A phi per
 * field is one register each. This runs after the optimiser, whose
 * combiner would merge the fields' phis back into the struct's. */
#include "fly_codegen.h"

#include <stdlib.h>

#include "llvm-c/Core.h"

/* A field: its index path (a struct of structs has two levels). */
typedef struct Field {
  unsigned path[2];
  unsigned depth;
  LLVMTypeRef type;
} Field;

static bool is_aggregate(LLVMTypeRef t) {
  LLVMTypeKind k = LLVMGetTypeKind(t);
  return k == LLVMStructTypeKind || k == LLVMArrayTypeKind;
}

/* The fields of a struct of scalars or of structs of scalars; 0 for other
   types. */
static unsigned fields(LLVMTypeRef t, Field *out, unsigned cap) {
  if (LLVMGetTypeKind(t) != LLVMStructTypeKind)
    return 0;
  unsigned n = 0, k = LLVMCountStructElementTypes(t);
  for (unsigned i = 0; i < k; i++) {
    LLVMTypeRef e = LLVMStructGetTypeAtIndex(t, i);
    if (LLVMGetTypeKind(e) == LLVMStructTypeKind) {
      unsigned kk = LLVMCountStructElementTypes(e);
      for (unsigned j = 0; j < kk; j++) {
        LLVMTypeRef f = LLVMStructGetTypeAtIndex(e, j);
        if (is_aggregate(f))
          return 0;
        if (n < cap)
          out[n] = (Field){{i, j}, 2, f};
        n++;
      }
    } else if (is_aggregate(e)) {
      return 0;
    } else {
      if (n < cap)
        out[n] = (Field){{i, 0}, 1, e};
      n++;
    }
  }
  return n;
}

static LLVMValueRef extract(LLVMBuilderRef b, LLVMValueRef agg, const Field *f) {
  LLVMValueRef v = LLVMBuildExtractValue(b, agg, f->path[0], "");
  return f->depth == 2 ? LLVMBuildExtractValue(b, v, f->path[1], "") : v;
}

/* Whether the extractvalue x reads field f. */
static bool reads(LLVMValueRef x, const Field *f) {
  if (LLVMGetNumIndices(x) != f->depth)
    return false;
  const unsigned *idx = LLVMGetIndices(x);
  for (unsigned i = 0; i < f->depth; i++)
    if (idx[i] != f->path[i])
      return false;
  return true;
}

/* Whether some block reaches phi's block twice (a switch's cases): its
   incoming values must then be one value, which splitting would break. */
static bool repeated_block(LLVMValueRef phi) {
  unsigned n = LLVMCountIncoming(phi);
  for (unsigned i = 0; i < n; i++)
    for (unsigned j = 0; j < i; j++)
      if (LLVMGetIncomingBlock(phi, i) == LLVMGetIncomingBlock(phi, j))
        return true;
  return false;
}

static bool split(LLVMBuilderRef b, LLVMValueRef phi) {
  LLVMTypeRef t = LLVMTypeOf(phi);
  unsigned n = fields(t, NULL, 0);
  if (n == 0 || repeated_block(phi))
    return true;
  Field *f = malloc(n * sizeof *f);
  LLVMValueRef *each = malloc(n * sizeof *each);
  if (!f || !each) {
    free(f), free(each);
    return false;
  }
  fields(t, f, n);
  LLVMPositionBuilderBefore(b, phi);
  for (unsigned i = 0; i < n; i++)
    each[i] = LLVMBuildPhi(b, f[i].type, "");
  unsigned in = LLVMCountIncoming(phi);
  for (unsigned k = 0; k < in; k++) {
    LLVMBasicBlockRef from = LLVMGetIncomingBlock(phi, k);
    LLVMValueRef v = LLVMGetIncomingValue(phi, k);
    /* The fields are read where the struct is made: read in another block,
       it would be copied whole again. */
    LLVMValueRef at = LLVMGetBasicBlockTerminator(from);
    if (LLVMIsAInstruction(v) && !LLVMIsATerminatorInst(v)) {
      at = LLVMGetNextInstruction(v);
      while (LLVMIsAPHINode(at))
        at = LLVMGetNextInstruction(at);
    }
    LLVMPositionBuilderBefore(b, at);
    for (unsigned i = 0; i < n; i++) {
      LLVMValueRef x = extract(b, v, &f[i]);
      LLVMAddIncoming(each[i], &x, &from, 1);
    }
  }
  /* Field reads take their phi; anything else the struct put together. */
  LLVMValueRef whole = NULL;
  for (LLVMUseRef u = LLVMGetFirstUse(phi); u;) {
    LLVMValueRef user = LLVMGetUser(u);
    u = LLVMGetNextUse(u);
    LLVMValueRef field = NULL;
    if (LLVMIsAExtractValueInst(user))
      for (unsigned i = 0; i < n && !field; i++)
        if (reads(user, &f[i]))
          field = each[i];
    if (field) {
      LLVMReplaceAllUsesWith(user, field);
      LLVMInstructionEraseFromParent(user);
      continue;
    }
    if (!whole) {
      LLVMBasicBlockRef bb = LLVMGetInstructionParent(phi);
      LLVMValueRef at = LLVMGetFirstInstruction(bb);
      while (at && LLVMIsAPHINode(at))
        at = LLVMGetNextInstruction(at);
      LLVMPositionBuilderBefore(b, at);
      whole = LLVMGetPoison(t);
      for (unsigned i = 0; i < n; i++) {
        if (f[i].depth == 1) {
          whole = LLVMBuildInsertValue(b, whole, each[i], f[i].path[0], "");
        } else {
          LLVMValueRef inner = LLVMBuildExtractValue(b, whole, f[i].path[0], "");
          inner = LLVMBuildInsertValue(b, inner, each[i], f[i].path[1], "");
          whole = LLVMBuildInsertValue(b, whole, inner, f[i].path[0], "");
        }
      }
    }
  }
  if (whole)
    LLVMReplaceAllUsesWith(phi, whole);
  LLVMInstructionEraseFromParent(phi);
  free(f), free(each);
  return true;
}

bool fly_codegen_split_phis(LLVMModuleRef mod) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(mod));
  bool ok = true;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn && ok; fn = LLVMGetNextFunction(fn))
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb && ok;
         bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i && LLVMIsAPHINode(i) && ok;) {
        LLVMValueRef next = LLVMGetNextInstruction(i);
        ok = split(b, i);
        i = next;
      }
  LLVMDisposeBuilder(b);
  return ok;
}
