// RUN: fly-opt %s --pass-pipeline=fly-layout-lowering,convert-fly-to-nvvm | FileCheck %s
//
// convert-fly-to-nvvm: copies become loads and stores, as wide as the atom
// where both sides are contiguous; the MMA one nvgpu.mma.sync per atom tile;
// exp, log and max LLVM and NVVM intrinsics that need no libdevice.
// Traced (flyc compile --emit=fly) from:
//   kernel ops(A: tensor<f16, (16, 16):(16, 1)>, B: tensor<f16, (8, 16):(16, 1)>, C: tensor<f32, (16, 8):(8, 1)>, X: tensor<f32>, y: f32) {
//       let mma = tiled_mma(mma_atom(nv.mma_sync_16x8x16, f16, f32));
//       let thr = mma.slice(thread_idx.x);
//       let rA = thr.partition_fragment_A(A);
//       let rB = thr.partition_fragment_B(B);
//       let rC = thr.partition_fragment_C(C);
//       copy(copy_atom(universal(16), f16), thr.partition_A(A), rA);
//       copy(copy_atom(universal(16), f16), thr.partition_B(B), rB);
//       rC.store(gemm(mma, rA.load(), rB.load(), zeros_like(rC)));
//       copy(copy_atom(universal(64), f32), rC, thr.partition_C(C));
//       let v = logical_divide(X, 4:1)[_, thread_idx.x];
//       let r = rmem<f32>(4);
//       copy(copy_atom(universal(128), f32), v, r);
//       X[0].store(max(exp(y), log(y)));
//   }

// CHECK-LABEL: gpu.func @ops
// Register fragments are allocas at the top of the kernel.
// CHECK-COUNT-4: llvm.alloca
// partition_A into the fragment: 8 values of 2 bytes, each its own access.
// CHECK-COUNT-8: llvm.load {{.*}} {alignment = 2 : i64} : !llvm.ptr<1> -> f16
// CHECK: %[[A:.*]] = llvm.load {{.*}} : !llvm.ptr -> vector<8xf16>
// CHECK: %[[B:.*]] = llvm.load {{.*}} : !llvm.ptr -> vector<4xf16>
// CHECK: %[[AS:.*]] = llvm.shufflevector %[[A]], %[[A]] [0, 1, 2, 3, 4, 5, 6, 7] : vector<8xf16>
// CHECK: %[[A2:.*]] = vector.shape_cast %[[AS]] : vector<8xf16> to vector<4x2xf16>
// CHECK: nvgpu.mma.sync(%[[A2]], %{{.*}}, %{{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// The accumulator goes out 64 bits at a time (universal(64)).
// CHECK-COUNT-2: llvm.store {{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// universal(128) on a contiguous slice: one 16-byte load.
// CHECK: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// exp is exp2 of x log2(e): ex2.approx.ftz, one MUFU (subnormal results flush).
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"
// CHECK: llvm.call_intrinsic "llvm.maxnum.f32"
// CHECK-NOT: "fly.
// CHECK-NOT: math.

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @ops(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>, %arg2: !llvm.ptr<1>, %arg3: !llvm.ptr<1>, %arg4: i32, %arg5: f32) kernel attributes {fly.specialization = "ops @sm_90"} {
      %0 = "fly.make_memref"(%arg0) : (!llvm.ptr<1>) -> !fly.memref<f16, "global", "(16,16):(16,1)">
      %1 = "fly.make_memref"(%arg1) : (!llvm.ptr<1>) -> !fly.memref<f16, "global", "(8,16):(16,1)">
      %2 = "fly.make_memref"(%arg2) : (!llvm.ptr<1>) -> !fly.memref<f32, "global", "(16,8):(8,1)">
      %3 = "fly.make_memref"(%arg3, %arg4) : (!llvm.ptr<1>, i32) -> !fly.memref<f32, "global", "(?):(1)">
      %thread_id_x = gpu.thread_id  x
      %4 = arith.index_cast %thread_id_x : index to i32
      %5 = "fly.make_tiled_mma"() {atom = "nv.mma_sync_16x8x16", elem = f16, acc = f32, atoms = "1:0"} : () -> !fly.tiled_mma
      %6 = "fly.partition_fragment_a"(%5, %4, %0) : (!fly.tiled_mma, i32, !fly.memref<f16, "global", "(16,16):(16,1)">) -> !fly.memref<f16, "register", "((2,2,2),1,1):((1,2,4),0,0)">
      %7 = "fly.make_tiled_mma"() {atom = "nv.mma_sync_16x8x16", elem = f16, acc = f32, atoms = "1:0"} : () -> !fly.tiled_mma
      %8 = "fly.partition_fragment_b"(%7, %4, %1) : (!fly.tiled_mma, i32, !fly.memref<f16, "global", "(8,16):(16,1)">) -> !fly.memref<f16, "register", "((2,2),1,1):((1,2),0,0)">
      %9 = "fly.make_tiled_mma"() {atom = "nv.mma_sync_16x8x16", elem = f16, acc = f32, atoms = "1:0"} : () -> !fly.tiled_mma
      %10 = "fly.partition_fragment_c"(%9, %4, %2) : (!fly.tiled_mma, i32, !fly.memref<f32, "global", "(16,8):(8,1)">) -> !fly.memref<f32, "register", "((2,2),1,1):((1,2),0,0)">
      %11 = "fly.make_tiled_mma"() {atom = "nv.mma_sync_16x8x16", elem = f16, acc = f32, atoms = "1:0"} : () -> !fly.tiled_mma
      %12 = "fly.partition_a"(%11, %4, %0) : (!fly.tiled_mma, i32, !fly.memref<f16, "global", "(16,16):(16,1)">) -> !fly.memref<f16, "global", "((2,2,2),1,1):((1,128,8),0,0)">
      %13 = "fly.make_copy_atom"() {atom = "universal", bits = 16 : i64, elem = f16} : () -> !fly.copy_atom
      "fly.copy"(%13, %12, %6) : (!fly.copy_atom, !fly.memref<f16, "global", "((2,2,2),1,1):((1,128,8),0,0)">, !fly.memref<f16, "register", "((2,2,2),1,1):((1,2,4),0,0)">) -> ()
      %14 = "fly.make_tiled_mma"() {atom = "nv.mma_sync_16x8x16", elem = f16, acc = f32, atoms = "1:0"} : () -> !fly.tiled_mma
      %15 = "fly.partition_b"(%14, %4, %1) : (!fly.tiled_mma, i32, !fly.memref<f16, "global", "(8,16):(16,1)">) -> !fly.memref<f16, "global", "((2,2),1,1):((1,8),0,0)">
      %16 = "fly.make_copy_atom"() {atom = "universal", bits = 16 : i64, elem = f16} : () -> !fly.copy_atom
      "fly.copy"(%16, %15, %8) : (!fly.copy_atom, !fly.memref<f16, "global", "((2,2),1,1):((1,8),0,0)">, !fly.memref<f16, "register", "((2,2),1,1):((1,2),0,0)">) -> ()
      %17 = "fly.load"(%6) : (!fly.memref<f16, "register", "((2,2,2),1,1):((1,2,4),0,0)">) -> vector<8xf16>
      %18 = "fly.load"(%8) : (!fly.memref<f16, "register", "((2,2),1,1):((1,2),0,0)">) -> vector<4xf16>
      %cst = arith.constant dense<0.000000e+00> : vector<4xf32>
      %19 = "fly.make_tiled_mma"() {atom = "nv.mma_sync_16x8x16", elem = f16, acc = f32, atoms = "1:0"} : () -> !fly.tiled_mma
      %20 = "fly.gemm"(%19, %17, %18, %cst) : (!fly.tiled_mma, vector<8xf16>, vector<4xf16>, vector<4xf32>) -> vector<4xf32>
      "fly.store"(%20, %10) : (vector<4xf32>, !fly.memref<f32, "register", "((2,2),1,1):((1,2),0,0)">) -> ()
      %21 = "fly.make_tiled_mma"() {atom = "nv.mma_sync_16x8x16", elem = f16, acc = f32, atoms = "1:0"} : () -> !fly.tiled_mma
      %22 = "fly.partition_c"(%21, %4, %2) : (!fly.tiled_mma, i32, !fly.memref<f32, "global", "(16,8):(8,1)">) -> !fly.memref<f32, "global", "((2,2),1,1):((1,64),0,0)">
      %23 = "fly.make_copy_atom"() {atom = "universal", bits = 64 : i64, elem = f32} : () -> !fly.copy_atom
      "fly.copy"(%23, %10, %22) : (!fly.copy_atom, !fly.memref<f32, "register", "((2,2),1,1):((1,2),0,0)">, !fly.memref<f32, "global", "((2,2),1,1):((1,64),0,0)">) -> ()
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

