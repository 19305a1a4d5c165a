/* test_codegen.c — LLVM's code generator inside the compiler (fly_codegen.h):
 * what it refuses comes back as a located error, never as LLVM printing
 * "<unknown>:0:0" and ending the process.
 *
 * The modules are written at the LLVM level, as the Fly passes leave them,
 * so that the code generator sees exactly what a test wants: the semantic
 * pass would refuse a .fly kernel that asks for too much shared memory
 * before it got there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fly_codegen.h"
#include "fly_mlir.h"
#include "fly_pipeline.h"
#include "llvm-c/Analysis.h"
#include "llvm-c/Core.h"
#include "llvm-c/IRReader.h"

/* A kernel with an 80 KiB shared (LDS) array, in k.fly at line 3. */
static const char big_lds[] =
    "module attributes {gpu.container_module} {\n"
    "  gpu.module @kernels {\n"
    "    llvm.mlir.global internal @tile() {addr_space = 3 : i32, alignment = 16 : i64}"
    " : !llvm.array<20480 x f32>\n"
    "    gpu.func @big(%out: !llvm.ptr<1>, %i: i32, %j: i32) kernel {\n"
    "      %t = llvm.mlir.addressof @tile : !llvm.ptr<3>\n"
    "      %p = llvm.getelementptr %t[%i] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32\n"
    "      %q = llvm.getelementptr %t[%j] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32\n"
    "      %one = llvm.mlir.constant(1.0 : f32) : f32\n"
    "      llvm.store %one, %p : f32, !llvm.ptr<3>\n"
    "      %v = llvm.load %q : !llvm.ptr<3> -> f32\n"
    "      llvm.store %v, %out : f32, !llvm.ptr<1>\n"
    "      gpu.return\n"
    "    } loc(\"k.fly\":3:1)\n"
    "  }\n"
    "}\n";

static FlyMlir m;

static int setup(void **state) {
  (void)state;
  return fly_mlir_init(&m) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  fly_mlir_release(&m);
  return 0;
}

static MlirModule parse(const char *text) {
  MlirModule mod = mlirModuleCreateParse(m.ctx, mlirStringRefCreateFromCString(text));
  assert_false(mlirModuleIsNull(mod));
  return mod;
}

/* Compiles the module for arch; the report and why are the caller's. */
static char *compile(const char *text, const char *arch, FlyEmitKind kind,
                     FlyPipelineReport *report, char **why) {
  MlirModule mod = parse(text);
  size_t len = 0;
  char *out =
      fly_pipeline_compile(&m, mod, fly_target_find(arch), 3, kind, NULL, &len, why, report, NULL);
  mlirModuleDestroy(mod);
  return out;
}

/* gfx942 has 64 KiB of LDS: LLVM refuses the kernel, and the message comes
   back at the kernel's location, without LLVM's "<unknown>:0:0". */
static void lds_limit_is_an_error(void **state) {
  (void)state;
  FlyEmitKind kinds[] = {FLY_EMIT_ASM, FLY_EMIT_BIN};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    FlyPipelineReport r;
    char *why = NULL;
    char *out = compile(big_lds, "gfx942", kinds[i], &r, &why);
    assert_null(out);
    assert_int_equal(r.errors, 1);
    assert_int_equal(r.count, 1);
    assert_true(r.messages[0].error);
    assert_string_equal(r.messages[0].text,
                        "local memory (81920) exceeds limit (65536) in function 'big'");
    assert_string_equal(r.messages[0].at.file, "k.fly");
    assert_int_equal(r.messages[0].at.line, 3);
    assert_int_equal(r.messages[0].at.col, 1);
    assert_null(why);
    fly_pipeline_report_release(&r);
  }
}

/* gfx950 has 160 KiB: the same kernel compiles, to a code object too, and
   the context stays usable after the error above. */
static void within_the_limit_compiles(void **state) {
  (void)state;
  FlyPipelineReport r;
  char *why = NULL;
  char *out = compile(big_lds, "gfx950", FLY_EMIT_ASM, &r, &why);
  assert_non_null(out);
  assert_non_null(strstr(out, ".amdhsa_group_segment_fixed_size 81920"));
  assert_int_equal(r.errors, 0);
  free(out);
  fly_pipeline_report_release(&r);
  out = compile(big_lds, "gfx950", FLY_EMIT_BIN, &r, &why);
  assert_non_null(out);
  assert_memory_equal(out, "\177ELF", 4);
  free(out);
  free(why);
  fly_pipeline_report_release(&r);
}

/* LLVM sets NVIDIA no such limit (ptxas and the driver do, and the
   semantic pass): PTX, and no message. */
static void nvptx_has_no_limit_in_llvm(void **state) {
  (void)state;
  FlyPipelineReport r;
  char *why = NULL;
  char *out = compile(big_lds, "sm_90", FLY_EMIT_ASM, &r, &why);
  assert_non_null(out);
  assert_non_null(strstr(out, ".shared .align 16 .b8 tile[81920]"));
  assert_int_equal(r.count, 0);
  free(out);
  free(why);
  fly_pipeline_report_release(&r);
}

/* A loop carrying a struct of two floats, a loop exit's struct of structs
   stored whole, and a switch reaching a block twice (its phi must keep one
   incoming value for both edges). */
static const char struct_phis[] =
    "define void @f(ptr %out, i32 %n, i32 %sel) {\n"
    "entry:\n"
    "  %s0 = insertvalue { float, float } poison, float 1.0, 0\n"
    "  %s1 = insertvalue { float, float } %s0, float 2.0, 1\n"
    "  br label %loop\n"
    "loop:\n"
    "  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]\n"
    "  %s = phi { float, float } [ %s1, %entry ], [ %t, %loop ]\n"
    "  %a = extractvalue { float, float } %s, 0\n"
    "  %b = extractvalue { float, float } %s, 1\n"
    "  %a1 = fadd float %a, %b\n"
    "  %t0 = insertvalue { float, float } poison, float %a1, 0\n"
    "  %t = insertvalue { float, float } %t0, float %b, 1\n"
    "  %w0 = insertvalue { { float, float }, { float, float } } poison, { float, float } %t, 0\n"
    "  %w = insertvalue { { float, float }, { float, float } } %w0, { float, float } %s, 1\n"
    "  %i1 = add i32 %i, 1\n"
    "  %done = icmp eq i32 %i1, %n\n"
    "  br i1 %done, label %exit, label %loop\n"
    "exit:\n"
    "  %x = phi { { float, float }, { float, float } } [ %w, %loop ]\n"
    "  store { { float, float }, { float, float } } %x, ptr %out\n"
    "  switch i32 %sel, label %end [ i32 0, label %twice\n"
    "                                i32 1, label %twice ]\n"
    "twice:\n"
    "  %y = phi { float, float } [ %t, %exit ], [ %t, %exit ]\n"
    "  store { float, float } %y, ptr %out\n"
    "  br label %end\n"
    "end:\n"
    "  ret void\n"
    "}\n";

/* Each struct phi becomes a phi per float, the reads of its fields read
   those, a struct used whole is put together again, and the module still
   verifies; the switch's phi stays. */
static void struct_phis_are_split(void **state) {
  (void)state;
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMMemoryBufferRef buf =
      LLVMCreateMemoryBufferWithMemoryRangeCopy(struct_phis, sizeof struct_phis - 1, "struct_phis");
  LLVMModuleRef mod = NULL;
  char *msg = NULL;
  assert_false(LLVMParseIRInContext(ctx, buf, &mod, &msg));
  assert_true(fly_codegen_split_phis(mod));
  assert_false(LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg));
  LLVMDisposeMessage(msg);
  int floats = 0, structs = 0, reads = 0;
  LLVMValueRef fn = LLVMGetNamedFunction(mod, "f");
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      if (LLVMIsAPHINode(i)) {
        LLVMTypeKind k = LLVMGetTypeKind(LLVMTypeOf(i));
        floats += k == LLVMFloatTypeKind;
        structs += k == LLVMStructTypeKind;
      }
      /* %a and %b read the loop's phis now, not a struct. */
      if (LLVMIsAExtractValueInst(i) && LLVMIsAPHINode(LLVMGetOperand(i, 0)))
        reads++;
    }
  assert_int_equal(floats, 2 + 4); /* the loop's 2, the exit's 2 x 2 */
  assert_int_equal(structs, 1);    /* the switch's */
  assert_int_equal(reads, 0);
  LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(lds_limit_is_an_error),
      cmocka_unit_test(within_the_limit_compiles),
      cmocka_unit_test(nvptx_has_no_limit_in_llvm),
      cmocka_unit_test(struct_phis_are_split),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
