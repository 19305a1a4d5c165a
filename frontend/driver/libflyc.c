/* libflyc.c — flycCompile: options, sources, the cache, the back end.
 *
 * A compile reads the options and loads the sources (the root and every
 * file it imports: parsing is cheap and needs no MLIR), then for each
 * target computes the cache key and looks it up. Only the targets that
 * miss go to the back end, which is loaded then. Several targets make one
 * bundle: each target's bundle is cached on its own and they are merged.
 *
 * The cache key is a SHA-256 of: the compiler's and MLIR's versions, the
 * target, the options in a canonical form (emit, -D bindings, limits,
 * kernel, diagnostics format), the path and text of every source file, and
 * for --emit=cubin or hsaco the external tool that makes the binary. A hit
 * replays the diagnostics the compile gave (its warnings). */
#include "libflyc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fly_bundle_write.h"
#include "fly_ptxas.h"
#include "fly_sha256.h"
#include "fly_version.h"
#include "libflyc_internal.h"

typedef struct Options {
  char **args;
  int n, cap;
} Options;

typedef struct Result {
  int status;
  char *data;
  size_t len;
  char *diag;
  size_t diag_len;
  int hits;
} Result;

FLYC_API const char *flycVersion(void) { return FLY_VERSION; }

FLYC_API FlycCompileOptions flycCompileOptionsCreate(void) {
  FlycCompileOptions o = {calloc(1, sizeof(Options))};
  return o;
}

FLYC_API void flycCompileOptionsDestroy(FlycCompileOptions o) {
  Options *p = o.ptr;
  if (!p)
    return;
  for (int i = 0; i < p->n; i++)
    free(p->args[i]);
  free(p->args);
  free(p);
}

FLYC_API void flycCompileOptionsAdd(FlycCompileOptions o, const char *option) {
  Options *p = o.ptr;
  if (!p || !option)
    return;
  if (p->n == p->cap) {
    int cap = p->cap ? p->cap * 2 : 8;
    char **a = realloc(p->args, sizeof *a * (size_t)cap);
    if (!a)
      return;
    p->args = a;
    p->cap = cap;
  }
  char *s = strdup(option);
  if (s)
    p->args[p->n++] = s;
}

FLYC_API bool flycCompileResultSucceeded(FlycCompileResult r) {
  return r.ptr && ((Result *)r.ptr)->status == 0;
}
FLYC_API int flycCompileResultStatus(FlycCompileResult r) {
  return r.ptr ? ((Result *)r.ptr)->status : 1;
}
FLYC_API const void *flycCompileResultData(FlycCompileResult r, size_t *len) {
  Result *p = r.ptr;
  if (len)
    *len = p && p->data ? p->len : 0;
  return p ? p->data : NULL;
}
FLYC_API const char *flycCompileResultDiagnostics(FlycCompileResult r) {
  Result *p = r.ptr;
  return p && p->diag ? p->diag : "";
}
FLYC_API int flycCompileResultCacheHits(FlycCompileResult r) {
  return r.ptr ? ((Result *)r.ptr)->hits : 0;
}
FLYC_API void flycCompileResultDestroy(FlycCompileResult r) {
  Result *p = r.ptr;
  if (!p)
    return;
  free(p->data);
  free(p->diag);
  free(p);
}

/* ---- keys ---- */

static void hash_str(FlySha256 *h, const char *s) {
  fly_sha256_update(h, s ? s : "", strlen(s ? s : "") + 1);
}

/* The tool that makes a binary is part of what the output depends on. */
static void hash_tool(FlySha256 *h, const char *emit, const FlyTarget *t) {
  char *tool = NULL;
  if (strcmp(emit, "cubin") == 0)
    tool = fly_ptxas_find();
  else if (t->vendor == FLY_VENDOR_AMD &&
           (strcmp(emit, "hsaco") == 0 || strcmp(emit, "bundle") == 0) && getenv("FLYC_LLD"))
    tool = strdup(getenv("FLYC_LLD"));
  struct stat st;
  if (tool && stat(tool, &st) == 0) {
    char id[96];
    snprintf(id, sizeof id, "%lld.%lld", (long long)st.st_size, (long long)st.st_mtime);
    hash_str(h, tool);
    hash_str(h, id);
  }
  free(tool);
}

static void hash_sources(FlySha256 *h, const FlyUnit *u) {
  for (int i = 0; i < u->sources.count; i++) {
    const FlySource *s = &u->sources.files[i];
    hash_str(h, s->path);
    uint64_t n = s->len;
    fly_sha256_update(h, &n, sizeof n);
    fly_sha256_update(h, s->text, s->len);
  }
}

static void hash_num(FlySha256 *h, long v) {
  char num[32];
  snprintf(num, sizeof num, "%ld", v);
  hash_str(h, num);
}

/* Everything the back end's output depends on beyond the sources: the
   options it receives, each in a fixed order (-D in the order given: the
   last of a name wins). */
static void hash_options(FlySha256 *h, const FlycOptions *o, const char *emit) {
  hash_str(h, emit);
  hash_num(h, o->unit.format);
  hash_num(h, o->unit.color == 1);
  hash_num(h, o->unit.error_limit);
  hash_num(h, o->unit.werror);
  hash_str(h, o->unit.stdlib_dir);
  for (int i = 0; i < o->check.ndefines; i++) {
    hash_str(h, o->defines[i].name);
    hash_str(h, o->defines[i].value);
  }
  hash_str(h, "--");
  hash_num(h, o->check.step_limit);
  hash_num(h, o->check.depth_limit);
  hash_str(h, o->check.only_kernel);
  hash_num(h, o->locations);
  hash_num(h, o->opt_level);
}

static void key_of(const FlyUnit *u, const FlycOptions *o, const FlyTarget *t, const char *emit,
                   char key[65]) {
  FlySha256 h;
  fly_sha256_init(&h);
  hash_str(&h, "fly-cache-key-2");
  hash_str(&h, FLY_VERSION);
  hash_str(&h, FLY_MLIR_VERSION);
  hash_str(&h, fly_backend_identity());
  hash_str(&h, t->arch);
  hash_options(&h, o, emit);
  hash_tool(&h, emit, t);
  hash_sources(&h, u);
  unsigned char d[32];
  fly_sha256_final(&h, d);
  fly_sha256_hex(d, key);
}

/* ---- compiling ---- */

/* Appends one target's diagnostics (taking the text), skipping a text
   already there: each target repeats the warnings of the checks that do not
   depend on it. */
static void add_diag(FILE *all, char **seen, int *nseen, char *text, size_t len) {
  bool repeated = !text || !len;
  for (int i = 0; !repeated && i < *nseen; i++)
    repeated = strcmp(seen[i], text) == 0;
  if (repeated) {
    free(text);
    return;
  }
  fwrite(text, 1, len, all);
  seen[(*nseen)++] = text; /* one a target at most */
}

typedef struct Compile {
  const char *path;
  const FlycOptions *o;
  const FlyUnit *u;
  const char *emit;
  char source_hash[65];
  bool cache;
  FILE *diag;
  char *seen[FLYC_MAX_TARGETS];
  int nseen;
  Result *r;
} Compile;

/* A bundle read from the cache is checked as the runtime checks one (its
   own checksum, sizes and references): the entry's checksum only shows
   that the entry is as it was stored, not that what was stored is sound. */
static bool usable(const char *emit, const char *data, size_t len) {
  FlyBundle b;
  char why[256];
  return strcmp(emit, "bundle") != 0 || fly_bundle_open(&b, data, len, why, sizeof why);
}

/* The cache's entry for key, when it has a usable one; one that is not is
   dropped, to be compiled again and stored anew. */
static char *cached(Compile *c, const char *key, size_t *len, char **diag, size_t *diag_len) {
  char *data;
  if (!fly_cache_get(key, &data, len, diag, diag_len))
    return NULL;
  if (usable(c->emit, data, *len)) {
    c->r->hits++;
    return data;
  }
  free(data);
  free(*diag);
  *diag = NULL;
  *diag_len = 0;
  fly_cache_drop(key);
  return NULL;
}

/* One target's output, from the cache or the back end; NULL after adding
   why to the diagnostics. */
static char *compile_target(Compile *c, const FlyTarget *t, size_t *len, char **diag,
                            size_t *diag_len) {
  char key[65];
  if (c->cache) {
    key_of(c->u, c->o, t, c->emit, key);
    char *data = cached(c, key, len, diag, diag_len);
    if (data)
      return data;
  }
  char why[1200];
  FlyBackendCompileFn fn = fly_backend_load(why, sizeof why);
  if (!fn) {
    fprintf(c->diag, "flyc: error: %s\n", why);
    return NULL;
  }
  const FlySource *root = c->u ? &c->u->sources.files[c->u->root] : NULL;
  FlyBackendRequest rq = {.abi = FLY_BACKEND_ABI,
                          .path = c->path,
                          .text = root ? root->text : NULL,
                          .len = root ? root->len : 0,
                          .unit = c->o->unit,
                          .check = c->o->check,
                          .target = t->arch,
                          .emit = c->emit,
                          .opt_level = c->o->opt_level,
                          .locations = c->o->locations,
                          .source_hash = c->source_hash};
  FlyBackendResult rs;
  fn(&rq, &rs);
  *diag = rs.diagnostics;
  *diag_len = rs.diagnostics_len;
  if (rs.status != 0) {
    free(rs.data);
    if (c->r->status == 0)
      c->r->status = rs.status;
    return NULL;
  }
  if (c->cache)
    fly_cache_put(key, rs.data, rs.len, rs.diagnostics ? rs.diagnostics : "", rs.diagnostics_len);
  *len = rs.len;
  return rs.data;
}

/* Each target's output; several are merged into one bundle. */
static void compile_targets(Compile *c) {
  const FlycOptions *o = c->o;
  FlyBundleWriter w;
  fly_bundle_writer_init(&w);
  bool merge = o->ntargets > 1;
  for (int i = 0; i < o->ntargets && c->r->status == 0; i++) {
    size_t len = 0, diag_len = 0;
    char *diag = NULL;
    char *out = compile_target(c, o->targets[i], &len, &diag, &diag_len);
    add_diag(c->diag, c->seen, &c->nseen, diag, diag_len);
    if (out && !merge) {
      c->r->data = out;
      c->r->len = len;
    } else if (out) {
      FlyBundle b;
      char why[256];
      if (fly_bundle_open(&b, out, len, why, sizeof why)) {
        fly_bundle_writer_merge(&w, &b);
      } else {
        fprintf(c->diag, "flyc: internal error: the bundle for %s is damaged: %s\n",
                o->targets[i]->arch, why);
        c->r->status = FLYC_ERRORS;
      }
      free(out);
    } else if (c->r->status == 0) {
      c->r->status = 1;
    }
  }
  if (merge && c->r->status == 0) {
    c->r->data = fly_bundle_writer_finish(&w, "flyc " FLY_VERSION, "LLVM " FLY_MLIR_VERSION,
                                          c->source_hash, &c->r->len);
    if (!c->r->data) {
      fputs("flyc: error: out of memory merging the bundles\n", c->diag);
      c->r->status = 1;
    }
  }
  fly_bundle_writer_release(&w);
}

/* The options, with the path after them; FLYC_USAGE after reporting. */
static int read_options(const Options *p, const char *path, FILE *diag, FlycOptions *o,
                        char ***argv) {
  int n = p ? p->n : 0;
  *argv = calloc((size_t)n + 3, sizeof **argv);
  if (!*argv)
    return FLYC_ERRORS;
  for (int i = 0; i < n; i++)
    (*argv)[i] = p->args[i];
  (*argv)[n++] = "--";
  (*argv)[n++] = (char *)path;
  bool help;
  int status = flyc_parse_options_to(
      diag, "compile", "", FLYC_OPT_STDLIB | FLYC_OPT_SEMA | FLYC_OPT_COMPILE, n, *argv, o, &help);
  if (status == FLYC_OK && (help || o->output || o->split)) {
    fprintf(diag, "flyc compile: error: %s is an option of the command line only\n",
            help        ? "--help"
            : o->output ? "-o"
                        : "--split-input-file");
    status = FLYC_USAGE;
  }
  return status;
}

/* No --target: FLYC_TARGET, the GPU found, or the default. */
static int default_targets(FlycOptions *o, FILE *diag) {
  if (o->ntargets)
    return FLYC_OK;
  const char *from;
  const char *list = fly_default_targets(&from);
  char arg[256];
  snprintf(arg, sizeof arg, "--target=%s", list);
  char *argv[3] = {arg, "--", "x"};
  FlycOptions t;
  bool help;
  if (flyc_parse_options_to(diag, "compile", "", FLYC_OPT_SEMA, 3, argv, &t, &help) != FLYC_OK) {
    fprintf(diag, "flyc compile: error: the target comes from %s ('%s')\n", from, list);
    return FLYC_USAGE;
  }
  memcpy(o->targets, t.targets, sizeof t.targets);
  o->ntargets = t.ntargets;
  o->check.target = t.targets[0];
  return FLYC_OK;
}

static bool dumping(void) {
  const char *on = getenv("FLYC_DUMP_IR");
  return on && *on && strcmp(on, "0") != 0;
}

static void run(Compile *c, const char *source, size_t len) {
  FlycOptions *o = (FlycOptions *)c->o;
  if (!o->emit)
    o->emit = "bundle";
  c->emit = o->emit;
  if (o->unit.color < 0)
    o->unit.color = 0; /* the text goes to a string, not a terminal */
  if ((c->r->status = default_targets(o, c->diag)) != FLYC_OK)
    return;
  if (o->ntargets > 1 && strcmp(o->emit, "bundle") != 0) {
    fprintf(c->diag,
            "flyc compile: error: several targets make one bundle: use --emit=bundle, or "
            "compile once per target for --emit=%s\n",
            o->emit);
    c->r->status = FLYC_USAGE;
    return;
  }
  c->cache = !o->no_cache && fly_cache_enabled() && !dumping() && strcmp(o->emit, "irdl") != 0;
  FlyUnit u;
  char *early = NULL;
  size_t early_len = 0;
  FILE *early_diag = NULL;
  if (strcmp(o->emit, "irdl") != 0) {
    /* The sources, for the key. What loading them reports is the back
       end's to report again, unless it stops the compile here. */
    if (!(early_diag = open_memstream(&early, &early_len))) {
      c->r->status = FLYC_ERRORS;
      return;
    }
    fly_unit_init(&u, early_diag);
    fly_unit_apply(&u, &o->unit);
    if (source)
      fly_unit_load_text(&u, c->path, source, len);
    else
      fly_unit_load(&u, c->path);
    if (!fly_unit_ok(&u)) {
      c->r->status = flyc_finish(&u);
      fclose(early_diag);
      fwrite(early, 1, early_len, c->diag);
      free(early);
      return;
    }
    c->u = &u;
    FlySha256 h;
    fly_sha256_init(&h);
    hash_sources(&h, &u);
    unsigned char d[32];
    fly_sha256_final(&h, d);
    fly_sha256_hex(d, c->source_hash);
  }
  compile_targets(c);
  for (int i = 0; i < c->nseen; i++)
    free(c->seen[i]);
  if (c->u) {
    fly_unit_release(&u);
    fclose(early_diag);
    free(early);
  }
}

FlycCompileResult flyc_compile_parsed(const char *path, const char *source, size_t len,
                                      FlycOptions *o) {
  FlycCompileResult res = {calloc(1, sizeof(Result))};
  Result *r = res.ptr;
  if (!r)
    return res;
  FILE *diag = open_memstream(&r->diag, &r->diag_len);
  if (!diag) {
    r->status = 1;
    return res;
  }
  Compile c = {.path = path, .o = o, .diag = diag, .r = r};
  run(&c, source, len);
  fclose(diag);
  if (r->status != 0) {
    free(r->data);
    r->data = NULL;
    r->len = 0;
  }
  return res;
}

FLYC_API FlycCompileResult flycCompile(const char *path, const char *source, size_t len,
                                       FlycCompileOptions opts) {
  char *text = NULL;
  size_t text_len = 0;
  FILE *diag = open_memstream(&text, &text_len);
  FlycOptions o;
  flyc_options_defaults(&o);
  char **argv = NULL;
  int status = diag ? read_options(opts.ptr, path ? path : "", diag, &o, &argv) : FLYC_ERRORS;
  if (diag)
    fclose(diag);
  FlycCompileResult res;
  if (status == FLYC_OK) {
    res = flyc_compile_parsed(path, source, len, &o);
  } else {
    res.ptr = calloc(1, sizeof(Result));
    if (res.ptr) {
      Result *r = res.ptr;
      r->status = status;
      r->diag = text;
      r->diag_len = text_len;
      text = NULL;
    }
  }
  free(text);
  flyc_free_options(&o);
  free(argv);
  return res;
}
