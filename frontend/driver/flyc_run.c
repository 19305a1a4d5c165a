/* flyc_run.c — `flyc run FILE --kernel K ARG...`: one kernel launched from
 * the command line.
 *
 * The steps, in order: read the options and the arguments' text; open the
 * GPU (a failure is only remembered); compile the .fly through libflyc
 * (and its cache) or read the .flyb; find the kernel; match the arguments
 * to its parameters and check them with the runtime against a module that
 * has no device, with placeholder pointers; and only then, needing the GPU,
 * say that there is none. So a machine without a GPU still reports every
 * mistake in the command line, the sources and the arguments. With a GPU:
 * copy the arguments in, launch, write the --output tensors, and time
 * --bench launches with device events.
 *
 * Exit status: 2 for the command line's form (options, NAME=VALUE text,
 * names that match no parameter, the kernel's name); 1 for what the files
 * or the kernel refuse (compile errors, a bad bundle or .npy, the
 * runtime's argument check, the launch rule) and for the GPU's errors. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fly/runtime.h"
#include "fly_diag.h"
#include "flyc_commands.h"
#include "flyc_options.h"
#include "flyc_run_args.h"
#include "libflyc.h"
#include "libflyc_internal.h"

static const char run_usage[] =
    "usage: flyc run FILE.fly|FILE.flyb [--kernel NAME] [options] NAME=VALUE...\n"
    "\n"
    "Compiles FILE.fly for the GPU (through the disk cache, as 'flyc compile\n"
    "--emit=bundle' does) or loads the bundle FILE.flyb, makes the kernel's\n"
    "arguments, launches it once on GPU 0 and prints the launch. Every tensor\n"
    "and scalar parameter takes one NAME=VALUE; const parameters are compiled\n"
    "in (-D for a .fly, --spec for a bundle).\n"
    "\n"
    "Arguments:\n"
    "  NAME=randn:DTYPE:DIMS    normal(0, 1) numbers; for integer dtypes the\n"
    "                           nearest integer to 4 * normal(0, 1)\n"
    "  NAME=rand:DTYPE:DIMS     uniform in [0, 1); integers: 0 to 15\n"
    "  NAME=zeros:DTYPE:DIMS    zeros\n"
    "  NAME=ones:DTYPE:DIMS     ones\n"
    "  NAME=@FILE.npy           a NumPy array (little-endian, C order); a bf16\n"
    "                           parameter also takes float32, rounded to bf16\n"
    "  NAME=1024, NAME=0.5      a scalar: an integer or a floating literal\n"
    "  DTYPE is f16, bf16, f32, f64, i8, i16, i32 or i64 (f16 and bf16 are\n"
    "  rounded from float on the host); DIMS is the row-major shape in elements,\n"
    "  1048576 or 4096x4096, whose strides are compact (4096x4096 has strides\n"
    "  4096 and 1). The runtime checks each against the kernel's parameter.\n"
    "  Random arguments differ from run to run unless --seed is given; the seed\n"
    "  used is printed.\n"
    "\n"
    "Options:\n"
    "  --kernel NAME            the kernel to launch (needed when there are several)\n"
    "  --spec 'NAME=V ...'      pick the bundle's specialisation with these const\n"
    "                           bindings (needed when there are several)\n"
    "  -D NAME=VALUE            bind a const parameter when compiling a .fly\n"
    "  --target ARCH            compile for ARCH (a .fly) or use the bundle's images\n"
    "                           for ARCH; default: the GPU's, and without one the\n"
    "                           default of 'flyc compile' (a .fly) or the bundle's\n"
    "                           first target (a .flyb)\n"
    "  --device N               launch on GPU N (default 0)\n"
    "  --output NAME=FILE.npy   after the launch, write tensor NAME to FILE.npy\n"
    "                           (repeatable; bf16 is written as float32); the file\n"
    "                           is written whole or not at all\n"
    "  --bench N                after a warm-up, time N launches with device\n"
    "                           events and print the median and minimum time and\n"
    "                           the bandwidth: the bytes of all tensor arguments,\n"
    "                           each counted once, per median time\n"
    "  --flops F                with --bench, also print F / median time in\n"
    "                           TFLOP/s; F is a number or a product, 2*4096*4096*4096\n"
    "  --grid X[,Y[,Z]]         the grid, instead of the launch rule's\n"
    "  --block X[,Y[,Z]]        the block, instead of the launch rule's (a kernel\n"
    "                           without a launch block needs --grid and --block)\n"
    "  --shared BYTES           dynamic shared memory, instead of the rule's (1 up)\n"
    "  --seed N                 the seed of the random arguments\n"
    "  --dry-run                check everything and print the launch, but launch\n"
    "                           nothing: no GPU is needed\n"
    "  --no-cache, -O0..-O3, --stdlib DIR   as for 'flyc compile'\n"
    "\n"
    "Without a GPU (no driver, or no GPU N), flyc run checks all it can and then\n"
    "fails with 'no GPU' (exit status 1). Usage errors exit with 2; compile\n"
    "errors, bad files, arguments the kernel refuses and GPU errors with 1.\n"
    "\n"
    "Example:\n"
    "  flyc run examples/01-vector-add.fly A=randn:f32:1048576 \\\n"
    "      B=randn:f32:1048576 C=zeros:f32:1048576 --output C=c.npy --bench 100\n";

/* ---- messages ---- */

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("flyc run: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputs("\nrun 'flyc run --help' for usage\n", stderr);
  va_end(ap);
  return FLYC_USAGE;
}

static int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("flyc run: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return FLYC_ERRORS;
}

/* ---- the options ---- */

typedef struct Output {
  char name[FLYC_RUN_NAME_MAX];
  const char *path;
} Output;

typedef struct RunOptions {
  const char *file;
  const char *kernel, *spec, *target, *stdlib;
  const char **defines; /* "NAME=VALUE" */
  int ndefines;
  Output *outputs;
  int noutputs;
  FlycRunArg *args;
  int nargs;
  long bench;
  double flops; /* 0: not given */
  FlyrtLaunchConfig override;
  bool has_grid, has_block;
  int device;
  uint64_t seed;
  bool has_seed, dry_run, no_cache;
  int opt_level; /* -1: not given */
} RunOptions;

static bool parse_int(const char *v, long long lo, long long hi, long long *out) {
  char *end;
  errno = 0;
  long long n = strtoll(v, &end, 10);
  if (!*v || *end || errno || n < lo || n > hi)
    return false;
  *out = n;
  return true;
}

static int bad_number(const char *option, const char *form, const char *v) {
  return usage_error("%s takes %s, not '%s'", option, form, v);
}

/* X[,Y[,Z]]: each from 1; missing ones are 1. */
static int parse_dim3(const char *option, const char *v, uint32_t out[3]) {
  out[0] = out[1] = out[2] = 1;
  const char *p = v;
  for (int i = 0; i < 3; i++) {
    char part[32];
    size_t n = strcspn(p, ",");
    long long x;
    snprintf(part, sizeof part, "%.*s", (int)(n < sizeof part ? n : sizeof part - 1), p);
    if (n >= sizeof part || !parse_int(part, 1, INT32_MAX, &x))
      break;
    out[i] = (uint32_t)x;
    if (!p[n])
      return FLYC_OK;
    p += n + 1;
  }
  return bad_number(option, "X[,Y[,Z]], each from 1, such as 1024 or 64,64", v);
}

/* F: a positive number or a product of them, 2*4096*4096*4096. */
static int parse_flops(const char *v, double *out) {
  double f = 1;
  for (const char *p = v;;) {
    char *end;
    errno = 0;
    double x = strtod(p, &end);
    if (end == p || errno || !(x > 0) || (*end && *end != '*'))
      return bad_number("--flops", "a positive number or a product, such as 2*4096*4096*4096", v);
    f *= x;
    if (!*end)
      break;
    p = end + 1;
  }
  *out = f;
  return FLYC_OK;
}

static int add_output(RunOptions *o, const char *v) {
  const char *eq = strchr(v, '=');
  size_t n = eq ? (size_t)(eq - v) : 0;
  if (!eq || n == 0 || n >= FLYC_RUN_NAME_MAX || !eq[1])
    return usage_error("--output takes NAME=FILE.npy, such as C=c.npy, not '%s'", v);
  Output *out = &o->outputs[o->noutputs];
  memcpy(out->name, v, n);
  out->name[n] = '\0';
  out->path = eq + 1;
  for (int i = 0; i < o->noutputs; i++)
    if (strcmp(o->outputs[i].name, out->name) == 0)
      return usage_error("--output %s is given twice", out->name);
  o->noutputs++;
  return FLYC_OK;
}

static int add_target(RunOptions *o, const char *v) {
  if (strchr(v, ','))
    return usage_error("flyc run takes one --target, not '%s'", v);
  if (!fly_target_find(v))
    return usage_error("unknown target '%s' (the targets are %s)", v, fly_target_names());
  o->target = v;
  return FLYC_OK;
}

static int add_define(RunOptions *o, const char *def) {
  const char *eq = strchr(def, '=');
  if (!eq || !flyc_is_identifier(def, (size_t)(eq - def)))
    return usage_error("-D takes NAME=VALUE, such as -D BLOCK=128, not '%s'", def);
  o->defines[o->ndefines++] = def;
  return FLYC_OK;
}

static int add_argument(RunOptions *o, const char *text) {
  char why[512];
  FlycRunArg *a = &o->args[o->nargs];
  if (!flyc_run_arg_parse(text, a, why, sizeof why))
    return usage_error("%s", why);
  for (int i = 0; i < o->nargs; i++)
    if (strcmp(o->args[i].name, a->name) == 0)
      return usage_error("argument %s is given twice ('%s' and '%s')", a->name, o->args[i].text,
                         text);
  o->nargs++;
  return FLYC_OK;
}

static int parse_count(const char *option, const char *v, long long lo, long long hi,
                       const char *form, long long *out) {
  return parse_int(v, lo, hi, out) ? FLYC_OK : bad_number(option, form, v);
}

/* The value of an option that takes one. */
static int parse_valued(RunOptions *o, const char *v, const char *option) {
  long long n = 0;
  int status = FLYC_OK;
  if (!*v)
    return usage_error("missing value: write %s", option);
  if (strcmp(option, "--kernel") == 0) {
    o->kernel = v;
  } else if (strcmp(option, "--spec") == 0) {
    o->spec = v;
  } else if (strcmp(option, "--stdlib") == 0) {
    o->stdlib = v;
  } else if (strcmp(option, "--target") == 0) {
    status = add_target(o, v);
  } else if (strcmp(option, "--output") == 0) {
    status = add_output(o, v);
  } else if (strcmp(option, "--flops") == 0) {
    status = parse_flops(v, &o->flops);
  } else if (strcmp(option, "--grid") == 0) {
    o->has_grid = true;
    status = parse_dim3(option, v, o->override.grid);
  } else if (strcmp(option, "--block") == 0) {
    o->has_block = true;
    status = parse_dim3(option, v, o->override.block);
  } else if (strcmp(option, "--bench") == 0) {
    status = parse_count(option, v, 1, 1000000, "a number of launches from 1 to 1000000", &n);
    o->bench = (long)n;
  } else if (strcmp(option, "--shared") == 0) {
    status = parse_count(option, v, 1, UINT32_MAX, "a number of bytes from 1", &n);
    o->override.shared_bytes = (uint32_t)n;
  } else if (strcmp(option, "--device") == 0) {
    status = parse_count(option, v, 0, 1023, "a GPU number from 0", &n);
    o->device = (int)n;
  } else {
    status = parse_count(option, v, 0, INT64_MAX, "a number from 0", &n);
    o->seed = (uint64_t)n;
    o->has_seed = true;
  }
  return status;
}

static const char *const valued_options[] = {"--kernel", "--spec",   "--target", "--output",
                                             "--bench",  "--flops",  "--grid",   "--block",
                                             "--shared", "--device", "--seed",   "--stdlib"};

/* One option at argv[*i] (moving *i past its value). */
static int parse_option(RunOptions *o, int argc, char **argv, int *i) {
  const char *arg = argv[*i], *v;
  for (size_t k = 0; k < sizeof valued_options / sizeof valued_options[0]; k++)
    if ((v = flyc_option_value(argc, argv, i, valued_options[k])))
      return parse_valued(o, v, valued_options[k]);
  if (strncmp(arg, "-D", 2) == 0) {
    if (!arg[2] && *i + 1 == argc)
      return usage_error("missing value: write -D NAME=VALUE");
    return add_define(o, arg[2] ? arg + 2 : argv[++*i]);
  }
  if (strcmp(arg, "--dry-run") == 0)
    o->dry_run = true;
  else if (strcmp(arg, "--no-cache") == 0)
    o->no_cache = true;
  else if (strncmp(arg, "-O", 2) == 0 && arg[2] >= '0' && arg[2] <= '3' && !arg[3])
    o->opt_level = arg[2] - '0';
  else
    return usage_error("unknown option '%s'", arg);
  return FLYC_OK;
}

static bool is_bundle_path(const char *path) {
  size_t n = strlen(path);
  return n >= 5 && strcmp(path + n - 5, ".flyb") == 0;
}

/* What can be said of the options before reading FILE. */
static int check_options(const RunOptions *o) {
  if (!o->file)
    return usage_error("no input file: give a .fly or a .flyb");
  if (is_bundle_path(o->file) && o->ndefines)
    return usage_error("-D binds a const parameter when compiling a .fly; a bundle's kernels "
                       "are compiled already: pick a specialisation with --spec '%s'",
                       o->defines[0]);
  if (o->flops && !o->bench)
    return usage_error("--flops goes with --bench N");
  return FLYC_OK;
}

/* Reads argv into o. Returns FLYC_OK (with *help when --help was asked
   for and printed) or FLYC_USAGE after saying why. */
static int parse_options(int argc, char **argv, RunOptions *o, bool *help) {
  size_t n = argc ? (size_t)argc : 1;
  o->defines = calloc(n, sizeof *o->defines);
  o->outputs = calloc(n, sizeof *o->outputs);
  o->args = calloc(n, sizeof *o->args);
  o->opt_level = -1;
  *help = false;
  if (!o->defines || !o->outputs || !o->args)
    return error("out of memory");
  /* --help wins wherever it stands, over mistakes before it. */
  for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(run_usage, stdout);
      *help = true;
      return FLYC_OK;
    }
  bool positional_only = false;
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    int status = FLYC_OK;
    if (positional_only || arg[0] != '-' || !arg[1]) {
      if (!o->file)
        o->file = arg;
      else
        status = add_argument(o, arg);
    } else if (strcmp(arg, "--") == 0) {
      positional_only = true;
    } else {
      status = parse_option(o, argc, argv, &i);
    }
    if (status != FLYC_OK)
      return status;
  }
  return check_options(o);
}

/* ---- the run ---- */

typedef struct Run {
  RunOptions o;
  FlyrtDevice dev;         /* NULL when none could be opened */
  char no_device[1024];    /* then why */
  char compile_target[32]; /* a .fly: the target compiled for */
  FlyrtBundle bundle;
  FlyrtModule module;
  FlyrtKernel kernel;
  int nparams;
  FlyrtParamInfo *params;
  int *arg_of_param; /* the index in o.args of each parameter's argument, or -1 */
  FlyrtArg *launch;  /* the arguments in the kernel's order */
  int nlaunch;
  int *arg_of_launch; /* the index in o.args of each of them */
  void **device_ptrs; /* per launch argument: its device memory */
  FlyrtLaunchConfig config;
  bool random; /* some argument is random: the seed is printed */
  uint64_t seed;
  FlycRng rng;
} Run;

/* Opens GPU --device, remembering why not: a missing GPU is reported only
   once everything else has been checked. */
static void open_device(Run *r) {
  if (flyrtDeviceCreate(r->o.device, &r->dev) != FLYRT_SUCCESS) {
    snprintf(r->no_device, sizeof r->no_device, "%s", flyrtLastError());
    r->dev.ptr = NULL;
  }
}

/* The Fly target for the GPU's own ("sm_90", "gfx942"): its own when Fly
   knows it, else as the target table maps what such a GPU reports (for
   NVIDIA the newest older target: PTX runs on later GPUs). */
static bool target_for_device(const char *device, char *out, size_t n) {
  const FlyTarget *t = fly_target_find(device);
  int cc;
  if (!t && sscanf(device, "sm_%d", &cc) == 1)
    t = fly_target_for_device(FLY_VENDOR_NVIDIA, cc);
  if (t)
    snprintf(out, n, "%s", t->arch);
  return t != NULL;
}

/* The target a .fly is compiled for: --target, else the GPU's, else the
   first of 'flyc compile''s defaults (FLYC_TARGET, or sm_90). */
static int choose_compile_target(Run *r) {
  char *t = r->compile_target;
  size_t n = sizeof r->compile_target;
  if (r->o.target) {
    snprintf(t, n, "%s", r->o.target);
  } else if (r->dev.ptr) {
    const char *dev = flyrtDeviceTarget(r->dev);
    if (!target_for_device(dev, t, n))
      return error("GPU %d (%s) is %s, which Fly does not compile for: name a target with "
                   "--target (%s)",
                   r->o.device, flyrtDeviceName(r->dev), *dev ? dev : "of an unknown target",
                   fly_target_names());
  } else {
    const char *from, *list = fly_default_targets(&from);
    size_t len = strcspn(list, ",");
    snprintf(t, n, "%.*s", (int)(len < n ? len : n - 1), list);
    if (!fly_target_find(t))
      return error("unknown target '%s' from %s (the targets are %s)", t, from, fly_target_names());
  }
  return FLYC_OK;
}

/* Compiles FILE.fly into a bundle, as `flyc compile --emit=bundle` with the
   same options would (and through the same cache). */
static int compile_source(Run *r) {
  int status = choose_compile_target(r);
  if (status != FLYC_OK)
    return status;
  FlycOptions co;
  flyc_options_defaults(&co);
  co.file = r->o.file;
  co.emit = "bundle";
  status = flyc_options_targets(stderr, "run", &co, r->compile_target);
  for (int i = 0; i < r->o.ndefines && status == FLYC_OK; i++)
    status = flyc_options_define(stderr, "run", &co, r->o.defines[i]);
  co.check.only_kernel = r->o.kernel;
  co.unit.stdlib_dir = r->o.stdlib;
  co.unit.color = fly_diag_color_default(stderr);
  co.no_cache = r->o.no_cache;
  if (r->o.opt_level >= 0)
    co.opt_level = r->o.opt_level;
  if (status == FLYC_OK) {
    FlycCompileResult res = flyc_compile_parsed(r->o.file, NULL, 0, &co);
    fputs(flycCompileResultDiagnostics(res), stderr);
    status = flycCompileResultStatus(res);
    size_t n;
    const void *data = flycCompileResultData(res, &n);
    if (status == FLYC_OK && flyrtBundleCreateFromMemory(data, n, &r->bundle) != FLYRT_SUCCESS)
      status = error("the compiled bundle: %s", flyrtLastError());
    flycCompileResultDestroy(res);
  }
  flyc_free_options(&co);
  return status;
}

static int load_bundle(Run *r) {
  if (!is_bundle_path(r->o.file))
    return compile_source(r);
  if (flyrtBundleCreateFromFile(r->o.file, &r->bundle) != FLYRT_SUCCESS)
    return error("%s", flyrtLastError());
  return FLYC_OK;
}

/* The module's target: --target or the one compiled for; with a GPU, NULL
   (the runtime picks the image that suits it); without, the bundle's first
   kernel's target. */
static const char *module_target(const Run *r) {
  if (r->o.target)
    return r->o.target;
  if (r->compile_target[0])
    return r->compile_target;
  if (r->dev.ptr)
    return NULL;
  FlyrtKernelEntry e;
  if (flyrtBundleKernelCount(r->bundle) == 0 ||
      flyrtBundleKernelEntry(r->bundle, 0, &e) != FLYRT_SUCCESS)
    return NULL;
  return e.target;
}

static int make_module(Run *r) {
  if (flyrtBundleKernelCount(r->bundle) == 0)
    return error("%s holds no kernels", r->o.file);
  if (flyrtModuleCreate(r->bundle, r->dev, module_target(r), &r->module) != FLYRT_SUCCESS)
    return error("%s", flyrtLastError());
  return FLYC_OK;
}

/* The kernel names of the module's target, "a, b", and how many. */
static int kernel_names(const Run *r, char *buf, size_t size, const char **only) {
  const char *target = flyrtModuleTarget(r->module);
  uint32_t count = flyrtBundleKernelCount(r->bundle);
  int n = 0;
  size_t used = 0;
  buf[0] = '\0';
  for (uint32_t i = 0; i < count; i++) {
    FlyrtKernelEntry e, f;
    flyrtBundleKernelEntry(r->bundle, i, &e);
    bool seen = strcmp(e.target, target) != 0;
    for (uint32_t j = 0; j < i && !seen; j++)
      seen = flyrtBundleKernelEntry(r->bundle, j, &f) == FLYRT_SUCCESS &&
             strcmp(f.target, target) == 0 && strcmp(f.name, e.name) == 0;
    if (seen)
      continue;
    *only = e.name;
    n++;
    if (used < size)
      used += (size_t)snprintf(buf + used, size - used, "%s%s", n > 1 ? ", " : "", e.name);
  }
  return n;
}

/* --kernel, or the only kernel there is. An unknown name or spec is a
   usage error; a failure to load the binary into the GPU is not. */
static int find_kernel(Run *r) {
  const char *name = r->o.kernel;
  if (!name) {
    char names[512];
    int n = kernel_names(r, names, sizeof names, &name);
    if (n == 0)
      return error("%s has no kernel for %s", r->o.file, flyrtModuleTarget(r->module));
    if (n > 1)
      return usage_error("%s has several kernels (%s): name one with --kernel", r->o.file, names);
  }
  FlyrtStatus s = flyrtModuleGetKernel(r->module, name, r->o.spec, &r->kernel);
  if (s == FLYRT_ERROR_NOT_FOUND)
    return usage_error("%s", flyrtLastError());
  if (s != FLYRT_SUCCESS)
    return error("%s", flyrtLastError());
  return FLYC_OK;
}

/* ---- matching the arguments to the parameters ---- */

/* "vector_add(A: tensor<f32, (?,):(1,)>, n: i32, const BLOCK: int = 256)". */
static void signature(const Run *r, char *buf, size_t size) {
  size_t used = (size_t)snprintf(buf, size, "%s(", flyrtKernelName(r->kernel));
  for (int i = 0; i < r->nparams && used < size; i++) {
    const FlyrtParamInfo *p = &r->params[i];
    const char *sep = i ? ", " : "";
    if (p->kind == FLYRT_PARAM_TENSOR)
      used += (size_t)snprintf(buf + used, size - used, "%s%s: tensor<%s, %s>", sep, p->name,
                               p->type, p->layout);
    else if (p->kind == FLYRT_PARAM_SCALAR)
      used += (size_t)snprintf(buf + used, size - used, "%s%s: %s", sep, p->name, p->type);
    else
      used += (size_t)snprintf(buf + used, size - used, "%sconst %s: %s = %s", sep, p->name,
                               p->type, p->layout);
  }
  if (used < size)
    snprintf(buf + used, size - used, ")");
}

/* A usage error about the arguments, followed by the kernel's signature. */
static int argument_error(const Run *r, const char *fmt, const char *a, const char *b) {
  char sig[2048];
  signature(r, sig, sizeof sig);
  fputs("flyc run: error: ", stderr);
  fprintf(stderr, fmt, a, b);
  fprintf(stderr, "\nthe kernel is %s\nrun 'flyc run --help' for usage\n", sig);
  return FLYC_USAGE;
}

static int param_index(const Run *r, const char *name) {
  for (int i = 0; i < r->nparams; i++)
    if (strcmp(r->params[i].name, name) == 0)
      return i;
  return -1;
}

static int read_params(Run *r) {
  r->nparams = flyrtKernelParamCount(r->kernel);
  size_t n = r->nparams ? (size_t)r->nparams : 1;
  r->params = calloc(n, sizeof *r->params);
  r->arg_of_param = calloc(n, sizeof *r->arg_of_param);
  r->launch = calloc(n, sizeof *r->launch);
  r->arg_of_launch = calloc(n, sizeof *r->arg_of_launch);
  r->device_ptrs = calloc(n, sizeof *r->device_ptrs);
  if (!r->params || !r->arg_of_param || !r->launch || !r->arg_of_launch || !r->device_ptrs)
    return error("out of memory");
  for (int i = 0; i < r->nparams; i++) {
    if (flyrtKernelParam(r->kernel, i, &r->params[i]) != FLYRT_SUCCESS)
      return error("%s", flyrtLastError());
    r->arg_of_param[i] = -1;
  }
  return FLYC_OK;
}

/* Each argument names a tensor or scalar parameter, of its kind. */
static int check_names(Run *r) {
  for (int i = 0; i < r->o.nargs; i++) {
    const FlycRunArg *a = &r->o.args[i];
    int p = param_index(r, a->name);
    if (p < 0)
      return argument_error(r, "%s has no parameter '%s'", flyrtKernelName(r->kernel), a->name);
    const FlyrtParamInfo *pi = &r->params[p];
    if (pi->kind == FLYRT_PARAM_CONST)
      return argument_error(r,
                            "'%s' is a const parameter, compiled in (%s): bind it with -D when "
                            "compiling a .fly, or pick a bundle's specialisation with --spec",
                            a->text, flyrtKernelSpec(r->kernel));
    if (pi->kind == FLYRT_PARAM_TENSOR && !flyc_run_arg_is_tensor(a))
      return argument_error(r, "'%s': %s is a tensor, not a number", a->text, pi->name);
    if (pi->kind == FLYRT_PARAM_SCALAR && flyc_run_arg_is_tensor(a))
      return argument_error(r, "'%s': %s is a number, not a tensor", a->text, pi->name);
    r->arg_of_param[p] = i;
  }
  return FLYC_OK;
}

static int check_missing(const Run *r) {
  char missing[1024];
  size_t used = 0;
  int n = 0;
  missing[0] = '\0';
  for (int i = 0; i < r->nparams; i++)
    if (r->params[i].kind != FLYRT_PARAM_CONST && r->arg_of_param[i] < 0 && used < sizeof missing)
      used += (size_t)snprintf(missing + used, sizeof missing - used, "%s%s", n++ ? ", " : "",
                               r->params[i].name);
  if (n)
    return argument_error(r, "no argument for %s%s: give each tensor and scalar NAME=VALUE",
                          missing, "");
  return FLYC_OK;
}

/* --output names a tensor argument. */
static int check_outputs(const Run *r) {
  for (int i = 0; i < r->o.noutputs; i++) {
    int p = param_index(r, r->o.outputs[i].name);
    if (p < 0 || r->params[p].kind != FLYRT_PARAM_TENSOR)
      return argument_error(r, "--output %s: %s", r->o.outputs[i].name,
                            p < 0 ? "the kernel has no such parameter" : "it is not a tensor");
  }
  return FLYC_OK;
}

static void shape_text(const int64_t *shape, int rank, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < rank && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%" PRId64, i ? "x" : "", shape[i]);
  if (rank == 0)
    snprintf(buf, size, "() (a 0-d array)");
}

/* The element type and the number of modes, said with where the tensor
   came from (the runtime's own message could name only the parameter); the
   runtime checks the rest: static extents and strides, alignment, 32-bit
   extents. */
static int check_tensor(const Run *r, const FlycRunArg *a, const FlyrtParamInfo *p) {
  const char *k = flyrtKernelName(r->kernel);
  char shape[256];
  bool file = a->value == FLYC_RUN_FILE;
  if (a->dtype != p->dtype && file)
    return error("%s: argument '%s': the kernel takes %s elements, and '%s' holds %s", k, p->name,
                 p->type, a->path, flyrtDtypeName(a->dtype));
  if (a->dtype != p->dtype)
    return error("%s: argument '%s': the kernel takes %s elements, not %s ('%s')", k, p->name,
                 p->type, flyrtDtypeName(a->dtype), a->text);
  if (a->rank == p->rank)
    return FLYC_OK;
  shape_text(a->shape, a->rank, shape, sizeof shape);
  return error("%s: argument '%s': the kernel's layout %s has %d mode%s, and '%s' has shape %s", k,
               p->name, p->layout, p->rank, p->rank == 1 ? "" : "s", file ? a->path : a->text,
               shape);
}

/* A tensor argument with placeholder data: an address aligned for any
   kernel (never dereferenced; the runtime only checks its alignment). */
static FlyrtArg placeholder_tensor(const FlycRunArg *a, int index) {
  FlyrtArg t = {.kind = FLYRT_ARG_TENSOR};
  t.u.tensor.data = (void *)(uintptr_t)((uintptr_t)(index + 1) << 20);
  t.u.tensor.dtype = a->dtype;
  t.u.tensor.rank = a->rank;
  int64_t stride = 1;
  for (int i = a->rank - 1; i >= 0; i--) {
    t.u.tensor.shape[i] = a->shape[i];
    t.u.tensor.stride[i] = stride;
    stride *= a->shape[i];
  }
  return t;
}

/* The launch arguments in the kernel's order, files loaded. */
static int make_arguments(Run *r) {
  for (int i = 0; i < r->nparams; i++) {
    const FlyrtParamInfo *p = &r->params[i];
    if (p->kind == FLYRT_PARAM_CONST)
      continue;
    FlycRunArg *a = &r->o.args[r->arg_of_param[i]];
    char why[1024];
    int status = FLYC_OK;
    if (a->value == FLYC_RUN_FILE && !flyc_run_arg_load(a, p->dtype, why, sizeof why))
      return error("%s: argument '%s': %s", flyrtKernelName(r->kernel), p->name, why);
    if (flyc_run_arg_is_tensor(a) && (status = check_tensor(r, a, p)) != FLYC_OK)
      return status;
    r->random = r->random || a->value == FLYC_RUN_RANDN || a->value == FLYC_RUN_RAND;
    r->arg_of_launch[r->nlaunch] = r->arg_of_param[i];
    FlyrtArg *l = &r->launch[r->nlaunch];
    if (a->value == FLYC_RUN_INT)
      *l = flyrtInt(a->i);
    else if (a->value == FLYC_RUN_FLOAT)
      *l = flyrtFloat(a->f);
    else
      *l = placeholder_tensor(a, r->nlaunch);
    r->nlaunch++;
  }
  return FLYC_OK;
}

static bool has_override(const RunOptions *o) {
  return o->has_grid || o->has_block || o->override.shared_bytes;
}

/* The runtime's check of the arguments and the launch configuration: the
   rule's, with the overrides. A kernel without a launch block has no
   configuration to compute (the runtime says FLYRT_ERROR_LAUNCH_RULE after
   checking the arguments): --grid and --block stand for it then. */
static int check_launch(Run *r) {
  FlyrtStatus s = flyrtKernelLaunchConfigFor(r->kernel, r->launch, r->nlaunch, &r->config);
  bool given = r->o.has_grid && r->o.has_block;
  if (s == FLYRT_ERROR_LAUNCH_RULE && given)
    memset(&r->config, 0, sizeof r->config);
  else if (s != FLYRT_SUCCESS)
    return error("%s", flyrtLastError());
  const FlyrtLaunchConfig *ov = &r->o.override;
  for (int i = 0; i < 3; i++) {
    if (r->o.has_grid)
      r->config.grid[i] = ov->grid[i];
    if (r->o.has_block)
      r->config.block[i] = ov->block[i];
  }
  if (ov->shared_bytes)
    r->config.shared_bytes = ov->shared_bytes;
  /* A kernel with a cluster runs on whole clusters (the launch refuses
     others, as libflyrt does; a dry run says so too). */
  uint32_t cl[3];
  if (flyrtKernelCluster(r->kernel, cl))
    for (int i = 0; i < 3; i++)
      if (r->config.grid[i] % cl[i])
        return error("%s: a grid of %u x %u x %u blocks is not made of whole clusters of %u x %u "
                     "x %u blocks (the kernel's cluster)",
                     flyrtKernelName(r->kernel), r->config.grid[0], r->config.grid[1],
                     r->config.grid[2], cl[0], cl[1], cl[2]);
  return FLYC_OK;
}

static int bind_arguments(Run *r) {
  int status = read_params(r);
  if (status == FLYC_OK)
    status = check_names(r);
  if (status == FLYC_OK)
    status = check_missing(r);
  if (status == FLYC_OK)
    status = check_outputs(r);
  if (status == FLYC_OK)
    status = make_arguments(r);
  if (status == FLYC_OK)
    status = check_launch(r);
  return status;
}

/* A seed from the clock and the process, when none is given: printed, so a
   run can be repeated with --seed. Kept below 2^53 so it reads back the
   same anywhere. */
static void seed_rng(Run *r) {
  r->seed = r->o.seed;
  if (!r->o.has_seed) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    r->seed =
        ((uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec ^ (uint64_t)getpid() << 32) &
        ((1ull << 53) - 1);
  }
  flyc_rng_seed(&r->rng, r->seed);
}

/* "vector_add BLOCK=256 VEC=4 @sm_90 on GPU 0 (NVIDIA H100): grid (1024, 1,
   1), block (256, 1, 1), shared 0 bytes, seed 7". */
static void print_launch(const Run *r) {
  const char *spec = flyrtKernelSpec(r->kernel);
  const FlyrtLaunchConfig *c = &r->config;
  printf("%s%s%s @%s ", flyrtKernelName(r->kernel), *spec ? " " : "", spec,
         flyrtModuleTarget(r->module));
  if (r->dev.ptr)
    printf("on GPU %d (%s)", flyrtDeviceOrdinal(r->dev), flyrtDeviceName(r->dev));
  else
    printf("without a GPU");
  printf(": grid (%u, %u, %u), block (%u, %u, %u), shared %u bytes", c->grid[0], c->grid[1],
         c->grid[2], c->block[0], c->block[1], c->block[2], c->shared_bytes);
  uint32_t cl[3];
  if (flyrtKernelCluster(r->kernel, cl))
    printf(", cluster (%u, %u, %u)", cl[0], cl[1], cl[2]);
  if (r->random)
    printf(", seed %" PRIu64, r->seed);
  puts(r->o.dry_run ? " (dry run)" : "");
  fflush(stdout);
}

/* ---- on the GPU ---- */

static int gpu_error(const char *what) { return error("%s: %s", what, flyrtLastError()); }

/* Device memory for each tensor, filled from the host (or cleared). The
   host copy of generated data is freed at once: large tensors need it
   only until it is on the device. */
static int upload(Run *r) {
  for (int i = 0; i < r->nlaunch; i++) {
    FlycRunArg *a = &r->o.args[r->arg_of_launch[i]];
    if (!flyc_run_arg_is_tensor(a))
      continue;
    size_t bytes = (size_t)flyc_run_arg_bytes(a);
    bool oom;
    if (flyrtMalloc(r->dev, bytes ? bytes : 1, &r->device_ptrs[i]) != FLYRT_SUCCESS)
      return error("argument %s: cannot allocate %zu bytes on the GPU: %s", a->name, bytes,
                   flyrtLastError());
    r->launch[i].u.tensor.data = r->device_ptrs[i];
    const void *host = flyc_run_arg_host_data(a, &r->rng, &oom);
    if (oom)
      return error("argument %s: out of memory for %zu bytes", a->name, bytes);
    FlyrtStatus s = host ? flyrtMemcpyHostToDevice(r->dev, r->device_ptrs[i], host, bytes)
                         : flyrtMemset(r->dev, r->device_ptrs[i], 0, bytes);
    flyc_run_arg_release(a);
    if (s != FLYRT_SUCCESS)
      return gpu_error("copying the arguments to the GPU");
  }
  return FLYC_OK;
}

static const FlyrtLaunchConfig *override_of(const Run *r) {
  return has_override(&r->o) ? &r->config : NULL;
}

static int launch_once(Run *r) {
  if (flyrtKernelLaunch(r->kernel, r->launch, r->nlaunch, NULL, override_of(r)) != FLYRT_SUCCESS)
    return error("%s", flyrtLastError());
  if (flyrtDeviceSynchronize(r->dev) != FLYRT_SUCCESS)
    return gpu_error("the kernel failed");
  return FLYC_OK;
}

static int launch_index_of(const Run *r, const char *name) {
  for (int i = 0; i < r->nlaunch; i++)
    if (strcmp(r->o.args[r->arg_of_launch[i]].name, name) == 0)
      return i;
  return -1;
}

static int write_output(Run *r, const Output *out) {
  int i = launch_index_of(r, out->name);
  const FlyrtTensor *t = &r->launch[i].u.tensor;
  size_t bytes = (size_t)flyc_run_arg_bytes(&r->o.args[r->arg_of_launch[i]]);
  void *host = malloc(bytes ? bytes : 1);
  if (!host)
    return error("--output %s: out of memory for %zu bytes", out->name, bytes);
  char why[1024];
  int status = FLYC_OK;
  if (flyrtMemcpyDeviceToHost(r->dev, host, r->device_ptrs[i], bytes) != FLYRT_SUCCESS)
    status = gpu_error("copying the outputs from the GPU");
  else if (!flyc_run_write_npy(out->path, t->dtype, t->rank, t->shape, host, why, sizeof why))
    status = error("--output %s: %s", out->name, why);
  else
    printf("wrote %s to %s\n", out->name, out->path);
  free(host);
  return status;
}

static int compare_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

static uint64_t tensor_bytes(const Run *r) {
  uint64_t n = 0;
  for (int i = 0; i < r->nlaunch; i++)
    if (r->launch[i].kind == FLYRT_ARG_TENSOR)
      n += flyc_run_arg_bytes(&r->o.args[r->arg_of_launch[i]]);
  return n;
}

/* One timed launch: events recorded around it on the default stream. */
static int time_launch(Run *r, FlyrtEvent start, FlyrtEvent stop, float *ms) {
  if (flyrtEventRecord(start, NULL) != FLYRT_SUCCESS ||
      flyrtKernelLaunch(r->kernel, r->launch, r->nlaunch, NULL, override_of(r)) != FLYRT_SUCCESS ||
      flyrtEventRecord(stop, NULL) != FLYRT_SUCCESS ||
      flyrtEventSynchronize(stop) != FLYRT_SUCCESS ||
      flyrtEventElapsed(start, stop, ms) != FLYRT_SUCCESS)
    return gpu_error("--bench");
  return FLYC_OK;
}

static void print_bench(const Run *r, float *ms, long n) {
  qsort(ms, (size_t)n, sizeof *ms, compare_float);
  double median = n % 2 ? ms[n / 2] : 0.5 * ((double)ms[n / 2 - 1] + ms[n / 2]);
  double seconds = median * 1e-3;
  uint64_t bytes = tensor_bytes(r);
  printf("bench: %ld launches, median %.2f us, min %.2f us, %.2f GB/s (%" PRIu64 " bytes)", n,
         median * 1e3, ms[0] * 1e3, seconds > 0 ? (double)bytes / seconds * 1e-9 : 0.0, bytes);
  if (r->o.flops)
    printf(", %.2f TFLOP/s", seconds > 0 ? r->o.flops / seconds * 1e-12 : 0.0);
  putchar('\n');
}

/* Each launch timed on its own, so the median is of single launches and
   not dragged by the occasional slow one; a warm-up first brings clocks
   and caches to their steady state. */
static int bench(Run *r) {
  long n = r->o.bench, warmup = n < 10 ? n : 10;
  float *ms = malloc((size_t)n * sizeof *ms);
  FlyrtEvent start = {NULL}, stop = {NULL};
  int status = FLYC_OK;
  if (!ms)
    status = error("out of memory");
  else if (flyrtEventCreate(r->dev, &start) != FLYRT_SUCCESS ||
           flyrtEventCreate(r->dev, &stop) != FLYRT_SUCCESS)
    status = gpu_error("--bench");
  for (long i = 0; status == FLYC_OK && i < warmup + n; i++)
    status = time_launch(r, start, stop, &ms[i < warmup ? 0 : i - warmup]);
  if (status == FLYC_OK)
    print_bench(r, ms, n);
  flyrtEventDestroy(start);
  flyrtEventDestroy(stop);
  free(ms);
  return status;
}

static int execute(Run *r) {
  int status = upload(r);
  if (status == FLYC_OK)
    status = launch_once(r);
  for (int i = 0; status == FLYC_OK && i < r->o.noutputs; i++)
    status = write_output(r, &r->o.outputs[i]);
  if (status == FLYC_OK && r->o.bench)
    status = bench(r);
  return status;
}

static int run(Run *r) {
  open_device(r);
  int status = load_bundle(r);
  if (status == FLYC_OK)
    status = make_module(r);
  if (status == FLYC_OK)
    status = find_kernel(r);
  if (status == FLYC_OK)
    status = bind_arguments(r);
  if (status != FLYC_OK)
    return status;
  seed_rng(r);
  if (r->o.dry_run || r->dev.ptr)
    print_launch(r);
  if (r->o.dry_run)
    return FLYC_OK;
  if (!r->dev.ptr)
    return error("no GPU: %s", r->no_device);
  status = execute(r);
  fflush(stdout);
  return status;
}

static void release(Run *r) {
  for (int i = 0; r->device_ptrs && i < r->nlaunch; i++)
    if (r->device_ptrs[i])
      flyrtFree(r->dev, r->device_ptrs[i]);
  for (int i = 0; r->o.args && i < r->o.nargs; i++)
    flyc_run_arg_release(&r->o.args[i]);
  flyrtModuleDestroy(r->module);
  flyrtBundleDestroy(r->bundle);
  flyrtDeviceDestroy(r->dev);
  free(r->params);
  free(r->arg_of_param);
  free(r->launch);
  free(r->arg_of_launch);
  free(r->device_ptrs);
  free(r->o.defines);
  free(r->o.outputs);
  free(r->o.args);
}

int flyc_run_command(int argc, char **argv) {
  Run r;
  memset(&r, 0, sizeof r);
  bool help;
  int status = parse_options(argc, argv, &r.o, &help);
  if (status == FLYC_OK && !help)
    status = run(&r);
  release(&r);
  return status;
}
