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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(lds_limit_is_an_error),
      cmocka_unit_test(within_the_limit_compiles),
      cmocka_unit_test(nvptx_has_no_limit_in_llvm),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
