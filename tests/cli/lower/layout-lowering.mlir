// RUN: fly-opt %s --pass-pipeline=fly-layout-lowering | FileCheck %s
// RUN: fly-opt %s --pass-pipeline=fly-layout-lowering,convert-fly-to-nvvm | FileCheck %s --check-prefix=NV
//
// fly-layout-lowering: a divide keeps the pointer and takes the result's
// leaves; a slice moves the pointer by the coordinate's offset; a tiled
// copy's partition by its thread's first element (TV layout, then the
// source's strides); a shared tile becomes a workgroup global of its cosize
// (the kernel's tiles take less than 48 KiB), a fragment a private alloca;
// crd2idx becomes arith.
// Traced from:
//   kernel views(S: tensor<f32, (?, ?):(?, 1)>, i: i32) {
//       let t = zipped_divide(S, (32, 8))[(_, _), (block_idx.x, 1)];
//       let s = smem<f32>((32, 8):(1, 33));
//       let r = rmem<f32>(4);
//       let tc = tiled_copy(copy_atom(universal(32), f32), (4, 8):(8, 1), (1, 1):(0, 0));
//       copy(tc, tc.slice(thread_idx.x).partition_S(t), tc.slice(thread_idx.x).partition_D(s));
//       let j = crd2idx((i, 3), (4, 8):(8, 1));
//       s[j].store(1.0);
//   }

// CHECK: llvm.mlir.global internal @__fly_smem_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<263 x f32>
// CHECK: gpu.func @views(%[[S:.*]]: !llvm.ptr<1>, %[[M:.*]]: i32, %[[N:.*]]: i32, %[[LD:.*]]: i32, %[[I:.*]]: i32)
// CHECK: %[[R:.*]] = llvm.alloca %{{.*}} x f32 {alignment = 16 : i64} : (i32) -> !llvm.ptr
// CHECK: %[[LD32:.*]] = arith.muli %[[LD]], %{{.*}} : i32
// CHECK: "fly.make_memref"(%[[S]], %{{.*}}, %{{.*}}, %[[LD]], %[[LD32]]) {{.*}} -> !fly.memref<f32, "global", "((32,8),(?,?)):((?,1),(?,8))">
// CHECK: %[[BX:.*]] = arith.index_cast
// CHECK: %[[T0:.*]] = arith.muli %[[BX]], %[[LD32]] : i32
// CHECK: %[[T1:.*]] = arith.addi %[[T0]], %c8_i32{{.*}} : i32
// CHECK: %[[TILE:.*]] = llvm.getelementptr %[[S]][%[[T1]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
// CHECK: "fly.make_memref"(%[[TILE]], %[[LD]]) {{.*}} -> !fly.memref<f32, "global", "(32,8):(?,1)">
// CHECK: %[[SMEM:.*]] = llvm.mlir.addressof @__fly_smem_0 : !llvm.ptr<3>
// CHECK: "fly.make_memref"(%[[R]]) : (!llvm.ptr) -> !fly.memref<f32, "register", "(4):(1)">
// The partition: k = (t % 8) * 4 + t / 8, then (k % 4) * ld + k / 4.
// CHECK: %[[A:.*]] = arith.remui %[[T:.*]], %c8_i32
// CHECK: %[[B:.*]] = arith.divui %[[T]], %c8_i32
// CHECK: %[[C:.*]] = arith.muli %[[A]], %c4_i32
// CHECK: %[[K:.*]] = arith.addi %[[C]], %[[B]]
// CHECK: %[[ROW:.*]] = arith.remui %[[K]], %c4_i32
// CHECK: %[[COL:.*]] = arith.divui %[[K]], %c4_i32
// CHECK: %[[E:.*]] = arith.muli %[[ROW]], %[[LD]]
// CHECK: %[[OFF:.*]] = arith.addi %[[E]], %[[COL]]
// CHECK: llvm.getelementptr %[[TILE]][%[[OFF]]]
// CHECK: "fly.make_memref"({{.*}}) : (!llvm.ptr<1>, i32) -> !fly.memref<f32, "global", "(1,8,1):(0,?,0)">
// CHECK: llvm.getelementptr %[[SMEM]]
// CHECK: "fly.copy"
// crd2idx((i, 3), (4,8):(8,1)) = i * 8 + 3, then that index in (32,8):(1,33).
// CHECK: %[[I8:.*]] = arith.muli %[[I]], %c8_i32
// CHECK: %[[J:.*]] = arith.addi %[[I8]], %c3_i32
// CHECK-NOT: fly.crd2idx
// CHECK-NOT: fly.make_int_tuple
// CHECK: gpu.return

// After convert-fly-to-nvvm no Fly operation is left; the copy is eight
// scalar loads (the source column is strided) and stores.
// NV-NOT: "fly.
// NV-COUNT-8: llvm.load {{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// NV: llvm.store {{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<3>
// NV-NOT: "fly.

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @views(%arg0: !llvm.ptr<1>, %arg1: i32, %arg2: i32, %arg3: i32, %arg4: i32) kernel attributes {fly.specialization = "views @sm_90"} {
      %0 = "fly.make_memref"(%arg0, %arg1, %arg2, %arg3) : (!llvm.ptr<1>, i32, i32, i32) -> !fly.memref<f32, "global", "(?,?):(?,1)">
      %c31_i32 = arith.constant 31 : i32
      %1 = arith.addi %arg1, %c31_i32 : i32
      %c32_i32 = arith.constant 32 : i32
      %2 = arith.divsi %1, %c32_i32 : i32
      %c32_i32_0 = arith.constant 32 : i32
      %3 = arith.muli %arg3, %c32_i32_0 : i32
      %c7_i32 = arith.constant 7 : i32
      %4 = arith.addi %arg2, %c7_i32 : i32
      %c8_i32 = arith.constant 8 : i32
      %5 = arith.divsi %4, %c8_i32 : i32
      %6 = "fly.zipped_divide"(%0, %2, %5, %arg3, %3) {tiler = "(32,8)"} : (!fly.memref<f32, "global", "(?,?):(?,1)">, i32, i32, i32, i32) -> !fly.memref<f32, "global", "((32,8),(?,?)):((?,1),(?,8))">
      %block_id_x = gpu.block_id  x
      %7 = arith.index_cast %block_id_x : index to i32
      %8 = "fly.slice"(%6, %7, %arg3) {coord = "((_,_),(?,1))"} : (!fly.memref<f32, "global", "((32,8),(?,?)):((?,1),(?,8))">, i32, i32) -> !fly.memref<f32, "global", "(32,8):(?,1)">
      %9 = "fly.alloc_smem"() : () -> !fly.memref<f32, "shared", "(32,8):(1,33)">
      %10 = "fly.alloc_reg"() : () -> !fly.memref<f32, "register", "(4):(1)">
      %thread_id_x = gpu.thread_id  x
      %11 = arith.index_cast %thread_id_x : index to i32
      %c4_i32 = arith.constant 4 : i32
      %12 = arith.muli %arg3, %c4_i32 : i32
      %13 = "fly.make_tiled_copy"() {atom = "universal", bits = 32 : i64, elem = f32, tv = "((8,4),1):((4,1),0)", tile = "(4,8)"} : () -> !fly.tiled_copy
      %14 = "fly.partition_s"(%13, %11, %8, %12) : (!fly.tiled_copy, i32, !fly.memref<f32, "global", "(32,8):(?,1)">, i32) -> !fly.memref<f32, "global", "(1,8,1):(0,?,0)">
      %thread_id_x_1 = gpu.thread_id  x
      %15 = arith.index_cast %thread_id_x_1 : index to i32
      %16 = "fly.make_tiled_copy"() {atom = "universal", bits = 32 : i64, elem = f32, tv = "((8,4),1):((4,1),0)", tile = "(4,8)"} : () -> !fly.tiled_copy
      %17 = "fly.partition_d"(%16, %15, %9) : (!fly.tiled_copy, i32, !fly.memref<f32, "shared", "(32,8):(1,33)">) -> !fly.memref<f32, "shared", "(1,8,1):(0,4,0)">
      %18 = "fly.make_tiled_copy"() {atom = "universal", bits = 32 : i64, elem = f32, tv = "((8,4),1):((4,1),0)", tile = "(4,8)"} : () -> !fly.tiled_copy
      "fly.copy"(%18, %14, %17) : (!fly.tiled_copy, !fly.memref<f32, "global", "(1,8,1):(0,?,0)">, !fly.memref<f32, "shared", "(1,8,1):(0,4,0)">) -> ()
      %19 = "fly.make_int_tuple"(%arg4) {value = "(?,3)"} : (i32) -> !fly.int_tuple<"(?,3)">
      %20 = "fly.make_int_tuple"() {value = "(4,8)"} : () -> !fly.int_tuple<"(4,8)">
      %21 = "fly.make_int_tuple"() {value = "(8,1)"} : () -> !fly.int_tuple<"(8,1)">
      %22 = "fly.make_layout"(%20, %21) : (!fly.int_tuple<"(4,8)">, !fly.int_tuple<"(8,1)">) -> !fly.layout<"(4,8):(8,1)">
      %23 = "fly.crd2idx"(%19, %22) : (!fly.int_tuple<"(?,3)">, !fly.layout<"(4,8):(8,1)">) -> i32
      %24 = "fly.slice"(%9, %23) {coord = "?"} : (!fly.memref<f32, "shared", "(32,8):(1,33)">, i32) -> !fly.memref<f32, "shared", "():()">
      %cst = arith.constant 1.000000e+00 : f32
      "fly.store"(%cst, %24) : (f32, !fly.memref<f32, "shared", "():()">) -> ()
      gpu.return
    }
  }
}

