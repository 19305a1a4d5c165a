/* flyc_tables.c — `flyc vocabulary --table=builtins|atoms|targets`: the
 * registries (fly_ops.def, fly_atoms.def, fly_targets.def) as Markdown
 * tables. docs/language.md holds their output between marks that its test
 * regenerates and compares, so the reference cannot drift from the tables
 * the compiler is built from. */
#include <stdio.h>
#include <string.h>

#include "fly_atom.h"
#include "fly_builtin_info.h"
#include "flyc_commands.h"

/* The builtins by group: a heading and a table each. */
static void builtins(void) {
  for (int g = 0; g < FLY_GROUP_COUNT; g++) {
    bool any = false;
    for (int i = 0; fly_builtin_info_at(i); i++) {
      const FlyBuiltinInfo *b = fly_builtin_info_at(i);
      if ((int)b->group != g)
        continue;
      if (!any)
        printf("%s**%s**\n\n| builtin | meaning |\n| --- | --- |\n", g ? "\n" : "",
               fly_group_title((FlyGroup)g));
      any = true;
      printf("| `%s` | %s |\n", b->usage, b->doc);
    }
  }
}

static void type_list(unsigned codes) {
  bool first = true;
  for (int c = 0; c < 32; c++)
    if ((codes >> c) & 1u) {
      printf("%s%s", first ? "" : ", ", fly_type_code_name((FlyTypeCode)c));
      first = false;
    }
}

static void atoms(void) {
  printf("| atom | family | shape | threads | operands | targets |\n"
         "| --- | --- | --- | --- | --- | --- |\n");
  for (int i = 0; fly_atom_at(i); i++) {
    const FlyAtom *a = fly_atom_at(i);
    if (a->kind == FLY_ATOM_COPY) {
      printf("| `%s` | copy: %s | ", a->name, fly_copy_family_name(a->copy));
      bool first = true;
      for (int b = 0; b < 32; b++)
        if ((a->widths >> b) & 1u) {
          printf("%s%u", first ? "" : ", ", 1u << b);
          first = false;
        }
      /* A warp-wide copy (ldmatrix) moves 16-bit elements, 16 bytes a lane. */
      bool warp = fly_atom_is_matrix(a);
      printf(" bits | %d | %s | %s |\n", warp ? 32 : 1, warp ? "16-bit" : "any",
             fly_atom_targets(a));
      continue;
    }
    printf("| `%s` | %s | %dx%dx%d | %d | ", a->name, fly_mma_family_name(a->mma), a->m, a->n, a->k,
           a->threads);
    type_list(a->inputs);
    printf("%s into %s | %s |\n", a->mixes ? " (A and B in any pairing)" : "",
           fly_type_code_name(a->acc), fly_atom_targets(a));
  }
}

static void targets(void) {
  printf("| target | `target.vendor` | `target.family` | `warp_size` | shared memory | MMA | "
         "features |\n| --- | --- | --- | --- | --- | --- | --- |\n");
  for (int i = 0; fly_target_at(i); i++) {
    const FlyTarget *t = fly_target_at(i);
    printf("| `%s` | `\"%s\"` | `\"%s\"` | %d | %d KiB | ", t->arch, fly_vendor_name(t->vendor),
           t->family, t->warp_size, t->smem_per_block / 1024);
    bool first = true;
    for (int m = 0; m < FLY_MMA_FAMILY_COUNT; m++)
      if (fly_target_has_mma(t, (FlyMmaFamily)m)) {
        printf("%s%s", first ? "" : ", ", fly_mma_family_name((FlyMmaFamily)m));
        first = false;
      }
    printf(" | ");
    first = true;
    for (int f = 0; f < FLY_FEATURE_COUNT; f++)
      if (fly_target_has(t, (FlyFeature)f)) {
        printf("%s%s", first ? "" : ", ", fly_feature_name((FlyFeature)f));
        first = false;
      }
    printf(" |\n");
  }
  printf("\n| feature | meaning |\n| --- | --- |\n");
  for (int f = 0; f < FLY_FEATURE_COUNT; f++)
    printf("| %s | %s |\n", fly_feature_name((FlyFeature)f), fly_feature_doc((FlyFeature)f));
}

static const struct {
  const char *name;
  void (*print)(void);
} tables[] = {{"builtins", builtins}, {"atoms", atoms}, {"targets", targets}};

bool flyc_print_table(const char *name) {
  for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
    if (strcmp(name, tables[i].name) == 0) {
      tables[i].print();
      return true;
    }
  return false;
}
