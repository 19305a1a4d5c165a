// RUN: fly-opt %s --pass-pipeline=fly-layout-lowering,convert-fly-to-rocdl | FileCheck %s
//
// convert-fly-to-rocdl: the same kernel as convert-fly-to-nvvm.mlir with an
// MFMA atom, traced for gfx942: one amdgpu.mfma per atom tile, fragments in
// private (address space 5) allocas, exp through llvm.amdgcn.exp2, log
// through llvm.log2.

// CHECK-LABEL: gpu.func @ops
// CHECK-COUNT-4: llvm.alloca {{.*}} -> !llvm.ptr<5>
// CHECK: amdgpu.mfma 16x16x16 {{.*}} blgp =  none : vector<4xf16>, vector<4xf16>, vector<4xf32>
// CHECK-NOT: amdgpu.mfma
// CHECK: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// exp is exp2 of x log2(e): v_exp_f32 alone (subnormal results flush).
// CHECK: llvm.call_intrinsic "llvm.amdgcn.exp2.f32"
// CHECK: llvm.call_intrinsic "llvm.log2.f32"
// CHECK-NOT: "fly.

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @ops(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>, %arg2: !llvm.ptr<1>, %arg3: !llvm.ptr<1>, %arg4: i32, %arg5: f32) kernel attributes {fly.specialization = "ops @gfx942"} {
      %0 = "fly.make_memref"(%arg0) : (!llvm.ptr<1>) -> !fly.memref<f16, "global", "(16,16):(16,1)">
      %1 = "fly.make_memref"(%arg1) : (!llvm.ptr<1>) -> !fly.memref<f16, "global", "(16,16):(16,1)">
      %2 = "fly.make_memref"(%arg2) : (!llvm.ptr<1>) -> !fly.memref<f32, "global", "(16,16):(16,1)">
      %3 = "fly.make_memref"(%arg3, %arg4) : (!llvm.ptr<1>, i32) -> !fly.memref<f32, "global", "(?):(1)">
      %thread_id_x = gpu.thread_id  x
      %4 = arith.index_cast %thread_id_x : index to i32
      %5 = "fly.make_tiled_mma"() {atom = "amd.mfma_16x16x16", elem = f16, acc = f32, atoms = "1:0"} : () -> !fly.tiled_mma
      %6 = "fly.partition_fragment_a"(%5, %4, %0) : (!fly.tiled_mma, i32, !fly.memref<f16, "global", "(16,16):(16,1)">) -> !fly.memref<f16, "register", "(4,1,1):(1,0,0)">
      %7 = "fly.make_tiled_mma"() {atom = "amd.mfma_16x16x16", elem = f16, acc = f32, atoms = "1:0"} : () -> !fly.tiled_mma
      %8 = "fly.partition_fragment_b"(%7, %4, %1) : (!fly.tiled_mma, i32, !fly.memref<f16, "global", "(16,16):(16,1)">) -> !fly.memref<f16, "register", "(4,1,1):(1,0,0)">
      %9 = "fly.make_tiled_mma"() {atom = "amd.mfma_16x16x16", elem = f16, acc = f32, atoms = "1:0"} : () -> !fly.tiled_mma
      %10 = "fly.partition_fragment_c"(%9, %4, %2) : (!fly.tiled_mma, i32, !fly.memref<f32, "global", "(16,16):(16,1)">) -> !fly.memref<f32, "register", "(4,1,1):(1,0,0)">
      %11 = "fly.make_tiled_mma"() {atom = "amd.mfma_16x16x16", elem = f16, acc = f32, atoms = "1:0"} : () -> !fly.tiled_mma
      %12 = "fly.partition_a"(%11, %4, %0) : (!fly.tiled_mma, i32, !fly.memref<f16, "global", "(16,16):(16,1)">) -> !fly.memref<f16, "global", "(4,1,1):(1,0,0)">
      %13 = "fly.make_copy_atom"() {atom = "universal", bits = 16 : i64, elem = f16} : () -> !fly.copy_atom
      "fly.copy"(%13, %12, %6) : (!fly.copy_atom, !fly.memref<f16, "global", "(4,1,1):(1,0,0)">, !fly.memref<f16, "register", "(4,1,1):(1,0,0)">) -> ()
      %14 = "fly.make_tiled_mma"() {atom = "amd.mfma_16x16x16", elem = f16, acc = f32, atoms = "1:0"} : () -> !fly.tiled_mma
      %15 = "fly.partition_b"(%14, %4, %1) : (!fly.tiled_mma, i32, !fly.memref<f16, "global", "(16,16):(16,1)">) -> !fly.memref<f16, "global", "(4,1,1):(1,0,0)">
      %16 = "fly.make_copy_atom"() {atom = "universal", bits = 16 : i64, elem = f16} : () -> !fly.copy_atom
      "fly.copy"(%16, %15, %8) : (!fly.copy_atom, !fly.memref<f16, "global", "(4,1,1):(1,0,0)">, !fly.memref<f16, "register", "(4,1,1):(1,0,0)">) -> ()
      %17 = "fly.load"(%6) : (!fly.memref<f16, "register", "(4,1,1):(1,0,0)">) -> vector<4xf16>
      %18 = "fly.load"(%8) : (!fly.memref<f16, "register", "(4,1,1):(1,0,0)">) -> vector<4xf16>
      %cst = arith.constant dense<0.000000e+00> : vector<4xf32>
      %19 = "fly.make_tiled_mma"() {atom = "amd.mfma_16x16x16", elem = f16, acc = f32, atoms = "1:0"} : () -> !fly.tiled_mma
      %20 = "fly.gemm"(%19, %17, %18, %cst) : (!fly.tiled_mma, vector<4xf16>, vector<4xf16>, vector<4xf32>) -> vector<4xf32>
      "fly.store"(%20, %10) : (vector<4xf32>, !fly.memref<f32, "register", "(4,1,1):(1,0,0)">) -> ()
      %21 = "fly.make_tiled_mma"() {atom = "amd.mfma_16x16x16", elem = f16, acc = f32, atoms = "1:0"} : () -> !fly.tiled_mma
      %22 = "fly.partition_c"(%21, %4, %2) : (!fly.tiled_mma, i32, !fly.memref<f32, "global", "(16,16):(16,1)">) -> !fly.memref<f32, "global", "(4,1,1):(16,0,0)">
      %23 = "fly.make_copy_atom"() {atom = "universal", bits = 64 : i64, elem = f32} : () -> !fly.copy_atom
      "fly.copy"(%23, %10, %22) : (!fly.copy_atom, !fly.memref<f32, "register", "(4,1,1):(1,0,0)">, !fly.memref<f32, "global", "(4,1,1):(16,0,0)">) -> ()
      %c3_i32 = arith.constant 3 : i32
      %24 = arith.addi %arg4, %c3_i32 : i32
      %c4_i32 = arith.constant 4 : i32
      %25 = arith.divsi %24, %c4_i32 : i32
      %26 = "fly.logical_divide"(%3, %25) {tiler = "4:1"} : (!fly.memref<f32, "global", "(?):(1)">, i32) -> !fly.memref<f32, "global", "(4,?):(1,4)">
      %thread_id_x_0 = gpu.thread_id  x
      %27 = arith.index_cast %thread_id_x_0 : index to i32
      %28 = "fly.slice"(%26, %27) {coord = "(_,?)"} : (!fly.memref<f32, "global", "(4,?):(1,4)">, i32) -> !fly.memref<f32, "global", "(4):(1)">
      %29 = "fly.alloc_reg"() : () -> !fly.memref<f32, "register", "(4):(1)">
      %30 = "fly.make_copy_atom"() {atom = "universal", bits = 128 : i64, elem = f32} : () -> !fly.copy_atom
      "fly.copy"(%30, %28, %29) : (!fly.copy_atom, !fly.memref<f32, "global", "(4):(1)">, !fly.memref<f32, "register", "(4):(1)">) -> ()
      %31 = "fly.slice"(%3) {coord = "0"} : (!fly.memref<f32, "global", "(?):(1)">) -> !fly.memref<f32, "global", "():()">
      %32 = math.exp %arg5 : f32
      %33 = math.log %arg5 : f32
      %34 = arith.maxnumf %32, %33 : f32
      "fly.store"(%34, %31) : (f32, !fly.memref<f32, "global", "():()">) -> ()
      gpu.return
    }
  }
}

