/* fly_words.c — the words the lexer reserves, by kind, for tools that must
 * know them (editor grammars, through `flyc vocabulary`). lexer.re is the
 * definition; tests/editors/check-lexer-words.py fails when this list and
 * the lexer's rules differ. */
#include "fly_syntax.h"

const FlyWord fly_reserved_words[] = {
    /* Declarations and statements. */
    {"kernel", "keyword"},
    {"fn", "keyword"},
    {"launch", "keyword"},
    {"const", "keyword"},
    {"let", "keyword"},
    {"if", "keyword"},
    {"else", "keyword"},
    {"for", "keyword"},
    {"while", "keyword"},
    {"break", "keyword"},
    {"continue", "keyword"},
    {"in", "keyword"},
    {"carry", "keyword"},
    {"yield", "keyword"},
    {"return", "keyword"},
    {"import", "keyword"},
    {"static_assert", "keyword"},
    {"require", "keyword"},
    {"as", "keyword"},
    {"true", "constant"},
    {"false", "constant"},
    /* Element types. */
    {"i1", "type"},
    {"i8", "type"},
    {"i16", "type"},
    {"i32", "type"},
    {"i64", "type"},
    {"index", "type"},
    {"f16", "type"},
    {"bf16", "type"},
    {"f32", "type"},
    {"f64", "type"},
    {"f8e4m3", "type"},
    {"f8e5m2", "type"},
    {"f8e4m3fnuz", "type"},
    {"f8e5m2fnuz", "type"},
    /* Types that take arguments: vec<4, f32>, tensor<f32, ?:1>. */
    {"vec", "type-constructor"},
    {"tensor", "type-constructor"},
    {"smem", "type-constructor"},
    {"rmem", "type-constructor"},
    {NULL, NULL},
};
