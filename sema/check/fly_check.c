/* fly_check.c — the semantic pass over a unit: globals, top-level
 * constants and assertions, kernel specialisations and launch blocks; and
 * the evaluation of lone expressions for `flyc eval` and `flyc layout`. */
#include "fly_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_interp.h"
#include "fly_kernel_record.h"
#include "fly_layout_draw.h"
#include "fly_layout_tv.h"
#include "fly_output.h"
#include "fly_parse.h"

void fly_check_options_init(FlyCheckOptions *o) {
  memset(o, 0, sizeof *o);
  o->target = fly_target_find(FLY_DEFAULT_TARGET);
  o->step_limit = FLY_DEFAULT_STEP_LIMIT;
  o->depth_limit = FLY_DEFAULT_DEPTH_LIMIT;
}

/* ---- globals ---------------------------------------------------------------------------- */

void fly_resolve_unit(FlyInterp *I); /* fly_resolve.c */

static void add_pattern_names(FlyInterp *I, const FlyNode *pat, const FlyNode *block) {
  if (!pat)
    return;
  if (pat->kind == FLY_PAT_NAME)
    fly_global_add(I, pat->str, pat->len, pat, block);
  else if (pat->kind == FLY_PAT_TUPLE)
    for (const FlyNode *k = pat->kid[0]; k; k = k->next)
      add_pattern_names(I, k, block);
}

/* The names a statement of a top-level const block declares, which become
   global constants: those its lets and consts bind, the carried names of
   its loops (they hold their final values after the loop), and those of a
   const block inside it. */
static void add_block_names(FlyInterp *I, const FlyNode *st, const FlyNode *block) {
  switch (st->kind) {
  case FLY_LET:
    add_pattern_names(I, st->kid[0], block);
    break;
  case FLY_CONST:
    fly_global_add(I, st->str, st->len, st, block);
    break;
  case FLY_FOR:
  case FLY_WHILE:
    for (const FlyNode *c = st->kid[2]; c; c = c->next)
      fly_global_add(I, c->str, c->len, c, block);
    break;
  case FLY_CONST_BLOCK:
    for (const FlyNode *k = st->kid[0] ? st->kid[0]->kid[0] : NULL; k; k = k->next)
      add_block_names(I, k, block);
    break;
  default:
    break;
  }
}

static void check_builtin_clash(FlyInterp *I, const FlyNode *d) {
  if (fly_is_builtin_name(d->str, d->len))
    fly_error(I->diag, fly_node_name_span(d),
              "'%s' is a builtin name; a top-level definition cannot reuse it", d->str);
}

static void register_globals(FlyInterp *I) {
  FlyUnit *u = I->unit;
  for (int f = 0; f < I->nfiles; f++) {
    const FlyNode *m = u->trees ? u->trees[f] : NULL;
    for (const FlyNode *it = m ? m->kid[0] : NULL; it; it = it->next) {
      switch (it->kind) {
      case FLY_FN:
      case FLY_KERNEL:
      case FLY_CONST:
        check_builtin_clash(I, it);
        fly_global_add(I, it->str, it->len, it, NULL);
        break;
      case FLY_CONST_BLOCK:
        for (const FlyNode *st = it->kid[0] ? it->kid[0]->kid[0] : NULL; st; st = st->next)
          add_block_names(I, st, it);
        break;
      default:
        break;
      }
    }
  }
}

/* Files in the order their imports finished: a library before its users. */
static int *files_in_order(FlyUnit *u, int n) {
  int *order = malloc(sizeof *order * (size_t)(n ? n : 1));
  if (!order)
    return NULL;
  int k = 0;
  for (int r = 0; r < u->ranked; r++)
    for (int f = 0; f < n; f++)
      if (u->trees[f] && u->rank[f] == r)
        order[k++] = f;
  for (; k < n; k++)
    order[k] = -1;
  return order;
}

/* ---- specialisations ----------------------------------------------------------------------- */

/* A -D value, parsed and evaluated once per use. */
static const FlyVal *define_value(FlyInterp *I, const FlyDefine *d, const FlyNode **node) {
  char name[160], err[256];
  snprintf(name, sizeof name, "-D %s", d->name);
  int file = fly_sources_add(&I->unit->sources, name, d->value, strlen(d->value), err, sizeof err);
  if (file < 0) {
    fly_error(I->diag, fly_no_span(), "-D %s: %s", d->name, err);
    return NULL;
  }
  int errors = I->diag->errors;
  const FlyNode *e = fly_parse_expr(&I->unit->arena, I->diag, file);
  if (!e || I->diag->errors != errors)
    return NULL;
  *node = e;
  char what[200];
  snprintf(what, sizeof what, "the value of -D %s", d->name);
  return fly_eval_static(I, NULL, e, what);
}

/* The last -D of a name wins; all of them count as used. */
static const FlyDefine *find_define(const FlyCheckOptions *o, const char *name, bool *used) {
  const FlyDefine *d = NULL;
  for (int i = 0; i < o->ndefines; i++)
    if (strcmp(o->defines[i].name, name) == 0) {
      used[i] = true;
      d = &o->defines[i];
    }
  return d;
}

/* A runtime parameter's value: a tensor whose `?` shape and stride leaves
   are runtime values given at launch, or a runtime scalar. */
static const FlyVal *runtime_param(FlyInterp *I, FlyScope *s, const FlyNode *p,
                                   const FlyNode *kernel) {
  if (!p->kid[0]) {
    fly_err(I, p,
            "the runtime parameter '%s' of a kernel needs a type (only const parameters "
            "may leave it out)",
            p->str);
    return NULL;
  }
  const FlyType *t = fly_eval_type(I, s, p->kid[0]);
  if (!t)
    return NULL;
  char *why = fly_alloc(&I->A, 200);
  if (!why)
    return NULL;
  if (t->kind == FLY_TY_TENSOR) {
    if (t->space != FLY_SPACE_GLOBAL) {
      fly_err(I, p->kid[0],
              "a kernel parameter is a tensor in global memory; shared memory and "
              "registers are allocated inside the kernel");
      return NULL;
    }
    snprintf(why, 200, "the layout of '%s', given when kernel '%s' is launched", p->str,
             kernel->str);
    /* tensor<T> is a contiguous vector: its length is given at launch,
       its stride is 1, so accesses can be vectorised. */
    const FlyVal *shape = t->shape ? t->shape : fly_val_dynamic();
    const FlyVal *stride = t->stride ? t->stride : fly_val_int(&I->A, 1, NULL);
    FlyOrigin o = {p, why};
    const FlyVal *sh = fly_map_leaves(I, shape, fly_leaf_runtime_if_dynamic, &o);
    const FlyVal *st = sh ? fly_map_leaves(I, stride, fly_leaf_runtime_if_dynamic, &o) : NULL;
    FlyVal *v = st ? (FlyVal *)fly_make_tensor(I, t->elem, FLY_SPACE_GLOBAL, sh, st) : NULL;
    if (v)
      v->tensor.align = t->align;
    return v;
  }
  if (t->kind != FLY_TY_SCALAR && t->kind != FLY_TY_VEC) {
    fly_err(I, p->kid[0],
            "a runtime kernel parameter is a tensor, a number or a vec, not %s; "
            "make it a const parameter",
            fly_type_str(&I->A, t));
    return NULL;
  }
  snprintf(why, 200, "'%s', a runtime parameter of kernel '%s'", p->str, kernel->str);
  FlyOrigin o = {p, why};
  return fly_val_runtime(&I->A, t, o);
}

/* Binds a kernel's parameters for one specialisation; prints it when asked.
   params (when not NULL) receives the values, spec the description. */
static FlyScope *bind_kernel(FlyInterp *I, const FlyNode *k, bool *used, FlyVal **params,
                             char **spec) {
  FlyScope *s = fly_scope_new(I, NULL);
  if (!s)
    return NULL;
  char line[1024];
  int len = snprintf(line, sizeof line, "%s", k->str);
  bool ok = true;
  /* The const parameters first, wherever they are written, so that a
     runtime parameter's type may name any of them: X: tensor<T> with
     const T: type after it. params keeps the order of the declaration. */
  for (int pass = 0; pass < 2; pass++) {
    int index = 0;
    for (const FlyNode *p = k->kid[0]; p; p = p->next, index++) {
      bool is_const = (p->flags & FLY_IS_CONST) != 0;
      if (is_const != (pass == 0))
        continue;
      const FlyVal *v;
      if (is_const) {
        const FlyDefine *d = find_define(&I->options, p->str, used);
        const FlyNode *from = p->kid[1] ? p->kid[1] : p;
        if (d) {
          v = define_value(I, d, &from);
        } else if (p->kid[1]) {
          v = fly_eval_static(I, s, p->kid[1], "the default of a const parameter");
        } else {
          fly_err(I, p,
                  "the const parameter '%s' of kernel '%s' has no value: give it a default "
                  "or pass -D %s=VALUE",
                  p->str, k->str, p->str);
          v = NULL;
        }
        if (v && p->kid[0]) {
          const FlyType *t = fly_eval_type(I, s, p->kid[0]);
          v = t ? fly_convert(I, v, t, from, false) : NULL;
        }
        if (v && len < (int)sizeof line)
          len += snprintf(line + len, sizeof line - (size_t)len, " %s=%s", p->str,
                          fly_val_str_canonical(&I->A, v));
      } else {
        v = runtime_param(I, s, p, k);
      }
      if (!v) {
        ok = false;
        fly_scope_bind(I, s, p->str, p->len, fly_val_poison(), p);
        continue;
      }
      if (params)
        params[index] = (FlyVal *)v;
      fly_scope_bind(I, s, p->str, p->len, v, p);
    }
  }
  if (!ok)
    return NULL;
  if (I->options.specializations)
    fprintf(I->options.specializations, "%s @%s\n", line, I->target->arch);
  if (spec && (*spec = fly_alloc(&I->A, strlen(line) + strlen(I->target->arch) + 3)))
    sprintf(*spec, "%s @%s", line, I->target->arch);
  return s;
}

/* `require COND, "why";`: a precondition of the launch. One that holds for
   every launch of this specialisation costs nothing; one that never holds
   is an error here; the others are checked by the runtime before each
   launch, which refuses it with the kernel's own message. */
static void check_require(FlyInterp *I, FlyScope *s, const FlyNode *st, FlyKernelInfo *info) {
  const FlyVal *msg = NULL;
  if (st->kid[1]) {
    msg = fly_eval_static(I, s, st->kid[1], "the message of require");
    if (!msg)
      return;
    if (msg->kind != FLY_V_STR) {
      fly_err(I, st->kid[1], "the message of require must be a string, not %s",
              fly_val_describe(&I->A, msg));
      return;
    }
  }
  const FlyVal *c = fly_eval(I, s, st->kid[0]);
  if (!c)
    return;
  bool is_bool =
      c->kind == FLY_V_BOOL || (c->kind == FLY_V_RUNTIME && c->type &&
                                c->type->kind == FLY_TY_SCALAR && c->type->code == FLY_TYPE_I1);
  if (!is_bool) {
    fly_err(I, st->kid[0], "the condition of require must be a bool, not %s",
            fly_val_describe(&I->A, c));
    return;
  }
  if (c->kind == FLY_V_BOOL) {
    if (!c->i) {
      /* Known now: every launch of this specialisation would be refused. */
      const char *k = I->kernel ? I->kernel->str : "";
      if (msg)
        fly_err(I, st->kid[0], "this requirement never holds for kernel '%s' as compiled: %.*s", k,
                (int)msg->len, msg->s);
      else
        fly_err(I, st->kid[0], "this requirement never holds for kernel '%s' as compiled", k);
    }
    return;
  }
  if (info)
    fly_kernel_record_require(I, info, c, msg ? msg->s : NULL, msg ? msg->len : 0, st->kid[0]);
}

/* `cluster = (x, y, z);` (or a number, or a tuple of fewer): the blocks of a
   thread-block cluster, fixed when the kernel is compiled (the binary
   carries it, PTX's .reqnctapercluster) and so a compile-time constant;
   at most 8 blocks, the portable size every sm_90 device runs. */
static void check_cluster(FlyInterp *I, const FlyNode *it, const FlyVal *v, FlyKernelInfo *info) {
  const FlyNode *at = it->kid[0];
  if (!fly_target_has(I->target, FLY_FEATURE_CLUSTER)) {
    fly_error(I->diag, fly_node_name_span(it),
              "the launch setting cluster needs thread-block clusters, which %s does not have; "
              "they run on %s",
              I->target->arch, fly_targets_with_feature(FLY_FEATURE_CLUSTER));
    return;
  }
  bool tuple = v->kind == FLY_V_TUPLE;
  int n = tuple ? v->n : 1;
  int64_t dims[3] = {1, 1, 1};
  bool ok = n >= 1 && n <= 3;
  for (int i = 0; ok && i < n; i++) {
    const FlyVal *e = tuple ? v->elems[i] : v;
    ok = e->kind == FLY_V_INT;
    if (ok)
      dims[i] = e->i;
  }
  if (!ok) {
    fly_err(I, at,
            "cluster is a number or a tuple of 1 to 3 numbers known at compile time (the "
            "binary carries it), not %s",
            fly_val_describe(&I->A, v));
    return;
  }
  int64_t size = 1;
  for (int i = 0; i < 3; i++) {
    if (dims[i] < 1 || dims[i] > 8) {
      fly_err(I, at, "cluster's dimensions are 1 to 8 blocks, not %lld", (long long)dims[i]);
      return;
    }
    size *= dims[i];
  }
  if (size > 8) {
    fly_err(I, at, "a cluster has at most 8 blocks, not %lld (%lld x %lld x %lld)", (long long)size,
            (long long)dims[0], (long long)dims[1], (long long)dims[2]);
    return;
  }
  /* A cluster of one block is no cluster: the kernel launches as one without
     (a kernel's cluster can then be a const that is 1 in some
     specialisations). */
  if (size == 1)
    return;
  for (int i = 0; i < 3; i++) {
    I->cluster[i] = (int32_t)dims[i];
    if (info)
      info->cluster[i] = (uint32_t)dims[i];
  }
}

static void check_launch(FlyInterp *I, FlyScope *params, const FlyNode *launch,
                         FlyKernelInfo *info) {
  FlyScope *s = fly_scope_new(I, params);
  if (!s)
    return;
  I->in_launch = true;
  const FlyNode *seen[4] = {NULL, NULL, NULL, NULL};
  static const char *const fields[4] = {"grid", "block", "shared", "cluster"};
  for (const FlyNode *it = launch->kid[0]; it && !I->aborted; it = it->next) {
    if (it->kind == FLY_REQUIRE) {
      check_require(I, s, it, info);
      continue;
    }
    if (it->kind != FLY_LAUNCH_FIELD) {
      fly_exec_stmt(I, s, it);
      continue;
    }
    int f = -1;
    for (int i = 0; i < 4; i++)
      if (strcmp(it->str, fields[i]) == 0)
        f = i;
    if (f < 0) {
      fly_error(I->diag, fly_node_name_span(it),
                "unknown launch setting '%s' (the settings are grid, block, shared and cluster)",
                it->str);
      continue;
    }
    if (seen[f]) {
      fly_error(I->diag, fly_node_name_span(it), "'%s' is set twice", it->str);
      fly_note(I->diag, fly_node_name_span(seen[f]), "it was first set here");
      continue;
    }
    seen[f] = it;
    const FlyVal *v = fly_eval(I, s, it->kid[0]);
    if (!v)
      continue;
    if (f == 3) {
      check_cluster(I, it, v, info);
      continue;
    }
    bool tuple_ok = f < 2 && v->kind == FLY_V_TUPLE && v->n >= 1 && v->n <= 3;
    int n = tuple_ok ? v->n : 1;
    bool ok = true;
    for (int i = 0; ok && i < n; i++) {
      const FlyVal *e = tuple_ok ? v->elems[i] : v;
      bool integer = e->kind == FLY_V_INT || (e->kind == FLY_V_RUNTIME && fly_type_is_int(e->type));
      if (!integer) {
        fly_err(I, it->kid[0], "%s is %s, not %s", it->str,
                f == 2 ? "a number of bytes" : "a number or a tuple of 1 to 3 numbers",
                fly_val_describe(&I->A, e));
        ok = false;
      } else if (e->kind == FLY_V_INT && (e->i < (f == 2 ? 0 : 1) || e->i > INT32_MAX)) {
        fly_err(I, it->kid[0], "%s must be %s, not %lld", it->str,
                f == 2 ? "between 0 and 2^31-1" : "between 1 and 2^31-1", (long long)e->i);
        ok = false;
      }
    }
    if (ok && info)
      fly_kernel_record_field(I, info, f, v, it->kid[0]);
    if (ok && f == 1) {
      I->has_static_block = true;
      for (int i = 0; i < 3; i++) {
        const FlyVal *e = i >= n ? NULL : tuple_ok ? v->elems[i] : v;
        if (e && e->kind != FLY_V_INT)
          I->has_static_block = false;
        else
          I->static_block[i] = e ? (int32_t)e->i : 1;
      }
    }
  }
  for (int i = 0; i < 2 && !I->aborted; i++)
    if (!seen[i])
      fly_error(I->diag, fly_node_name_span(launch), "the launch block of '%s' does not set %s",
                launch->str, fields[i]);
  I->in_launch = false;
}

static const FlyNode *find_launch(FlyInterp *I, const FlyNode *kernel) {
  FlyUnit *u = I->unit;
  for (int f = 0; f < I->nfiles; f++)
    for (const FlyNode *it = u->trees[f] ? u->trees[f]->kid[0] : NULL; it; it = it->next)
      if (it->kind == FLY_LAUNCH && strcmp(it->str, kernel->str) == 0)
        return it;
  return NULL;
}

static int count_params(const FlyNode *k) {
  int n = 0;
  for (const FlyNode *p = k->kid[0]; p; p = p->next)
    n++;
  return n;
}

/* Tracing: the kernel's parameters go to the emitter before its body runs,
   and it is told how the body ended. */
static bool trace_begin(FlyInterp *I, const FlyNode *k, FlyVal **params, const char *spec) {
  int n = count_params(k);
  const FlyNode **decls = fly_alloc(&I->A, sizeof *decls * (size_t)(n ? n : 1));
  if (!decls)
    return false;
  n = 0;
  for (const FlyNode *p = k->kid[0]; p; p = p->next)
    decls[n++] = p;
  return I->emit->kernel_begin(I->emit->ctx, k, n, decls, params, spec);
}

/* The launch block, evaluated in the scope of the kernel's parameters. */
typedef struct LaunchRun {
  FlyScope *params;
  FlyKernelInfo *info;
} LaunchRun;

static void run_launch(FlyInterp *I, const FlyNode *launch, void *arg) {
  LaunchRun *r = arg;
  check_launch(I, r->params, launch, r->info);
}

static void check_kernel(FlyInterp *I, const FlyNode *k, bool *used) {
  const FlyCheckOptions *o = &I->options;
  /* With --kernel NAME only that kernel is specialised: -D binds its const
     parameters alone, and the other kernels of the file and its imports
     (templates nobody asked for, whose consts may not take those values)
     are not checked. */
  if (o->only_kernel && strcmp(o->only_kernel, k->str) != 0)
    return;
  I->kernel = k;
  I->smem_bytes = 0;
  I->smem_at_launch = NULL;
  I->has_static_block = false;
  I->named_barrier_threads = 0;
  I->named_barrier_at = NULL;
  memset(I->cluster, 0, sizeof I->cluster);
  bool trace = o->emit != NULL;
  bool record = o->kernel_info != NULL;
  FlyVal **params = fly_alloc(&I->A, sizeof *params * (size_t)(count_params(k) + 1));
  char *spec = NULL;
  I->emit = NULL;
  FlyScope *s = bind_kernel(I, k, used, params, &spec);
  FlyKernelInfo *info = NULL;
  if (s && record && spec && params && !I->aborted) {
    int n = count_params(k);
    const FlyNode **decls = fly_alloc(&I->A, sizeof *decls * (size_t)(n ? n : 1));
    n = 0;
    for (const FlyNode *p = k->kid[0]; decls && p; p = p->next)
      decls[n++] = p;
    info = decls ? fly_kernel_record_begin(I, k, n, decls, params, spec) : NULL;
    if (!info)
      I->aborted = true;
  }
  I->kernel_params = params;
  I->nkernel_params = params ? count_params(k) : 0;
  I->kernel_info = info;
  I->tmaps = NULL;
  I->ntmaps = 0;
  if (s && trace && spec && params && !I->aborted) {
    I->emit = o->emit;
    if (!trace_begin(I, k, params, spec)) {
      I->aborted = true;
      I->emit = NULL;
      s = NULL;
    }
  }
  if (s && !I->aborted) {
    int errors = I->diag->errors;
    fly_eval_block(I, s, k->kid[2]);
    if (I->emit) {
      FlyEmitter *em = I->emit;
      I->emit = NULL;
      if (!em->kernel_end(em->ctx, k, I->diag->errors == errors && !I->aborted))
        I->aborted = true;
    }
    I->returning = false;
    I->returned = NULL;
    I->jumping = FLY_EXIT_NONE;
    I->jump_next = I->exit_next = NULL;
    memset(I->exits, 0, sizeof I->exits);
    /* The launch block is always run as the bundle will record it, so that
       what cannot be recorded is an error for `flyc check` too. */
    const FlyNode *launch = find_launch(I, k);
    FlyKernelInfo scratch;
    memset(&scratch, 0, sizeof scratch);
    LaunchRun run = {s, info ? info : &scratch};
    if (launch && !I->aborted && params)
      fly_kernel_record_launch(I, run.info, count_params(k), params, launch, run_launch, &run);
    fly_kernel_info_clear(&scratch);
    if (!I->aborted)
      fly_check_named_barriers(I);
    if (trace && o->emit && o->emit->kernel_block_size && I->has_static_block && !I->aborted &&
        !o->emit->kernel_block_size(o->emit->ctx, k, I->static_block))
      I->aborted = true;
    if (trace && o->emit && o->emit->kernel_cluster_size && I->cluster[0] && !I->aborted &&
        !o->emit->kernel_cluster_size(o->emit->ctx, k, I->cluster))
      I->aborted = true;
  }
  I->kernel = NULL;
  I->kernel_params = NULL;
  I->nkernel_params = 0;
  I->kernel_info = NULL;
  I->aborted = fly_diag_stopped(I->diag);
}

static void check_orphan_launches(FlyInterp *I) {
  FlyUnit *u = I->unit;
  for (int f = 0; f < I->nfiles; f++)
    for (const FlyNode *it = u->trees[f] ? u->trees[f]->kid[0] : NULL; it; it = it->next) {
      if (it->kind != FLY_LAUNCH)
        continue;
      FlyGlobal *g = fly_global_find(I, it->str, it->len);
      if (!g) {
        fly_error(I->diag, fly_node_name_span(it), "launch block for '%s', which is not defined",
                  it->str);
      } else if (g->decl->kind != FLY_KERNEL) {
        fly_error(I->diag, fly_node_name_span(it), "launch block for '%s', which is not a kernel",
                  it->str);
        fly_note(I->diag, fly_node_name_span(g->decl), "'%s' is defined here", it->str);
      }
    }
}

bool fly_check_unit(FlyUnit *u, const FlyCheckOptions *o) {
  int errors = u->diag.errors;
  FlyInterp I;
  fly_interp_init(&I, u, o);
  register_globals(&I);
  fly_resolve_unit(&I);
  /* Unknown names would be reported again wherever evaluation meets them. */
  if (u->diag.errors != errors) {
    fly_interp_release(&I);
    return false;
  }
  int *order = files_in_order(u, I.nfiles);
  bool *used = calloc((size_t)(o->ndefines ? o->ndefines : 1), sizeof *used);
  if (order && used) {
    /* Top-level constants and assertions, library files first. */
    for (int i = 0; i < I.nfiles && order[i] >= 0 && !I.aborted; i++)
      for (const FlyNode *it = u->trees[order[i]]->kid[0]; it && !I.aborted; it = it->next) {
        if (it->kind == FLY_CONST) {
          FlyGlobal *g = fly_global_find(&I, it->str, it->len);
          if (g && g->decl == it)
            fly_global_value(&I, g, it);
        } else if (it->kind == FLY_CONST_BLOCK) {
          bool any = false;
          for (int k = 0; k < I.nglobals_cap; k++)
            if (I.globals[k].name && I.globals[k].block == it) {
              fly_global_value(&I, &I.globals[k], it);
              any = true;
              break;
            }
          if (!any) {
            FlyScope *s = fly_scope_new(&I, NULL);
            if (s)
              fly_exec_stmt(&I, s, it);
          }
        } else if (it->kind == FLY_STATIC_ASSERT) {
          FlyScope *s = fly_scope_new(&I, NULL);
          if (s)
            fly_exec_stmt(&I, s, it);
        }
        I.aborted = I.aborted || fly_diag_stopped(I.diag);
      }
    check_orphan_launches(&I);
    for (int i = 0; i < I.nfiles && order[i] >= 0 && !I.aborted; i++)
      for (const FlyNode *it = u->trees[order[i]]->kid[0]; it && !I.aborted; it = it->next)
        if (it->kind == FLY_KERNEL)
          check_kernel(&I, it, used);
    bool missing = false;
    if (o->only_kernel && !I.aborted) {
      FlyGlobal *g = fly_global_find(&I, o->only_kernel, (uint32_t)strlen(o->only_kernel));
      missing = !g || g->decl->kind != FLY_KERNEL;
      if (missing)
        fly_error(&u->diag, fly_no_span(), "--kernel %s: there is no kernel named '%s'",
                  o->only_kernel, o->only_kernel);
    }
    for (int i = 0; i < o->ndefines && !I.aborted && !missing; i++)
      if (!used[i] && o->only_kernel)
        fly_error(&u->diag, fly_no_span(), "-D %s: kernel '%s' has no const parameter named '%s'",
                  o->defines[i].name, o->only_kernel, o->defines[i].name);
      else if (!used[i])
        fly_error(&u->diag, fly_no_span(), "-D %s: no kernel has a const parameter named '%s'",
                  o->defines[i].name, o->defines[i].name);
  }
  free(order);
  free(used);
  fly_interp_release(&I);
  return u->diag.errors == errors;
}

/* ---- flyc eval and flyc layout ---------------------------------------------------------- */

static bool is_layoutish(const FlyVal *v) {
  if (v->kind == FLY_V_LAYOUT || v->kind == FLY_V_COMPOSED)
    return true;
  if (v->kind == FLY_V_OBJECT && v->object.kind == FLY_OBJ_TILED_COPY)
    return true;
  return false;
}

/* `flyc layout` prints what the algebra gives: layouts, tilers, and the
   integers and integer tuples of its queries (size, shape, crd2idx ...). */
static bool layout_value_ok(const FlyVal *v) {
  if (is_layoutish(v) || fly_val_is_int_tuple(v))
    return true;
  if (v->kind != FLY_V_TUPLE || v->n == 0)
    return false;
  for (int i = 0; i < v->n; i++)
    if (!layout_value_ok(v->elems[i]) && v->elems[i]->kind != FLY_V_UNDERSCORE &&
        v->elems[i]->kind != FLY_V_INT)
      return false;
  return true;
}

/* The one-line form `flyc layout` prints: CuTe's text, tilers as (8:1,4:2). */
static char *layout_text(FlyInterp *I, const FlyVal *v) {
  if (v->kind == FLY_V_OBJECT && v->object.kind == FLY_OBJ_TILED_COPY)
    return fly_layout_str(&I->A, v->object.tv->tv);
  if (fly_val_is_int_tuple(v)) {
    FlyTuple *t = fly_val_to_tuple(I, v, NULL, "a tuple");
    return t ? fly_tuple_str(&I->A, t) : NULL;
  }
  if (v->kind == FLY_V_TUPLE) {
    FlyTiler *T = fly_val_to_tiler(I, v, NULL);
    return T ? fly_tiler_str(&I->A, T) : NULL;
  }
  return fly_val_str_canonical(&I->A, v);
}

static char *draw(FlyInterp *I, const FlyVal *v, bool svg) {
  if (v->kind == FLY_V_LAYOUT)
    return svg ? fly_layout_svg(&I->A, v->layout) : fly_layout_table(&I->A, v->layout);
  if (v->kind == FLY_V_COMPOSED)
    return svg ? fly_composed_svg(&I->A, v->composed) : fly_composed_table(&I->A, v->composed);
  const FlyTvLayout *tv = v->object.tv;
  return svg ? fly_tv_layout_svg(&I->A, tv) : fly_tv_layout_table(&I->A, tv);
}

bool fly_eval_text(FlyUnit *u, const FlyCheckOptions *o, const FlyEvalRequest *r, FILE *out) {
  char err[1200];
  int file = fly_sources_add(&u->sources, r->name, r->text, strlen(r->text), err, sizeof err);
  if (file < 0) {
    fly_error(&u->diag, fly_no_span(), "%s: %s", r->name, err);
    return false;
  }
  if (!fly_unit_reserve(u))
    return false;
  int errors = u->diag.errors;
  const FlyNode *e = fly_parse_expr(&u->arena, &u->diag, file);
  if (!e || u->diag.errors != errors)
    return false;
  FlyInterp I;
  fly_interp_init(&I, u, o);
  register_globals(&I);
  bool ok = false;
  const FlyVal *v = fly_eval(&I, NULL, e);
  if (v && !fly_val_is_static(v)) {
    fly_err_not_static(&I, e, v, "the value of the expression");
    v = NULL;
  }
  if (v && v->kind == FLY_V_NONE) {
    fly_err(&I, e, "this expression has no value");
    v = NULL;
  }
  if (v && r->layouts_only && !layout_value_ok(v)) {
    fly_err(&I, e,
            "flyc layout shows layouts, but this is %s; use 'flyc eval' for other "
            "values",
            fly_val_describe(&I.A, v));
    v = NULL;
  }
  if (v && (r->table || r->svg) && !is_layoutish(v)) {
    fly_err(&I, e, "only one layout can be drawn, but this is %s", fly_val_describe(&I.A, v));
    v = NULL;
  }
  if (v) {
    char *text = r->layouts_only ? layout_text(&I, v) : fly_val_str_canonical(&I.A, v);
    char *table = text && r->table ? draw(&I, v, false) : NULL;
    char *svg = text && r->svg ? draw(&I, v, true) : NULL;
    if (!text || (r->table && !table) || (r->svg && !svg)) {
      fly_err_algebra(&I, e);
    } else if (svg && !fly_output_file(r->svg, svg, strlen(svg), err, sizeof err)) {
      fly_error(&u->diag, fly_no_span(), "%s", err);
    } else {
      if (table)
        fputs(table, out);
      else
        fprintf(out, "%s\n", text);
      ok = true;
    }
  }
  fly_interp_release(&I);
  return ok && u->diag.errors == errors;
}
