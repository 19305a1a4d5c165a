/* fly_trace.c — the module, kernels and their parameters, control flow. */
#include <stdlib.h>
#include <string.h>

#include "fly_strbuf.h"
#include "fly_trace_internal.h"

#include <mlir-c/BuiltinAttributes.h>

static MlirStringRef ref(const char *s) { return mlirStringRefCreateFromCString(s); }

/* ---- kernels --------------------------------------------------------------------------------- */

static void put_escaped(FlyStrBuf *sb, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      fly_sb_putc(sb, '\\');
    fly_sb_putc(sb, *s);
  }
}

static void put_mlir_type(FlyStrBuf *sb, MlirType ty);
static void put_chunk(MlirStringRef s, void *sb) {
  for (size_t i = 0; i < s.length; i++)
    fly_sb_putc(sb, s.data[i]);
}
static void put_mlir_type(FlyStrBuf *sb, MlirType ty) { mlirTypePrint(ty, put_chunk, sb); }

/* The arguments of a parameter: a scalar or vec is one; a tensor is its
   data pointer, then each runtime leaf of its shape, then of its stride. */
static int param_args(const FlyVal *v, const FlyVal **leaves, int cap) {
  if (v->kind == FLY_V_RUNTIME)
    return 1;
  if (v->kind != FLY_V_TENSOR)
    return 0;
  int n = fly_trace_runtime_leaves(v->tensor.shape, leaves, cap);
  n += fly_trace_runtime_leaves(v->tensor.stride, leaves + n, cap - n);
  return 1 + n;
}

/* ` loc("file":line:col)` of a node, for IR written as text. */
static void put_loc(FlyTrace *t, FlyStrBuf *sb, const FlyNode *at) {
  if (!at || at->file < 0 || at->file >= t->unit->sources.count)
    return;
  uint32_t line, col;
  fly_source_line_col(&t->unit->sources, at->file, at->begin, &line, &col);
  fly_sb_puts(sb, " loc(\"");
  put_escaped(sb, t->unit->sources.files[at->file].path);
  fly_sb_puts(sb, "\":");
  fly_sb_int(sb, line);
  fly_sb_putc(sb, ':');
  fly_sb_int(sb, col);
  fly_sb_putc(sb, ')');
}

static bool kernel_begin(void *ctx, const FlyNode *k, int n, const FlyNode *const *decls,
                         FlyVal *const *params, const char *spec) {
  FlyTrace *t = ctx;
  t->kernel = k;
  t->nleaves = 0;
  t->ntmaps = 0;
  MlirLocation loc = fly_trace_loc(t, k);
  FlyStrBuf sb;
  fly_sb_init(&sb, &t->A);
  fly_sb_puts(&sb, "gpu.func @");
  fly_sb_puts(&sb, k->str);
  fly_sb_putc(&sb, '(');
  int nargs = 0;
  const FlyVal *leaves[FLY_MAX_MODES * 2];
  for (int i = 0; i < n; i++) {
    const FlyVal *v = params[i];
    int m = param_args(v, leaves, FLY_MAX_MODES * 2);
    for (int j = 0; j < m; j++) {
      if (nargs)
        fly_sb_puts(&sb, ", ");
      fly_sb_puts(&sb, "%a");
      fly_sb_int(&sb, nargs++);
      fly_sb_puts(&sb, ": ");
      if (v->kind == FLY_V_RUNTIME)
        put_mlir_type(&sb, fly_trace_type(t, v->type));
      else
        fly_sb_puts(&sb, j == 0 ? "!llvm.ptr<1>" : "i32");
      put_loc(t, &sb, decls[i]);
    }
  }
  fly_sb_puts(&sb, ") kernel attributes {fly.specialization = \"");
  put_escaped(&sb, spec);
  fly_sb_puts(&sb, "\"} {\n  gpu.return\n}");
  char *text = fly_sb_finish(&sb);
  if (!text)
    return fly_trace_error(t, k, "out of memory");
  /* The signature is easiest to write as text; a gpu.func parses only
     inside a gpu.module, from which it is then moved into ours. */
  char *wrapped = fly_alloc(&t->A, strlen(text) + 64);
  if (!wrapped)
    return fly_trace_error(t, k, "out of memory");
  sprintf(wrapped, "gpu.module @signature {\n%s\n}", text);
  MlirModule holder = mlirModuleCreateParse(t->m->ctx, ref(wrapped));
  if (mlirModuleIsNull(holder)) {
    char *why = fly_mlir_take_messages(t->m);
    fly_trace_error(t, k, "internal error: the kernel's signature does not parse: %s",
                    why ? why : text);
    free(why);
    return false;
  }
  MlirOperation gm = mlirBlockGetFirstOperation(mlirModuleGetBody(holder));
  t->func = mlirBlockGetFirstOperation(mlirRegionGetFirstBlock(mlirOperationGetRegion(gm, 0)));
  mlirOperationRemoveFromParent(t->func);
  mlirModuleDestroy(holder);
  mlirOperationSetLocation(t->func, loc);
  mlirBlockAppendOwnedOperation(t->kernels, t->func);
  MlirBlock entry = mlirRegionGetFirstBlock(mlirOperationGetRegion(t->func, 0));
  t->ip.block = entry;
  t->ip.before = mlirBlockGetTerminator(entry);
  mlirOperationSetLocation(t->ip.before, loc);
  /* Bind the handles: arguments in the order above. */
  int a = 0;
  for (int i = 0; i < n; i++) {
    FlyVal *v = params[i];
    int m = param_args(v, leaves, FLY_MAX_MODES * 2);
    if (!m)
      continue;
    MlirBlock b = entry;
    if (v->kind == FLY_V_RUNTIME) {
      v->ssa = mlirBlockGetArgument(b, a++).ptr;
      continue;
    }
    MlirValue ops[1 + FLY_MAX_MODES * 2];
    ops[0] = mlirBlockGetArgument(b, a++);
    for (int j = 1; j < m; j++) {
      ops[j] = mlirBlockGetArgument(b, a++);
      ((FlyVal *)leaves[j - 1])->ssa = ops[j].ptr;
    }
    t->loc = fly_trace_loc(t, decls[i]);
    /* Marked as the argument itself, not a view of it: AMD's buffer
       resources are made from its base and extent (fly_lower_buffer.c). */
    MlirNamedAttribute param = fly_mlir_named(t->m, "fly.param", mlirUnitAttrGet(t->m->ctx));
    MlirValue mem = fly_mlir_op1(t->m, t->ip, t->loc, "fly.make_memref",
                                 fly_trace_tensor_type(t, v), m, ops, 1, &param);
    v->ssa = mem.ptr;
  }
  return !t->failed;
}

static bool kernel_end(void *ctx, const FlyNode *k, bool ok) {
  FlyTrace *t = ctx;
  /* Each kernel is verified as soon as it is traced, so that a failure
     names it; MLIR's message carries the .fly location of the bad op. */
  if (ok && !mlirOperationIsNull(t->func) && !mlirOperationVerify(t->func)) {
    char *why = fly_mlir_take_messages(t->m);
    fly_trace_error(t, k,
                    "internal error: the IR traced for kernel '%s' does not verify (please "
                    "report this): %s",
                    k->str, why ? why : "");
    free(why);
    ok = false;
  }
  if (!ok && !mlirOperationIsNull(t->func)) {
    mlirOperationRemoveFromParent(t->func);
    mlirOperationDestroy(t->func);
    t->failed = true;
  }
  t->last_func = ok ? t->func : (MlirOperation){NULL};
  t->func.ptr = NULL;
  t->kernel = NULL;
  return true;
}

/* Attribute `name` of the kernel just traced: three dimensions. */
static bool set_kernel_dims(FlyTrace *t, const char *name, const int32_t dims[3]) {
  if (mlirOperationIsNull(t->last_func))
    return true;
  MlirAttribute a = mlirDenseI32ArrayGet(t->m->ctx, 3, dims);
  mlirOperationSetInherentAttributeByName(t->last_func, mlirStringRefCreateFromCString(name), a);
  return true;
}

/* gpu.func's known_block_size: the NVVM lowering makes it .reqntid (ptxas
   then shares the registers out for exactly that many threads, so a block
   of 1024 gets at most 64 each), the ROCDL lowering the work-group size. */
static bool kernel_block_size(void *ctx, const FlyNode *k, const int32_t dims[3]) {
  (void)k;
  return set_kernel_dims(ctx, "known_block_size", dims);
}

/* gpu.func's known_cluster_size: the NVVM lowering makes it
   .explicitcluster and .reqnctapercluster, the cluster shape the driver
   launches the kernel with. */
static bool kernel_cluster_size(void *ctx, const FlyNode *k, const int32_t dims[3]) {
  (void)k;
  return set_kernel_dims(ctx, "known_cluster_size", dims);
}

/* ---- values that change with control flow ------------------------------------------------- */

/* The runtime leaves of `res` (the result of an if or a loop), each with
   the leaf at the same place in `src` (what a branch or body gave, maybe a
   static number). A leaf that is the very value `src` has there (both
   branches gave one value, made before the if) needs no result: it keeps
   its handle. */
static int pair_leaves(const FlyVal *res, const FlyVal *src, const FlyVal **r, const FlyVal **s,
                       int cap) {
  if (res->kind == FLY_V_TUPLE) {
    int n = 0;
    for (int i = 0; i < res->n && n < cap; i++) {
      const FlyVal *si = src && src->kind == FLY_V_TUPLE && i < src->n ? src->elems[i] : NULL;
      n += pair_leaves(res->elems[i], si, r + n, s + n, cap - n);
    }
    return n;
  }
  if (res->kind != FLY_V_RUNTIME || res == src || cap <= 0)
    return 0;
  r[0] = res;
  s[0] = src;
  return 1;
}

enum { MAX_CARRIED = 256 };

/* Ends a block of an if or loop with scf.yield of the leaves of `src`
   matching the runtime leaves of `res`. */
static bool yield_leaves(FlyTrace *t, MlirBlock block, const FlyVal *res, const FlyVal *src) {
  const FlyVal *r[MAX_CARRIED], *s[MAX_CARRIED];
  int n = res ? pair_leaves(res, src, r, s, MAX_CARRIED) : 0;
  FlyInsert saved = t->ip;
  t->ip.block = block;
  t->ip.before.ptr = NULL;
  MlirValue v[MAX_CARRIED];
  for (int i = 0; i < n; i++) {
    v[i] = fly_trace_value(t, s[i], r[i]->type);
    if (mlirValueIsNull(v[i]))
      return false;
  }
  fly_mlir_op(t->m, t->ip, t->loc, "scf.yield", 0, NULL, n, v, 0, NULL, 0, NULL);
  t->ip = saved;
  return true;
}

typedef struct IfRegion {
  FlyInsert outer;
  MlirValue cond;
  MlirRegion region[2];
  MlirBlock block[2];
  MlirLocation loc;
} IfRegion;

static void *if_begin(void *ctx, const FlyVal *cond, const FlyNode *at) {
  FlyTrace *t = ctx;
  IfRegion *r = fly_alloc(&t->A, sizeof *r);
  if (!r)
    return NULL;
  r->loc = fly_trace_loc(t, at);
  r->outer = t->ip;
  r->cond = fly_trace_value(t, cond, NULL);
  if (mlirValueIsNull(r->cond))
    return NULL;
  for (int i = 0; i < 2; i++) {
    r->region[i] = mlirRegionCreate();
    r->block[i] = mlirBlockCreate(0, NULL, NULL);
    mlirRegionAppendOwnedBlock(r->region[i], r->block[i]);
  }
  t->ip.block = r->block[0];
  t->ip.before.ptr = NULL;
  return r;
}

static bool if_else(void *ctx, void *region) {
  FlyTrace *t = ctx;
  IfRegion *r = region;
  t->ip.block = r->block[1];
  t->ip.before.ptr = NULL;
  return true;
}

static bool if_end(void *ctx, void *region, const FlyVal *then_value, const FlyVal *else_value,
                   const FlyVal *result) {
  FlyTrace *t = ctx;
  IfRegion *r = region;
  t->ip = r->outer;
  const FlyVal *res[MAX_CARRIED], *unused[MAX_CARRIED];
  int n = result ? pair_leaves(result, then_value, res, unused, MAX_CARRIED) : 0;
  /* Nothing to build when the branches did not check, or when they do
     nothing and give nothing (as around a lone `return;`). */
  bool empty = n == 0 && mlirOperationIsNull(mlirBlockGetFirstOperation(r->block[0])) &&
               mlirOperationIsNull(mlirBlockGetFirstOperation(r->block[1]));
  if (!result || empty) {
    for (int i = 0; i < 2; i++)
      mlirRegionDestroy(r->region[i]);
    return true;
  }
  t->loc = r->loc;
  if (!yield_leaves(t, r->block[0], result, then_value) ||
      !yield_leaves(t, r->block[1], result, else_value))
    return false;
  MlirType types[MAX_CARRIED];
  for (int i = 0; i < n; i++)
    types[i] = fly_trace_type(t, res[i]->type);
  MlirOperation op =
      fly_mlir_op(t->m, t->ip, r->loc, "scf.if", n, types, 1, &r->cond, 0, NULL, 2, r->region);
  for (int i = 0; i < n; i++)
    ((FlyVal *)res[i])->ssa = mlirOperationGetResult(op, i).ptr;
  return true;
}

typedef struct ForRegion {
  FlyInsert outer;
  MlirRegion region;
  MlirBlock body;
  int n; /* operands: lb, ub, step, then the initial values */
  MlirValue operands[3 + MAX_CARRIED];
  MlirLocation loc;
} ForRegion;

static void *for_begin(void *ctx, const FlyVal *lo, const FlyVal *hi, const FlyVal *step,
                       FlyVal *var, int n, const FlyVal *const *init, FlyVal *const *carried,
                       const FlyNode *at) {
  FlyTrace *t = ctx;
  ForRegion *r = fly_alloc(&t->A, sizeof *r);
  if (!r)
    return NULL;
  r->loc = fly_trace_loc(t, at);
  r->outer = t->ip;
  const FlyVal *bounds[3] = {lo, hi, step};
  for (int i = 0; i < 3; i++)
    if (mlirValueIsNull(r->operands[i] = fly_trace_value(t, bounds[i], var->type)))
      return NULL;
  const FlyVal *cl[MAX_CARRIED], *il[MAX_CARRIED];
  int m = 0;
  for (int i = 0; i < n; i++)
    m += pair_leaves(carried[i], init[i], cl + m, il + m, MAX_CARRIED - m);
  MlirType types[1 + MAX_CARRIED];
  MlirLocation locs[1 + MAX_CARRIED];
  types[0] = fly_trace_type(t, var->type);
  locs[0] = r->loc;
  for (int i = 0; i < m; i++) {
    types[1 + i] = fly_trace_type(t, cl[i]->type);
    locs[1 + i] = r->loc;
    if (mlirValueIsNull(r->operands[3 + i] = fly_trace_value(t, il[i], cl[i]->type)))
      return NULL;
  }
  r->n = 3 + m;
  r->region = mlirRegionCreate();
  r->body = mlirBlockCreate(1 + m, types, locs);
  mlirRegionAppendOwnedBlock(r->region, r->body);
  var->ssa = mlirBlockGetArgument(r->body, 0).ptr;
  for (int i = 0; i < m; i++)
    ((FlyVal *)cl[i])->ssa = mlirBlockGetArgument(r->body, 1 + i).ptr;
  t->ip.block = r->body;
  t->ip.before.ptr = NULL;
  return r;
}

static bool for_end(void *ctx, void *region, int n, const FlyVal *const *yielded,
                    FlyVal *const *results) {
  FlyTrace *t = ctx;
  ForRegion *r = region;
  t->ip = r->outer;
  t->loc = r->loc;
  const FlyVal *res = fly_val_tuple(&t->A, n, (const FlyVal **)results);
  const FlyVal *got = fly_val_tuple(&t->A, n, (const FlyVal **)yielded);
  if (!res || !got || !yield_leaves(t, r->body, res, got))
    return false;
  const FlyVal *rl[MAX_CARRIED], *unused[MAX_CARRIED];
  int m = pair_leaves(res, NULL, rl, unused, MAX_CARRIED);
  MlirType types[MAX_CARRIED];
  for (int i = 0; i < m; i++)
    types[i] = fly_trace_type(t, rl[i]->type);
  MlirOperation op = fly_mlir_op(t->m, t->ip, r->loc, "scf.for", m, types, r->n, r->operands, 0,
                                 NULL, 1, &r->region);
  for (int i = 0; i < m; i++)
    ((FlyVal *)rl[i])->ssa = mlirOperationGetResult(op, i).ptr;
  return true;
}

static void for_abandon(void *ctx, void *region) {
  FlyTrace *t = ctx;
  ForRegion *r = region;
  t->ip = r->outer;
  mlirRegionDestroy(r->region);
}

typedef struct WhileRegion {
  FlyInsert outer;
  MlirRegion region[2]; /* the condition's, the body's */
  MlirBlock block[2];
  int n; /* leaves carried */
  MlirValue init[MAX_CARRIED];
  MlirType types[MAX_CARRIED];
  MlirLocation loc;
} WhileRegion;

/* The runtime leaves of the carried values, in order. */
static int carried_leaves(int n, FlyVal *const *carried, const FlyVal *const *init,
                          const FlyVal **leaves, const FlyVal **init_leaves) {
  int m = 0;
  for (int i = 0; i < n; i++)
    m += pair_leaves(carried[i], init ? init[i] : NULL, leaves + m, init_leaves + m,
                     MAX_CARRIED - m);
  return m;
}

/* A block of the loop whose arguments are the handles of the carried
   leaves; the insertion point moves into it. */
static void enter_block(FlyTrace *t, WhileRegion *r, int which, int n, FlyVal *const *carried) {
  const FlyVal *cl[MAX_CARRIED], *unused[MAX_CARRIED];
  MlirLocation locs[MAX_CARRIED];
  int m = carried_leaves(n, carried, NULL, cl, unused);
  for (int i = 0; i < m; i++)
    locs[i] = r->loc;
  r->region[which] = mlirRegionCreate();
  r->block[which] = mlirBlockCreate(m, r->types, locs);
  mlirRegionAppendOwnedBlock(r->region[which], r->block[which]);
  for (int i = 0; i < m; i++)
    ((FlyVal *)cl[i])->ssa = mlirBlockGetArgument(r->block[which], i).ptr;
  t->ip.block = r->block[which];
  t->ip.before.ptr = NULL;
}

static void *while_begin(void *ctx, int n, const FlyVal *const *init, FlyVal *const *carried,
                         const FlyNode *at) {
  FlyTrace *t = ctx;
  WhileRegion *r = fly_alloc(&t->A, sizeof *r);
  if (!r)
    return NULL;
  memset(r, 0, sizeof *r);
  r->loc = fly_trace_loc(t, at);
  r->outer = t->ip;
  const FlyVal *cl[MAX_CARRIED], *il[MAX_CARRIED];
  r->n = carried_leaves(n, carried, init, cl, il);
  for (int i = 0; i < r->n; i++) {
    r->types[i] = fly_trace_type(t, cl[i]->type);
    if (mlirValueIsNull(r->init[i] = fly_trace_value(t, il[i], cl[i]->type)))
      return NULL;
  }
  enter_block(t, r, 0, n, carried);
  return r;
}

static bool while_body(void *ctx, void *region, const FlyVal *cond, int n, FlyVal *const *carried) {
  FlyTrace *t = ctx;
  WhileRegion *r = region;
  t->loc = r->loc;
  MlirValue ops[1 + MAX_CARRIED];
  ops[0] = fly_trace_value(t, cond, fly_type_scalar(FLY_TYPE_I1));
  if (mlirValueIsNull(ops[0]))
    return false;
  /* The condition passes the carried values on unchanged: to the body, or
     out as the loop's results. */
  for (int i = 0; i < r->n; i++)
    ops[1 + i] = mlirBlockGetArgument(r->block[0], i);
  fly_mlir_op(t->m, t->ip, r->loc, "scf.condition", 0, NULL, 1 + r->n, ops, 0, NULL, 0, NULL);
  enter_block(t, r, 1, n, carried);
  return true;
}

static bool while_end(void *ctx, void *region, int n, const FlyVal *const *yielded,
                      FlyVal *const *results) {
  FlyTrace *t = ctx;
  WhileRegion *r = region;
  t->ip = r->outer;
  t->loc = r->loc;
  const FlyVal *res = fly_val_tuple(&t->A, n, (const FlyVal **)results);
  const FlyVal *got = fly_val_tuple(&t->A, n, (const FlyVal **)yielded);
  if (!res || !got || !yield_leaves(t, r->block[1], res, got))
    return false;
  MlirOperation op = fly_mlir_op(t->m, t->ip, r->loc, "scf.while", r->n, r->types, r->n, r->init, 0,
                                 NULL, 2, r->region);
  const FlyVal *rl[MAX_CARRIED], *unused[MAX_CARRIED];
  int m = carried_leaves(n, results, NULL, rl, unused);
  for (int i = 0; i < m; i++)
    ((FlyVal *)rl[i])->ssa = mlirOperationGetResult(op, i).ptr;
  return true;
}

static void while_abandon(void *ctx, void *region) {
  FlyTrace *t = ctx;
  WhileRegion *r = region;
  t->ip = r->outer;
  for (int i = 0; i < 2; i++)
    if (!mlirRegionIsNull(r->region[i]))
      mlirRegionDestroy(r->region[i]);
}

/* ---- the unit ------------------------------------------------------------------------------ */

bool fly_trace_unit(FlyUnit *u, const FlyCheckOptions *o, FlyMlir *m, MlirModule *out) {
  FlyTrace t;
  memset(&t, 0, sizeof t);
  t.m = m;
  t.unit = u;
  fly_algebra_init(&t.A);
  t.target = o->target;
  t.loc = mlirLocationUnknownGet(m->ctx);
  t.module = mlirModuleCreateParse(
      m->ctx, ref("module attributes {gpu.container_module} {\n  gpu.module @kernels {\n  }\n}"));
  bool ok = !mlirModuleIsNull(t.module);
  if (ok) {
    MlirOperation gm = mlirBlockGetFirstOperation(mlirModuleGetBody(t.module));
    /* The module and its gpu.module stand for the root file. */
    if (u->root >= 0) {
      MlirLocation file = mlirLocationFileLineColGet(
          m->ctx, mlirStringRefCreateFromCString(u->sources.files[u->root].path), 1, 1);
      mlirOperationSetLocation(mlirModuleGetOperation(t.module), file);
      mlirOperationSetLocation(gm, file);
    }
    t.kernels = mlirRegionGetFirstBlock(mlirOperationGetRegion(gm, 0));
    FlyEmitter em = {
        .ctx = &t,
        .kernel_begin = kernel_begin,
        .kernel_end = kernel_end,
        .kernel_block_size = kernel_block_size,
        .kernel_cluster_size = kernel_cluster_size,
        .value = fly_trace_value_op,
        .effect = fly_trace_effect_op,
        .if_begin = if_begin,
        .if_else = if_else,
        .if_end = if_end,
        .for_begin = for_begin,
        .for_end = for_end,
        .for_abandon = for_abandon,
        .while_begin = while_begin,
        .while_body = while_body,
        .while_end = while_end,
        .while_abandon = while_abandon,
    };
    FlyCheckOptions opts = *o;
    opts.emit = &em;
    ok = fly_check_unit(u, &opts) && !t.failed;
  }
  fly_algebra_release(&t.A);
  if (!ok) {
    if (!mlirModuleIsNull(t.module))
      mlirModuleDestroy(t.module);
    return false;
  }
  *out = t.module;
  return true;
}
