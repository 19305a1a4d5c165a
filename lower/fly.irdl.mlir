// fly.irdl.mlir — the Fly dialect, in IRDL. flyc embeds this file and loads
// it at start-up; `mlir-opt --irdl-file=fly.irdl.mlir` reads Fly IR with it.
// docs/fly-dialect.md says what every type and operation means.
//
// Static layouts are type parameters in the canonical text of the layout
// algebra, with `?` marking a leaf known only when the kernel runs; the
// values of those leaves travel with the SSA value (a memref's dynamic
// shape and stride leaves, read back with fly.get_leaf).
irdl.dialect @fly {
  irdl.type @int_tuple {
    %p0 = irdl.base "#builtin.string"
    irdl.parameters(value: %p0)
  }
  irdl.type @layout {
    %p0 = irdl.base "#builtin.string"
    irdl.parameters(value: %p0)
  }
  irdl.type @coord_tensor {
    %p0 = irdl.base "#builtin.string"
    irdl.parameters(layout: %p0)
  }
  irdl.type @memref {
    %p0 = irdl.any
    %p1 = irdl.base "#builtin.string"
    %p2 = irdl.base "#builtin.string"
    irdl.parameters(elem: %p0, space: %p1, layout: %p2)
  }
  // Atoms carry nothing in their types: the operation that makes one holds
  // its name in the atom table and its parameters as attributes.
  irdl.type @copy_atom {
  }
  irdl.type @mma_atom {
  }
  irdl.type @tiled_copy {
  }
  irdl.type @tiled_mma {
  }
  irdl.operation @make_int_tuple {
    %c0 = irdl.is i32
    %c1 = irdl.base @fly::@int_tuple
    %c2 = irdl.base "#builtin.string"
    irdl.operands(dyn: variadic %c0)
    irdl.results(result: %c1)
    irdl.attributes { "value" = %c2 }
  }
  irdl.operation @make_layout {
    %c0 = irdl.base @fly::@int_tuple
    %c1 = irdl.base @fly::@int_tuple
    %c2 = irdl.base @fly::@layout
    irdl.operands(shape: %c0, stride: %c1)
    irdl.results(result: %c2)
  }
  irdl.operation @make_coord_tensor {
    %c0 = irdl.base @fly::@layout
    %c1 = irdl.base @fly::@coord_tensor
    irdl.operands(layout: %c0)
    irdl.results(result: %c1)
  }
  irdl.operation @crd2idx {
    %c0 = irdl.base @fly::@int_tuple
    %c1 = irdl.base @fly::@layout
    %c2 = irdl.is i32
    irdl.operands(coord: %c0, layout: %c1)
    irdl.results(result: %c2)
  }
  irdl.operation @idx2crd {
    %c0 = irdl.is i32
    %c1 = irdl.base @fly::@layout
    %c2 = irdl.base @fly::@int_tuple
    irdl.operands(index: %c0, layout: %c1)
    irdl.results(result: %c2)
  }
  irdl.operation @make_memref {
    %c0 = irdl.any
    %c1 = irdl.is i32
    %c2 = irdl.base @fly::@memref
    irdl.operands(ptr: %c0, dyn: variadic %c1)
    irdl.results(result: %c2)
  }
  irdl.operation @alloc_smem {
    %c0 = irdl.base @fly::@memref
    %c1 = irdl.is i32
    irdl.operands(leaves: variadic %c1)
    irdl.results(result: %c0)
  }
  irdl.operation @smem_launch_size {
    %c0 = irdl.is i32
    %i = irdl.base "#builtin.integer"
    irdl.results(result: %c0)
    irdl.attributes { "elem_bytes" = %i }
  }
  irdl.operation @smem_launch_base {
    %c0 = irdl.any
    irdl.results(result: %c0)
  }
  irdl.operation @alloc_reg {
    %c0 = irdl.base @fly::@memref
    irdl.results(result: %c0)
  }
  irdl.operation @get_leaf {
    %m = irdl.base @fly::@memref
    %t = irdl.base @fly::@int_tuple
    %c0 = irdl.any_of(%m, %t)
    %c1 = irdl.is i32
    %c2 = irdl.base "#builtin.string"
    %c3 = irdl.base "#builtin.integer"
    irdl.operands(src: %c0)
    irdl.results(result: %c1)
    irdl.attributes { "part" = %c2, "index" = %c3 }
  }
  irdl.operation @slice {
    %c0 = irdl.base @fly::@memref
    %c1 = irdl.is i32
    %c2 = irdl.base @fly::@memref
    %c3 = irdl.base "#builtin.string"
    irdl.operands(src: %c0, values: variadic %c1)
    irdl.results(result: %c2)
    irdl.attributes { "coord" = %c3 }
  }
  irdl.operation @composition {
    %c0 = irdl.base @fly::@memref
    %c1 = irdl.base @fly::@memref
    %c2 = irdl.base "#builtin.string"
    %c3 = irdl.is i32
    irdl.operands(src: %c0, leaves: variadic %c3)
    irdl.results(result: %c1)
    irdl.attributes { "layout" = %c2 }
  }
  irdl.operation @recast {
    %c0 = irdl.base @fly::@memref
    %c1 = irdl.base @fly::@memref
    %c2 = irdl.base "#builtin.string"
    %c3 = irdl.is i32
    irdl.operands(src: %c0, leaves: variadic %c3)
    irdl.results(result: %c1)
    irdl.attributes { "to" = %c2 }
  }
  irdl.operation @logical_divide {
    %c0 = irdl.base @fly::@memref
    %c1 = irdl.base @fly::@memref
    %c2 = irdl.base "#builtin.string"
    %c3 = irdl.is i32
    irdl.operands(src: %c0, leaves: variadic %c3)
    irdl.results(result: %c1)
    irdl.attributes { "tiler" = %c2 }
  }
  irdl.operation @zipped_divide {
    %c0 = irdl.base @fly::@memref
    %c1 = irdl.base @fly::@memref
    %c2 = irdl.base "#builtin.string"
    %c3 = irdl.is i32
    irdl.operands(src: %c0, leaves: variadic %c3)
    irdl.results(result: %c1)
    irdl.attributes { "tiler" = %c2 }
  }
  irdl.operation @tiled_divide {
    %c0 = irdl.base @fly::@memref
    %c1 = irdl.base @fly::@memref
    %c2 = irdl.base "#builtin.string"
    %c3 = irdl.is i32
    irdl.operands(src: %c0, leaves: variadic %c3)
    irdl.results(result: %c1)
    irdl.attributes { "tiler" = %c2 }
  }
  irdl.operation @flat_divide {
    %c0 = irdl.base @fly::@memref
    %c1 = irdl.base @fly::@memref
    %c2 = irdl.base "#builtin.string"
    %c3 = irdl.is i32
    irdl.operands(src: %c0, leaves: variadic %c3)
    irdl.results(result: %c1)
    irdl.attributes { "tiler" = %c2 }
  }
  irdl.operation @load {
    %c0 = irdl.base @fly::@memref
    %c1 = irdl.any
    irdl.operands(src: %c0)
    irdl.results(result: %c1)
  }
  irdl.operation @store {
    %c0 = irdl.any
    %c1 = irdl.base @fly::@memref
    irdl.operands(value: %c0, dst: %c1)
  }
  // Atomics and memory order (sema/check/fly_memory_order.h): the
  // attributes name the operation, the scope and the order.
  irdl.operation @atomic_rmw {
    %c0 = irdl.base @fly::@memref
    %c1 = irdl.any
    %c2 = irdl.any
    %k0 = irdl.is "add"
    %k1 = irdl.is "min"
    %k2 = irdl.is "max"
    %k3 = irdl.is "umin"
    %k4 = irdl.is "umax"
    %k5 = irdl.is "and"
    %k6 = irdl.is "or"
    %k7 = irdl.is "xor"
    %k8 = irdl.is "exch"
    %k = irdl.any_of(%k0, %k1, %k2, %k3, %k4, %k5, %k6, %k7, %k8)
    %s0 = irdl.is "block"
    %s1 = irdl.is "gpu"
    %s2 = irdl.is "system"
    %s = irdl.any_of(%s0, %s1, %s2)
    %o0 = irdl.is "relaxed"
    %o1 = irdl.is "acquire"
    %o2 = irdl.is "release"
    %o3 = irdl.is "acq_rel"
    %o = irdl.any_of(%o0, %o1, %o2, %o3)
    irdl.operands(dst: %c0, value: %c1)
    irdl.results(result: %c2)
    irdl.attributes { "kind" = %k, "scope" = %s, "order" = %o }
  }
  irdl.operation @atomic_cas {
    %c0 = irdl.base @fly::@memref
    %c1 = irdl.any
    %c2 = irdl.any
    %c3 = irdl.any
    %s0 = irdl.is "block"
    %s1 = irdl.is "gpu"
    %s2 = irdl.is "system"
    %s = irdl.any_of(%s0, %s1, %s2)
    %o0 = irdl.is "relaxed"
    %o1 = irdl.is "acquire"
    %o2 = irdl.is "release"
    %o3 = irdl.is "acq_rel"
    %o = irdl.any_of(%o0, %o1, %o2, %o3)
    irdl.operands(dst: %c0, expected: %c1, desired: %c2)
    irdl.results(result: %c3)
    irdl.attributes { "scope" = %s, "order" = %o }
  }
  // mbarriers (sm_90): on a one-element shared i64 memref, `init` (value:
  // the arrival count), `arrive`, `arrive_expect_tx` (value: bytes),
  // `wait` (value: the phase's parity) and `arrive_remote` (value: a block's
  // rank in the cluster, on whose mbarrier at the same place it arrives).
  irdl.operation @mbarrier {
    %c0 = irdl.base @fly::@memref
    %c1 = irdl.any
    %k0 = irdl.is "init"
    %k1 = irdl.is "arrive"
    %k2 = irdl.is "arrive_expect_tx"
    %k3 = irdl.is "wait"
    %k4 = irdl.is "arrive_remote"
    %k = irdl.any_of(%k0, %k1, %k2, %k3, %k4)
    irdl.operands(bar: %c0, value: variadic %c1)
    irdl.attributes { "kind" = %k }
  }
  // TMA (sm_90): a box of the tensor map `map` (the kernel's !llvm.ptr
  // argument) to or from a shared tile, at the box's coordinate in the
  // hardware's order (innermost first); a load completes on the mbarrier bar.
  irdl.operation @tma_load {
    %p = irdl.is !llvm.ptr
    %b = irdl.base @fly::@memref
    %m = irdl.base @fly::@memref
    %i = irdl.is i32
    irdl.operands(map: %p, bar: %b, tile: %m, coord: variadic %i)
  }
  // tma_load into the same tile and mbarrier of each block of the cluster
  // whose rank is a bit of mask.
  irdl.operation @tma_load_multicast {
    %p = irdl.is !llvm.ptr
    %b = irdl.base @fly::@memref
    %m = irdl.base @fly::@memref
    %k = irdl.is i16
    %i = irdl.is i32
    irdl.operands(map: %p, bar: %b, tile: %m, mask: %k, coord: variadic %i)
  }
  irdl.operation @tma_store {
    %p = irdl.is !llvm.ptr
    %m = irdl.base @fly::@memref
    %i = irdl.is i32
    irdl.operands(map: %p, tile: %m, coord: variadic %i)
  }
  irdl.operation @fence {
    %s0 = irdl.is "block"
    %s1 = irdl.is "gpu"
    %s2 = irdl.is "system"
    %s = irdl.any_of(%s0, %s1, %s2)
    %o0 = irdl.is "acquire"
    %o1 = irdl.is "release"
    %o2 = irdl.is "acq_rel"
    %o = irdl.any_of(%o0, %o1, %o2)
    irdl.attributes { "scope" = %s, "order" = %o }
  }
  irdl.operation @atomic_load {
    %c0 = irdl.base @fly::@memref
    %c1 = irdl.any
    %s0 = irdl.is "block"
    %s1 = irdl.is "gpu"
    %s2 = irdl.is "system"
    %s = irdl.any_of(%s0, %s1, %s2)
    %o0 = irdl.is "relaxed"
    %o1 = irdl.is "acquire"
    %o = irdl.any_of(%o0, %o1)
    irdl.operands(src: %c0)
    irdl.results(result: %c1)
    irdl.attributes { "scope" = %s, "order" = %o }
  }
  irdl.operation @atomic_store {
    %c0 = irdl.any
    %c1 = irdl.base @fly::@memref
    %s0 = irdl.is "block"
    %s1 = irdl.is "gpu"
    %s2 = irdl.is "system"
    %s = irdl.any_of(%s0, %s1, %s2)
    %o0 = irdl.is "relaxed"
    %o1 = irdl.is "release"
    %o = irdl.any_of(%o0, %o1)
    irdl.operands(value: %c0, dst: %c1)
    irdl.attributes { "scope" = %s, "order" = %o }
  }
  irdl.operation @volatile_load {
    %c0 = irdl.base @fly::@memref
    %c1 = irdl.any
    irdl.operands(src: %c0)
    irdl.results(result: %c1)
  }
  irdl.operation @volatile_store {
    %c0 = irdl.any
    %c1 = irdl.base @fly::@memref
    irdl.operands(value: %c0, dst: %c1)
  }
  irdl.operation @make_copy_atom {
    %c0 = irdl.base @fly::@copy_atom
    %s = irdl.base "#builtin.string"
    %i = irdl.base "#builtin.integer"
    %t = irdl.base "#builtin.type"
    irdl.results(result: %c0)
    irdl.attributes { "atom" = %s, "bits" = %i, "elem" = %t }
  }
  // (Each attribute has a constraint of its own: one constraint shared by
  // two attributes would require them to be equal.)
  // An MMA atom whose A and B differ in type (wgmma's fp8: e5m2 by e4m3)
  // adds B's as "elem_b" ("elem" is A's); IRDL lists only attributes every
  // such op has, and lets others through.
  irdl.operation @make_mma_atom {
    %c0 = irdl.base @fly::@mma_atom
    %s = irdl.base "#builtin.string"
    %t0 = irdl.base "#builtin.type"
    %t1 = irdl.base "#builtin.type"
    irdl.results(result: %c0)
    irdl.attributes { "atom" = %s, "elem" = %t0, "acc" = %t1 }
  }
  irdl.operation @make_tiled_copy {
    %c0 = irdl.base @fly::@tiled_copy
    %s0 = irdl.base "#builtin.string"
    %s1 = irdl.base "#builtin.string"
    %s2 = irdl.base "#builtin.string"
    %i = irdl.base "#builtin.integer"
    %t = irdl.base "#builtin.type"
    irdl.results(result: %c0)
    irdl.attributes { "atom" = %s0, "bits" = %i, "elem" = %t, "tv" = %s1, "tile" = %s2 }
  }
  irdl.operation @make_tiled_mma {
    %c0 = irdl.base @fly::@tiled_mma
    %s0 = irdl.base "#builtin.string"
    %s1 = irdl.base "#builtin.string"
    %t0 = irdl.base "#builtin.type"
    %t1 = irdl.base "#builtin.type"
    irdl.results(result: %c0)
    irdl.attributes { "atom" = %s0, "elem" = %t0, "acc" = %t1, "atoms" = %s1 }
  }
  irdl.operation @partition_s {
    %c0 = irdl.base @fly::@tiled_copy
    %c1 = irdl.is i32
    %c2 = irdl.base @fly::@memref
    %c3 = irdl.base @fly::@memref
    irdl.operands(copy: %c0, thread: %c1, src: %c2, leaves: variadic %c1)
    irdl.results(result: %c3)
  }
  irdl.operation @partition_d {
    %c0 = irdl.base @fly::@tiled_copy
    %c1 = irdl.is i32
    %c2 = irdl.base @fly::@memref
    %c3 = irdl.base @fly::@memref
    irdl.operands(copy: %c0, thread: %c1, src: %c2, leaves: variadic %c1)
    irdl.results(result: %c3)
  }
  irdl.operation @retile {
    %c0 = irdl.base @fly::@tiled_copy
    %c1 = irdl.is i32
    %c2 = irdl.base @fly::@memref
    %c3 = irdl.base @fly::@memref
    irdl.operands(copy: %c0, thread: %c1, src: %c2)
    irdl.results(result: %c3)
  }
  irdl.operation @partition_a {
    %c0 = irdl.base @fly::@tiled_mma
    %c1 = irdl.is i32
    %c2 = irdl.base @fly::@memref
    %c3 = irdl.base @fly::@memref
    irdl.operands(mma: %c0, thread: %c1, src: %c2, leaves: variadic %c1)
    irdl.results(result: %c3)
  }
  irdl.operation @partition_b {
    %c0 = irdl.base @fly::@tiled_mma
    %c1 = irdl.is i32
    %c2 = irdl.base @fly::@memref
    %c3 = irdl.base @fly::@memref
    irdl.operands(mma: %c0, thread: %c1, src: %c2, leaves: variadic %c1)
    irdl.results(result: %c3)
  }
  irdl.operation @partition_c {
    %c0 = irdl.base @fly::@tiled_mma
    %c1 = irdl.is i32
    %c2 = irdl.base @fly::@memref
    %c3 = irdl.base @fly::@memref
    irdl.operands(mma: %c0, thread: %c1, src: %c2, leaves: variadic %c1)
    irdl.results(result: %c3)
  }
  irdl.operation @partition_fragment_a {
    %c0 = irdl.base @fly::@tiled_mma
    %c1 = irdl.is i32
    %c2 = irdl.base @fly::@memref
    %c3 = irdl.base @fly::@memref
    irdl.operands(mma: %c0, thread: %c1, src: %c2)
    irdl.results(result: %c3)
  }
  irdl.operation @partition_fragment_b {
    %c0 = irdl.base @fly::@tiled_mma
    %c1 = irdl.is i32
    %c2 = irdl.base @fly::@memref
    %c3 = irdl.base @fly::@memref
    irdl.operands(mma: %c0, thread: %c1, src: %c2)
    irdl.results(result: %c3)
  }
  irdl.operation @partition_fragment_c {
    %c0 = irdl.base @fly::@tiled_mma
    %c1 = irdl.is i32
    %c2 = irdl.base @fly::@memref
    %c3 = irdl.base @fly::@memref
    irdl.operands(mma: %c0, thread: %c1, src: %c2)
    irdl.results(result: %c3)
  }
  irdl.operation @copy_atom_call {
    %c0 = irdl.base @fly::@copy_atom
    %c1 = irdl.base @fly::@memref
    %c2 = irdl.base @fly::@memref
    irdl.operands(atom: %c0, src: %c1, dst: %c2)
  }
  irdl.operation @copy {
    %c0 = irdl.any
    %c1 = irdl.base @fly::@memref
    %c2 = irdl.base @fly::@memref
    irdl.operands(copy: %c0, src: %c1, dst: %c2)
  }
  irdl.operation @copy_if {
    %c0 = irdl.any
    %c1 = irdl.base @fly::@memref
    %c2 = irdl.base @fly::@memref
    %c3 = irdl.base @fly::@memref
    %c4 = irdl.any
    irdl.operands(copy: %c0, src: %c1, dst: %c2, pred: %c3, fill: optional %c4)
  }
  irdl.operation @mma_atom_call {
    %c0 = irdl.base @fly::@mma_atom
    %c1 = irdl.any
    %c2 = irdl.any
    %c3 = irdl.any
    %c4 = irdl.any
    irdl.operands(atom: %c0, a: %c1, b: %c2, c: %c3)
    irdl.results(result: %c4)
  }
  irdl.operation @gemm {
    %c0 = irdl.any
    %c1 = irdl.any
    %c2 = irdl.any
    %c3 = irdl.any
    %c4 = irdl.any
    irdl.operands(mma: %c0, a: %c1, b: %c2, c: %c3)
    irdl.results(result: %c4)
  }
}
