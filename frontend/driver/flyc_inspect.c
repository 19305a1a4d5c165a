/* flyc_inspect.c — `flyc inspect FILE.flyb`: what a bundle holds, checked
 * by the runtime's own reader (runtime/fly_bundle.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_bundle.h"
#include "fly_source.h"
#include "flyc_commands.h"
#include "flyc_options.h"

static const char inspect_usage[] =
    "usage: flyc inspect FILE.flyb\n"
    "\n"
    "Checks a bundle as the runtime does (format version, sizes, checksum,\n"
    "references) and prints its images and, for each kernel specialisation,\n"
    "its target, parameters and the arguments they take, and its launch rule.\n";

static const char *image_kind(uint32_t k) {
  return k == FLY_IMAGE_PTX ? "ptx" : k == FLY_IMAGE_CUBIN ? "cubin" : "hsaco";
}

static void put_operand(const FlyBundle *b, const FlyBundleKernel *k, const FlyBundleOperand *o) {
  const char *name = "";
  if (o->kind == FLY_LAUNCH_SCALAR || o->kind == FLY_LAUNCH_SHAPE || o->kind == FLY_LAUNCH_STRIDE)
    name = fly_bundle_string(b, fly_bundle_param(b, k->first_param + o->index).name);
  switch (o->kind) {
  case FLY_LAUNCH_CONST:
    printf("%" PRId64, o->value);
    break;
  case FLY_LAUNCH_TEMP:
    printf("t%u", o->index);
    break;
  case FLY_LAUNCH_SCALAR:
    printf("%s", name);
    break;
  default:
    printf("%s.%s[%" PRId64 "]", name, o->kind == FLY_LAUNCH_SHAPE ? "shape" : "stride", o->value);
  }
}

/* "    tensor map of A (argument 8): box 32x16 (innermost first: modes 1, 0),
   swizzle 0, L2 promotion 256" */
static void put_tmap(const FlyBundle *b, const FlyBundleKernel *k, const FlyBundleTensorMap *m) {
  FlyBundleParam p = fly_bundle_param(b, k->first_param + m->param);
  printf("    tensor map of %s (argument %u): box ", fly_bundle_string(b, p.name), m->arg);
  for (uint32_t i = 0; i < m->rank; i++)
    printf("%s%u", i ? "x" : "", m->box[i]);
  printf(" (innermost first: mode%s", m->rank == 1 ? "" : "s");
  for (uint32_t i = 0; i < m->rank; i++)
    printf("%s %u", i ? "," : "", m->dims[i]);
  printf("), swizzle %u, L2 promotion %u\n", m->swizzle, m->l2_promotion);
}

static void put_launch(const FlyBundle *b, const FlyBundleKernel *k) {
  if (!(k->flags & FLY_BUNDLE_KERNEL_HAS_LAUNCH)) {
    puts("    launch: none (give grid and block when launching)");
    return;
  }
  for (uint32_t i = 0; i < k->ninsns; i++) {
    FlyBundleInsn in = fly_bundle_insn(b, k->first_insn + i);
    const char *op = fly_bundle_op_symbol(in.op);
    if (in.op == FLY_LAUNCH_REQUIRE) {
      printf("    require ");
      put_operand(b, k, &in.a);
      printf(": \"%s\" (%s)\n", fly_bundle_string(b, (uint32_t)in.b.value),
             fly_bundle_string(b, in.where));
      continue;
    }
    printf("    t%u = ", i);
    bool fn = in.op == FLY_LAUNCH_MIN || in.op == FLY_LAUNCH_MAX;
    if (fn)
      printf("%s(", op);
    put_operand(b, k, &in.a);
    printf(fn ? ", " : " %s ", fn ? "" : op);
    put_operand(b, k, &in.b);
    puts(fn ? ")" : "");
  }
  const char *names[3] = {"grid", "block", "shared"};
  const FlyBundleOperand *v[3][3] = {{&k->grid[0], &k->grid[1], &k->grid[2]},
                                     {&k->block[0], &k->block[1], &k->block[2]},
                                     {&k->shared, NULL, NULL}};
  for (int f = 0; f < 3; f++) {
    printf("    %s = ", names[f]);
    if (f < 2)
      putchar('(');
    for (int i = 0; i < (f < 2 ? 3 : 1); i++) {
      if (i)
        printf(", ");
      put_operand(b, k, v[f][i]);
    }
    puts(f < 2 ? ")" : "");
  }
}

static void put_param(const FlyBundle *b, const FlyBundleParam *p) {
  const char *name = fly_bundle_string(b, p->name), *type = fly_bundle_string(b, p->type),
             *layout = fly_bundle_string(b, p->layout);
  if (p->kind == FLY_PARAM_CONST) {
    printf("    %s: const %s = %s\n", name, type, layout);
  } else if (p->kind == FLY_PARAM_SCALAR) {
    printf("    %s: %s  (argument %u)\n", name, type, p->first_arg);
  } else {
    printf("    %s: tensor<%s, %s>  (arguments %u..%u: pointer", name, type, layout, p->first_arg,
           p->first_arg + p->dyn_shape + p->dyn_stride);
    if (p->dyn_shape)
      printf(", %u shape", p->dyn_shape);
    if (p->dyn_stride)
      printf(", %u stride", p->dyn_stride);
    if (p->align)
      printf("; aligned to %u bytes", p->align);
    if (p->stride_align)
      printf("; strides multiples of %u bytes", p->stride_align);
    if (p->max_span)
      printf("; spans at most %u elements", p->max_span);
    puts(")");
  }
}

int flyc_inspect_command(int argc, char **argv) {
  if (argc == 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
    fputs(inspect_usage, stdout);
    return FLYC_OK;
  }
  if (argc != 1) {
    fprintf(stderr, "flyc inspect: error: %s\nrun 'flyc inspect --help' for usage\n",
            argc ? "give one bundle" : "no bundle");
    return FLYC_USAGE;
  }
  char why[512];
  const char *read_why = NULL;
  size_t size;
  char *data = fly_read_file(argv[0], &size, &read_why);
  if (!data) {
    fprintf(stderr, "flyc inspect: error: cannot read '%s': %s\n", argv[0], read_why);
    return FLYC_ERRORS;
  }
  FlyBundle b;
  if (!fly_bundle_open(&b, data, size, why, sizeof why)) {
    fprintf(stderr, "flyc inspect: error: %s: %s\n", argv[0], why);
    free(data);
    return FLYC_ERRORS;
  }
  printf("bundle %s: format %u, %zu bytes, checksum 0x%08x\n", argv[0], b.header.version, size,
         b.header.checksum);
  printf("compiler: %s, %s\n", fly_bundle_string(&b, b.header.compiler),
         fly_bundle_string(&b, b.header.toolchain));
  printf("sources: sha256 %s\n", fly_bundle_string(&b, b.header.source_hash));
  for (uint32_t i = 0; i < b.nimages; i++) {
    FlyBundleImage im = fly_bundle_image(&b, i);
    printf("image %u: %s %s, %" PRIu64 " bytes\n", i, fly_bundle_string(&b, im.target),
           image_kind(im.kind), im.size);
  }
  for (uint32_t i = 0; i < b.nkernels; i++) {
    FlyBundleKernel k = fly_bundle_kernel(&b, i);
    const char *spec = fly_bundle_string(&b, k.spec);
    printf("kernel %s%s%s @%s: image %u, symbol %s, %u arguments\n", fly_bundle_string(&b, k.name),
           *spec ? " " : "", spec, fly_bundle_string(&b, k.target), k.image,
           fly_bundle_string(&b, k.symbol), k.nargs);
    for (uint32_t j = 0; j < k.nparams; j++) {
      FlyBundleParam p = fly_bundle_param(&b, k.first_param + j);
      put_param(&b, &p);
    }
    for (uint32_t j = 0; j < k.ntmaps; j++) {
      FlyBundleTensorMap m = fly_bundle_tmap(&b, k.first_tmap + j);
      put_tmap(&b, &k, &m);
    }
    put_launch(&b, &k);
    if (k.cluster[0])
      printf("    cluster: (%u, %u, %u) blocks\n", k.cluster[0], k.cluster[1], k.cluster[2]);
    if (k.static_shared)
      printf("    shared tiles: %u bytes (added to each launch's shared memory)\n",
             k.static_shared);
  }
  free(data);
  return fflush(stdout) == 0 ? FLYC_OK : FLYC_ERRORS;
}
