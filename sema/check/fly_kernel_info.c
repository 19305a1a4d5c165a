/* fly_kernel_info.c — recording a kernel specialisation's signature and
 * turning its launch block into a launch program.
 *
 * The launch block is evaluated by the interpreter like any code; with the
 * recording emitter installed, each runtime value it computes (from a
 * scalar argument or a `?` leaf of a tensor) becomes an instruction, and
 * its handle (FlyVal.ssa) names the operand that holds it. Only integer
 * arithmetic, min, max and size() can be recorded: anything else in a
 * launch block that depends on a runtime argument is an error at its
 * source location. */
#include "fly_kernel_info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_interp.h"
#include "fly_kernel_record.h"

void fly_kernel_info_clear(FlyKernelInfo *k) {
  for (int i = 0; i < k->nparams; i++) {
    free(k->params[i].name);
    free(k->params[i].type);
    free(k->params[i].layout);
  }
  for (uint32_t i = 0; i < k->nrequires; i++) {
    free(k->requires[i].message);
    free(k->requires[i].where);
  }
  free(k->requires);
  free(k->params);
  free(k->code);
  free(k->tmaps);
  free(k->name);
  free(k->spec);
  free(k->target);
}

void fly_kernel_info_list_release(FlyKernelInfoList *l) {
  for (FlyKernelInfo *k = l->first, *next; k; k = next) {
    next = k->next;
    fly_kernel_info_clear(k);
    free(k);
  }
  l->first = l->last = NULL;
}

static char *dup(const char *s) {
  size_t n = strlen(s ? s : "") + 1;
  char *d = malloc(n);
  if (d)
    memcpy(d, s ? s : "", n);
  return d;
}

static uint32_t dtype_of(const FlyType *t) {
  if (!t || t->kind != FLY_TY_SCALAR)
    return FLY_DTYPE_OTHER;
  switch (t->code) {
  case FLY_TYPE_I1:
    return FLY_DTYPE_I1;
  case FLY_TYPE_I8:
    return FLY_DTYPE_I8;
  case FLY_TYPE_I16:
    return FLY_DTYPE_I16;
  case FLY_TYPE_I32:
    return FLY_DTYPE_I32;
  case FLY_TYPE_I64:
  case FLY_TYPE_INDEX:
    return FLY_DTYPE_I64;
  case FLY_TYPE_F16:
    return FLY_DTYPE_F16;
  case FLY_TYPE_BF16:
    return FLY_DTYPE_BF16;
  case FLY_TYPE_F32:
    return FLY_DTYPE_F32;
  case FLY_TYPE_F64:
    return FLY_DTYPE_F64;
  case FLY_TYPE_F8E4M3:
    return FLY_DTYPE_F8E4M3;
  case FLY_TYPE_F8E5M2:
    return FLY_DTYPE_F8E5M2;
  case FLY_TYPE_F8E4M3FNUZ:
    return FLY_DTYPE_F8E4M3FNUZ;
  case FLY_TYPE_F8E5M2FNUZ:
    return FLY_DTYPE_F8E5M2FNUZ;
  default:
    return FLY_DTYPE_OTHER;
  }
}

/* ---- operands ---------------------------------------------------------------------------- */

/* A runtime value's handle: the operand that holds it, or, for a value the
   program cannot compute, why not and where (reported only if a launch
   setting depends on it: the interpreter's own errors come first). Handles
   live in the interpreter's arena, as long as the values do. */
enum { UNRECORDABLE = 0xFFFF };
typedef struct Handle {
  FlyBundleOperand o;
  const FlyNode *at;
  const char *why;
} Handle;

static const Handle *handle(FlyInterp *I, uint32_t kind, uint32_t index, int64_t value) {
  Handle *h = fly_alloc(&I->A, sizeof *h);
  if (h)
    *h = (Handle){{kind, index, value}, NULL, NULL};
  return h;
}

static const Handle *unrecordable(FlyInterp *I, const FlyNode *at, const char *why) {
  Handle *h = fly_alloc(&I->A, sizeof *h);
  if (h)
    *h = (Handle){{UNRECORDABLE, 0, 0}, at, why};
  return h;
}

/* The runtime leaves of a shape or stride, in order, each given a handle. */
static uint32_t bind_leaves(FlyInterp *I, const FlyVal *v, uint32_t kind, uint32_t param,
                            uint32_t n) {
  if (v->kind == FLY_V_RUNTIME) {
    ((FlyVal *)v)->ssa = handle(I, kind, param, n);
    return n + 1;
  }
  if (v->kind == FLY_V_TUPLE)
    for (int i = 0; i < v->n; i++)
      n = bind_leaves(I, v->elems[i], kind, param, n);
  return n;
}

static uint32_t count_leaves(const FlyVal *v) {
  uint32_t n = v->kind == FLY_V_RUNTIME;
  for (int i = 0; v->kind == FLY_V_TUPLE && i < v->n; i++)
    n += count_leaves(v->elems[i]);
  return n;
}

/* Gives the runtime parameters' values (scalars, and the `?` leaves of
   tensors) their operands. The tracer's handles are done with by now. */
static void bind_params(FlyInterp *I, int n, FlyVal *const *params) {
  for (int i = 0; i < n; i++) {
    FlyVal *v = params[i];
    if (v->kind == FLY_V_TENSOR) {
      bind_leaves(I, v->tensor.shape, FLY_LAUNCH_SHAPE, (uint32_t)i, 0);
      bind_leaves(I, v->tensor.stride, FLY_LAUNCH_STRIDE, (uint32_t)i, 0);
    } else if (v->kind == FLY_V_RUNTIME) {
      v->ssa = handle(I, FLY_LAUNCH_SCALAR, (uint32_t)i, 0);
    }
  }
}

/* ---- the signature ---------------------------------------------------------------------- */

static char *type_name(FlyInterp *I, const FlyVal *v) {
  if (v->type)
    return dup(fly_type_str(&I->A, v->type));
  return dup(v->kind == FLY_V_INT     ? "int"
             : v->kind == FLY_V_FLOAT ? "float"
             : v->kind == FLY_V_BOOL  ? "bool"
             : v->kind == FLY_V_TYPE  ? "type"
             : v->kind == FLY_V_STR   ? "str"
                                      : "");
}

static bool record_param(FlyInterp *I, FlyParamInfo *p, const FlyNode *decl, const FlyVal *v,
                         uint32_t *nargs) {
  p->name = dup(decl->str);
  p->first_arg = UINT32_MAX;
  if (decl->flags & FLY_IS_CONST) {
    p->kind = FLY_PARAM_CONST;
    p->type = type_name(I, v);
    p->layout = dup(fly_val_str_canonical(&I->A, v));
  } else if (v->kind == FLY_V_TENSOR) {
    p->kind = FLY_PARAM_TENSOR;
    p->dtype = dtype_of(v->tensor.elem);
    p->type = dup(fly_type_str(&I->A, v->tensor.elem));
    const char *sh = fly_val_str_canonical(&I->A, v->tensor.shape);
    const char *st = fly_val_str_canonical(&I->A, v->tensor.stride);
    char *layout = malloc(strlen(sh) + strlen(st) + 2);
    if (layout)
      sprintf(layout, "%s:%s", sh, st);
    p->layout = layout;
    p->dyn_shape = count_leaves(v->tensor.shape);
    p->dyn_stride = count_leaves(v->tensor.stride);
    p->align = (uint32_t)(v->tensor.align > 0 ? v->tensor.align : 0);
    p->first_arg = *nargs;
    *nargs += 1 + p->dyn_shape + p->dyn_stride;
  } else {
    p->kind = FLY_PARAM_SCALAR;
    p->dtype = dtype_of(v->type);
    p->type = dup(fly_type_str(&I->A, v->type));
    p->layout = dup("");
    p->first_arg = (*nargs)++;
  }
  return p->name && p->type && p->layout;
}

/* "gemm BM=64 BN=64 @sm_90" -> spec "BM=64 BN=64". */
static char *spec_of(const char *spec, const char *name) {
  const char *s = spec + strlen(name);
  while (*s == ' ')
    s++;
  const char *end = strstr(s, " @");
  if (!end)
    end = s + strlen(s);
  if (end > s && s[0] == '@')
    end = s;
  char *d = malloc((size_t)(end - s) + 1);
  if (d) {
    memcpy(d, s, (size_t)(end - s));
    d[end - s] = '\0';
  }
  return d;
}

FlyKernelInfo *fly_kernel_record_begin(FlyInterp *I, const FlyNode *k, int n,
                                       const FlyNode *const *decls, FlyVal *const *params,
                                       const char *spec) {
  FlyKernelInfo *info = calloc(1, sizeof *info);
  if (!info)
    return NULL;
  info->name = dup(k->str);
  info->spec = spec_of(spec, k->str);
  info->target = dup(I->target->arch);
  info->params = calloc((size_t)(n ? n : 1), sizeof *info->params);
  info->nparams = n;
  bool ok = info->name && info->spec && info->target && info->params;
  for (int i = 0; ok && i < n; i++)
    ok = record_param(I, &info->params[i], decls[i], params[i], &info->nargs);
  for (int i = 0; i < 6; i++)
    info->rule[i] = (FlyBundleOperand){FLY_LAUNCH_CONST, 0, 1};
  info->rule[6] = (FlyBundleOperand){FLY_LAUNCH_CONST, 0, 0};
  FlyKernelInfoList *l = I->options.kernel_info;
  if (l->last)
    l->last->next = info;
  else
    l->first = info;
  l->last = info;
  if (!ok)
    fly_error(I->diag, fly_node_name_span(k), "out of memory");
  return ok ? info : NULL;
}

/* ---- the launch program ----------------------------------------------------------------- */

typedef struct Recorder {
  FlyInterp *I;
  FlyKernelInfo *info;
} Recorder;

/* Integers and bools (0 or 1) are what the program computes with. */
static bool integral(const FlyType *t) {
  return t && t->kind == FLY_TY_SCALAR && (fly_type_is_int(t) || t->code == FLY_TYPE_I1);
}

/* The handle of an argument: a constant, or the value's own. NULL when it
   has none (out of memory). */
static const Handle *handle_of(Recorder *r, const FlyVal *v, const FlyNode *at) {
  if (v->kind == FLY_V_INT || v->kind == FLY_V_BOOL)
    return handle(r->I, FLY_LAUNCH_CONST, 0, v->i);
  if (v->kind == FLY_V_RUNTIME && v->ssa) {
    const Handle *h = v->ssa;
    if (h->o.kind != UNRECORDABLE && !integral(v->type))
      return unrecordable(r->I, at, "a computation with floats or vectors");
    return h;
  }
  return unrecordable(r->I, at, "this value");
}

static bool set(FlyVal *result, const Handle *h) {
  result->ssa = h;
  return h != NULL;
}

static bool emit(Recorder *r, FlyVal *result, uint32_t op, const Handle *a, const Handle *b,
                 const FlyNode *at) {
  if (!a || !b)
    return false;
  if (a->o.kind == UNRECORDABLE || b->o.kind == UNRECORDABLE)
    return set(result, a->o.kind == UNRECORDABLE ? a : b);
  FlyKernelInfo *k = r->info;
  if (k->ninsns == 4096)
    return set(result, unrecordable(r->I, at, "more than 4096 operations"));
  if (k->ninsns == k->cap) {
    uint32_t cap = k->cap ? k->cap * 2 : 16;
    FlyBundleInsn *code = realloc(k->code, cap * sizeof *code);
    if (!code)
      return false;
    k->code = code;
    k->cap = cap;
  }
  k->code[k->ninsns] = (FlyBundleInsn){op, 0, a->o, b->o};
  return set(result, handle(r->I, FLY_LAUNCH_TEMP, k->ninsns++, 0));
}

/* size(shape): the product of its leaves. */
static bool product(Recorder *r, FlyVal *result, const FlyVal *v, const Handle **acc,
                    const FlyNode *at) {
  if (v->kind == FLY_V_TUPLE) {
    for (int i = 0; i < v->n; i++)
      if (!product(r, result, v->elems[i], acc, at))
        return false;
    return true;
  }
  const Handle *h = handle_of(r, v, at);
  if (!h)
    return false;
  if ((*acc)->o.kind == FLY_LAUNCH_CONST && (*acc)->o.value == 1) {
    *acc = h;
    return true;
  }
  if (!emit(r, result, FLY_LAUNCH_MUL, *acc, h, at))
    return false;
  *acc = result->ssa;
  return true;
}

/* The launch program's operation for an opcode of two integers, or 0. */
static uint32_t launch_op(FlyOpcode op) {
  switch (op) {
  case FLY_OPCODE_ADD:
    return FLY_LAUNCH_ADD;
  case FLY_OPCODE_SUB:
    return FLY_LAUNCH_SUB;
  case FLY_OPCODE_MUL:
    return FLY_LAUNCH_MUL;
  case FLY_OPCODE_DIV:
    return FLY_LAUNCH_DIV;
  case FLY_OPCODE_MOD:
    return FLY_LAUNCH_REM;
  case FLY_OPCODE_MIN:
    return FLY_LAUNCH_MIN;
  case FLY_OPCODE_MAX:
    return FLY_LAUNCH_MAX;
  case FLY_OPCODE_SHL:
    return FLY_LAUNCH_SHL;
  case FLY_OPCODE_SHR:
    return FLY_LAUNCH_SHR;
  case FLY_OPCODE_BITAND:
    return FLY_LAUNCH_AND;
  case FLY_OPCODE_BITOR:
    return FLY_LAUNCH_OR;
  case FLY_OPCODE_BITXOR:
    return FLY_LAUNCH_XOR;
  default:
    return 0;
  }
}

/* Comparisons give 0 or 1, so `&&` and `||` of them are the bitwise
   operations (both sides are computed: there are no effects to skip). */
static uint32_t launch_test(FlyOpcode op) {
  switch (op) {
  case FLY_OPCODE_EQ:
    return FLY_LAUNCH_EQ;
  case FLY_OPCODE_NE:
    return FLY_LAUNCH_NE;
  case FLY_OPCODE_LT:
    return FLY_LAUNCH_LT;
  case FLY_OPCODE_LE:
    return FLY_LAUNCH_LE;
  case FLY_OPCODE_GT:
    return FLY_LAUNCH_GT;
  case FLY_OPCODE_GE:
    return FLY_LAUNCH_GE;
  case FLY_OPCODE_AND:
    return FLY_LAUNCH_AND;
  case FLY_OPCODE_OR:
    return FLY_LAUNCH_OR;
  default:
    return 0;
  }
}

static bool rec_value(void *ctx, FlyVal *result, FlyOpcode op, int n, const FlyVal *const *args,
                      const FlyNode *at) {
  Recorder *r = ctx;
  if (op == FLY_OPCODE_SIZE && n == 1) {
    const Handle *acc = handle(r->I, FLY_LAUNCH_CONST, 0, 1);
    return acc && product(r, result, args[0], &acc, at) && set(result, acc);
  }
  if (!integral(result->type))
    return set(result, unrecordable(r->I, at, "a computation with floats or vectors"));
  if (n == 2 && launch_test(op))
    return emit(r, result, launch_test(op), handle_of(r, args[0], at), handle_of(r, args[1], at),
                at);
  if (op == FLY_OPCODE_NOT && n == 1)
    return emit(r, result, FLY_LAUNCH_XOR, handle_of(r, args[0], at),
                handle(r->I, FLY_LAUNCH_CONST, 0, 1), at);
  if (op == FLY_OPCODE_CONVERT && n == 1) {
    const Handle *a = handle_of(r, args[0], at);
    if (a && a->o.kind != UNRECORDABLE && args[0]->kind == FLY_V_RUNTIME &&
        !fly_type_is_int(args[0]->type))
      a = unrecordable(r->I, at, "a computation with floats or vectors");
    return set(result, a);
  }
  if (op == FLY_OPCODE_NEG && n == 1)
    return emit(r, result, FLY_LAUNCH_SUB, handle(r->I, FLY_LAUNCH_CONST, 0, 0),
                handle_of(r, args[0], at), at);
  if (n == 2 && launch_op(op))
    return emit(r, result, launch_op(op), handle_of(r, args[0], at), handle_of(r, args[1], at), at);
  const char *name = fly_opcode_name(op);
  char *what = fly_alloc(&r->I->A, strlen(name) + 3);
  if (what)
    sprintf(what, "'%s'", name);
  return set(result, unrecordable(r->I, at, what ? what : "this operation"));
}

/* Effects and GPU operations in a launch block are the interpreter's errors. */
static bool rec_effect(void *ctx, FlyOpcode op, int n, const FlyVal *const *args,
                       const FlyNode *at) {
  (void)ctx, (void)op, (void)n, (void)args, (void)at;
  return true;
}

static bool refuse(Recorder *r, const FlyNode *at, const char *what) {
  fly_error(
      r->I->diag, at ? fly_node_span(at) : fly_no_span(),
      "a launch block can compute with integer arithmetic, comparisons, min, max and size() of "
      "the runtime arguments, not %s",
      what);
  return false;
}

static void *rec_if_begin(void *ctx, const FlyVal *cond, const FlyNode *at) {
  (void)cond;
  refuse(ctx, at, "a choice on a runtime value (choose with min and max)");
  return NULL;
}
static void *rec_for_begin(void *ctx, const FlyVal *lo, const FlyVal *hi, const FlyVal *step,
                           FlyVal *var, int n, const FlyVal *const *init, FlyVal *const *carried,
                           const FlyNode *at) {
  (void)lo, (void)hi, (void)step, (void)var, (void)n, (void)init, (void)carried;
  refuse(ctx, at, "a loop over runtime values");
  return NULL;
}

static void *rec_while_begin(void *ctx, int n, const FlyVal *const *init, FlyVal *const *carried,
                             const FlyNode *at) {
  (void)n, (void)init, (void)carried;
  refuse(ctx, at, "a loop over runtime values");
  return NULL;
}

bool fly_kernel_record_launch(FlyInterp *I, FlyKernelInfo *info, int n, FlyVal *const *params,
                              const FlyNode *launch,
                              void (*run)(FlyInterp *I, const FlyNode *launch, void *arg),
                              void *arg) {
  Recorder r = {I, info};
  bind_params(I, n, params);
  FlyEmitter em = {.ctx = &r,
                   .value = rec_value,
                   .effect = rec_effect,
                   .if_begin = rec_if_begin,
                   .for_begin = rec_for_begin,
                   .while_begin = rec_while_begin};
  FlyEmitter *saved = I->emit;
  I->emit = &em;
  int errors = I->diag->errors;
  run(I, launch, arg);
  I->emit = saved;
  info->has_launch = I->diag->errors == errors;
  return info->has_launch;
}

bool fly_kernel_record_field(FlyInterp *I, FlyKernelInfo *info, int field, const FlyVal *v,
                             const FlyNode *at) {
  static const char *const names[3] = {"grid", "block", "shared"};
  Recorder r = {I, info};
  bool tuple = field < 2 && v->kind == FLY_V_TUPLE;
  int n = tuple ? v->n : 1;
  for (int i = 0; i < n && i < 3; i++) {
    const Handle *h = handle_of(&r, tuple ? v->elems[i] : v, at);
    if (!h)
      return false;
    if (h->o.kind == UNRECORDABLE) {
      refuse(&r, h->at ? h->at : at, h->why);
      fly_note(I->diag, fly_node_span(at), "%s depends on it", names[field]);
      return false;
    }
    info->rule[field * 3 + i] = h->o;
  }
  return true;
}

/* "01-vector-add.fly:44:13: CONDITION": the file's name without its
   directories, so that a bundle does not depend on where it was built. */
static char *where_of(FlyInterp *I, const FlyNode *at) {
  FlySpan sp = fly_node_span(at);
  const FlySource *src = sp.file >= 0 ? fly_source(&I->unit->sources, sp.file) : NULL;
  if (!src)
    return dup("");
  uint32_t line = 0, col = 0;
  fly_source_line_col(&I->unit->sources, sp.file, sp.begin, &line, &col);
  const char *base = strrchr(src->path, '/');
  base = base ? base + 1 : src->path;
  uint32_t end = sp.end <= src->len && sp.end > sp.begin ? sp.end : sp.begin;
  int len = (int)(end - sp.begin);
  size_t size = strlen(base) + (size_t)len + 48;
  char *s = malloc(size);
  if (s)
    snprintf(s, size, "%s:%u:%u: require %.*s", base, line, col, len, src->text + sp.begin);
  return s;
}

bool fly_kernel_record_require(FlyInterp *I, FlyKernelInfo *info, const FlyVal *cond,
                               const char *msg, size_t len, const FlyNode *at) {
  Recorder r = {I, info};
  const Handle *h = handle_of(&r, cond, at);
  if (!h)
    return false;
  if (h->o.kind == UNRECORDABLE) {
    refuse(&r, h->at ? h->at : at, h->why);
    fly_note(I->diag, fly_node_span(at), "the requirement depends on it");
    return false;
  }
  FlyRequireInfo *q = realloc(info->requires, (info->nrequires + 1) * sizeof *q);
  if (!q)
    return false;
  info->requires = q;
  q = &info->requires[info->nrequires];
  q->where = where_of(I, at);
  if (msg) {
    q->message = malloc(len + 1);
    if (q->message) {
      memcpy(q->message, msg, len);
      q->message[len] = '\0';
    }
  } else {
    /* The condition itself: "size(A) % 1024 == 0". */
    const char *w = q->where ? strstr(q->where, ": require ") : NULL;
    q->message = dup(w ? w + 10 : "");
  }
  if (!q->where || !q->message) {
    free(q->where);
    free(q->message);
    return false;
  }
  FlyVal dummy;
  memset(&dummy, 0, sizeof dummy);
  uint32_t insn = info->ninsns;
  /* b.value is replaced by the message's string offset when the bundle is
     written; here it is the requirement's index. */
  bool ok = emit(&r, &dummy, FLY_LAUNCH_REQUIRE, h,
                 handle(I, FLY_LAUNCH_CONST, 0, (int64_t)info->nrequires), at);
  if (ok && info->ninsns != insn + 1)
    ok = refuse(&r, at, "more than 4096 operations");
  if (!ok) {
    free(q->where);
    free(q->message);
    return false;
  }
  q->insn = insn;
  info->nrequires++;
  return true;
}
