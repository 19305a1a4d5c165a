/* lexer.re — the tokens of Fly, for re2c (docs/language.md, "Lexical structure").
 *
 * The whole file is in memory with a NUL after it (fly_source.h), so the
 * lexer runs without refills, using re2c's end-of-input rule for the real end
 * and treating a NUL before it as bad input. Lexical errors are reported here
 * and skipped, so the parser sees a clean token stream and does not pile its
 * own errors on top. Brackets are tracked on a stack: it bounds nesting, lets
 * syntax errors point at the bracket left open, and tells a '>' that closes
 * type arguments (vec<4, vec<2, f32>>) from a shift or a comparison. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fly_syntax.h"
#include "parser.h"

/*!re2c
  re2c:api:style = free-form;
  re2c:define:YYCTYPE = "unsigned char";
  re2c:define:YYCURSOR = "S->cur";
  re2c:define:YYLIMIT = "S->lim";
  re2c:define:YYMARKER = "S->marker";
  re2c:yyfill:enable = 0;
  re2c:eof = 0;

  digit  = [0-9];
  hex    = [0-9a-fA-F];
  dec    = digit+ ("_"+ digit+)*;
  hexnum = "0x" hex+ ("_"+ hex+)*;
  binnum = "0b" [01]+ ("_"+ [01]+)*;
  exp    = [eE] [+-]? dec;
  float  = dec "." dec exp? | dec exp;
  ident  = [a-zA-Z_] [a-zA-Z0-9_]*;
  word   = [a-zA-Z0-9_]+;

  // Well-formed UTF-8 beyond ASCII: no overlong forms, no surrogates.
  utf8 = [\xc2-\xdf] [\x80-\xbf]
       | "\xe0" [\xa0-\xbf] [\x80-\xbf]
       | [\xe1-\xec\xee\xef] [\x80-\xbf]{2}
       | "\xed" [\x80-\x9f] [\x80-\xbf]
       | "\xf0" [\x90-\xbf] [\x80-\xbf]{2}
       | [\xf1-\xf3] [\x80-\xbf]{3}
       | "\xf4" [\x80-\x8f] [\x80-\xbf]{2};
*/

static uint32_t offset(const FlySyntax *S, const unsigned char *p) {
  return (uint32_t)(p - S->text);
}

static void error_at(FlySyntax *S, const unsigned char *from, const unsigned char *to,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void error_at(FlySyntax *S, const unsigned char *from, const unsigned char *to,
                     const char *fmt, ...) {
  if (S->fatal)
    return;
  va_list ap;
  va_start(ap, fmt);
  fly_diag_vreport(S->diag, FLY_ERROR, fly_span(S->file, offset(S, from), offset(S, to)), fmt,
                   ap);
  va_end(ap);
  if (fly_diag_stopped(S->diag))
    S->fatal = true;
}

void fly_syntax_report_limit(FlySyntax *S) {
  if (!S->build.failed || S->fatal)
    return;
  FlyLoc at = S->build.failed_at;
  fly_error(S->diag, fly_span(S->file, at.begin, at.end), "%s", S->build.failure);
  S->fatal = true;
}

/* The code point of a well-formed UTF-8 sequence. */
static uint32_t decode_utf8(const unsigned char *p, const unsigned char *end) {
  uint32_t c = p[0];
  int n = end - p;
  if (n == 2)
    return (c & 0x1f) << 6 | (p[1] & 0x3f);
  if (n == 3)
    return (c & 0x0f) << 12 | (p[1] & 0x3f) << 6 | (p[2] & 0x3f);
  return (c & 0x07) << 18 | (p[1] & 0x3f) << 12 | (p[2] & 0x3f) << 6 | (p[3] & 0x3f);
}

/* ---- brackets ------------------------------------------------------------ */

static int open_bracket(FlySyntax *S, char open, int token) {
  if (S->nbrackets == FLY_MAX_BRACKETS) {
    error_at(S, S->tok, S->cur, "brackets nested too deeply (limit is %d)", FLY_MAX_BRACKETS);
    S->fatal = true;
    return TOK_END;
  }
  S->brackets[S->nbrackets].at = offset(S, S->tok);
  S->brackets[S->nbrackets].open = open;
  S->nbrackets++;
  return token;
}

/* A closer pops its opener when they match; a mismatched closer leaves the
   stack alone and the parser reports it, pointing at the open bracket. */
static int close_bracket(FlySyntax *S, char open, int token) {
  if (S->nbrackets > 0 && S->brackets[S->nbrackets - 1].open == open)
    S->nbrackets--;
  return token;
}

static bool in_type_arguments(const FlySyntax *S) {
  return S->nbrackets > 0 && S->brackets[S->nbrackets - 1].open == '<';
}

/* ---- comments ------------------------------------------------------------ */

/* After "//": to the end of the line. The text must be UTF-8. */
static void line_comment(FlySyntax *S) {
  for (;;) {
    const unsigned char *start = S->cur;
    /*!re2c
      [^\n\x00\x80-\xff]+ | utf8 { continue; }
      "\n" { return; }
      $ { return; }
      "\x00" { error_at(S, start, S->cur, "NUL byte in a comment"); continue; }
      * { error_at(S, start, S->cur, "invalid UTF-8 byte 0x%02X in a comment", *start);
          continue; }
    */
  }
}

/* After "/ *": to the matching "* /"; block comments nest. */
static void block_comment(FlySyntax *S) {
  const unsigned char *opened = S->tok;
  int depth = 1;
  for (;;) {
    const unsigned char *start = S->cur;
    /*!re2c
      "*" "/" { if (--depth == 0) return; continue; }
      "/" "*" { depth++; continue; }
      [^*/\x00\x80-\xff]+ | [*/] | utf8 { continue; }
      $ { error_at(S, opened, opened + 2, "unterminated comment");
          return; }
      "\x00" { error_at(S, start, S->cur, "NUL byte in a comment"); continue; }
      * { error_at(S, start, S->cur, "invalid UTF-8 byte 0x%02X in a comment", *start);
          continue; }
    */
  }
}

/* ---- strings ------------------------------------------------------------- */

static void scratch_put(FlySyntax *S, const void *bytes, size_t n) {
  if (S->scratch_len + n + 1 > S->scratch_cap) {
    size_t cap = S->scratch_cap ? S->scratch_cap : 64;
    while (cap < S->scratch_len + n + 1)
      cap *= 2;
    char *p = realloc(S->scratch, cap);
    if (!p) {
      S->build.failed = true;
      S->build.failure = "out of memory";
      return;
    }
    S->scratch = p;
    S->scratch_cap = cap;
  }
  memcpy(S->scratch + S->scratch_len, bytes, n);
  S->scratch_len += n;
}

static void scratch_utf8(FlySyntax *S, uint32_t c) {
  unsigned char b[4];
  size_t n;
  if (c < 0x80) {
    b[0] = (unsigned char)c, n = 1;
  } else if (c < 0x800) {
    b[0] = 0xc0 | c >> 6, b[1] = 0x80 | (c & 0x3f), n = 2;
  } else if (c < 0x10000) {
    b[0] = 0xe0 | c >> 12, b[1] = 0x80 | (c >> 6 & 0x3f), b[2] = 0x80 | (c & 0x3f), n = 3;
  } else {
    b[0] = 0xf0 | c >> 18, b[1] = 0x80 | (c >> 12 & 0x3f), b[2] = 0x80 | (c >> 6 & 0x3f);
    b[3] = 0x80 | (c & 0x3f), n = 4;
  }
  scratch_put(S, b, n);
}

/* After the opening quote: decodes the escapes into S->scratch. An
   unterminated string ends at the end of its line and is still returned, so
   the parse goes on. */
static int string_literal(FlySyntax *S, YYSTYPE *value) {
  const unsigned char *opened = S->tok;
  S->scratch_len = 0;
  for (;;) {
    const unsigned char *start = S->cur;
    /*!re2c
      ["] { break; }
      [^"\\\n\r\x00\x80-\xff]+ | utf8 { scratch_put(S, start, S->cur - start); continue; }
      "\\n" { scratch_put(S, "\n", 1); continue; }
      "\\t" { scratch_put(S, "\t", 1); continue; }
      "\\r" { scratch_put(S, "\r", 1); continue; }
      "\\0" { scratch_put(S, "", 1); continue; }
      "\\\\" { scratch_put(S, "\\", 1); continue; }
      "\\\"" { scratch_put(S, "\"", 1); continue; }
      "\\x" hex hex { unsigned char b = (unsigned char)strtoul((const char *)start + 2, NULL, 16);
                      if (b >= 0x80)
                        error_at(S, start, S->cur, "\\x escape above 0x7F (write the character "
                                                   "or use \\u{...})");
                      scratch_put(S, &b, 1);
                      continue; }
      "\\u{" hex{1,6} "}" {
          uint32_t c = (uint32_t)strtoul((const char *)start + 3, NULL, 16);
          if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
            error_at(S, start, S->cur, "\\u{%X} is not a Unicode scalar value", c);
          else
            scratch_utf8(S, c);
          continue; }
      "\\x" { error_at(S, start, S->cur, "\\x must be followed by two hex digits, such as \\x41");
              continue; }
      "\\u" { error_at(S, start, S->cur, "\\u must be followed by 1 to 6 hex digits in braces, "
                                        "such as \\u{e9}");
              continue; }
      "\\" [\x20-\x7e] { error_at(S, start, S->cur, "unknown escape sequence '\\%c'", start[1]);
                         continue; }
      "\\" { /* before the end of the line: the unterminated string is the error */
             if (S->cur < S->lim && *S->cur != '\n' && *S->cur != '\r')
               error_at(S, start, S->cur, "unknown escape sequence");
             continue; }
      [\n\r] { S->cur = start;
                 S->quiet_tokens = 2;
                 error_at(S, opened, opened + 1, "unterminated string (a string ends on "
                                                 "the line it starts)");
                 break; }
      $ { S->quiet_tokens = 2;
          error_at(S, opened, opened + 1, "unterminated string (a string ends on the line "
                                          "it starts)");
          break; }
      "\x00" { error_at(S, start, S->cur, "NUL byte in a string (write \\0)"); continue; }
      * { error_at(S, start, S->cur, "invalid UTF-8 byte 0x%02X in a string", *start);
          continue; }
    */
  }
  scratch_put(S, "", 1);
  value->TOK_STRING.s = S->scratch;
  value->TOK_STRING.len = S->scratch ? (uint32_t)S->scratch_len - 1 : 0;
  return TOK_STRING;
}

/* ---- numbers ------------------------------------------------------------- */

/* Copies a numeral without its '_' separators into buf (NUL-terminated). */
static void strip_separators(const unsigned char *from, const unsigned char *to, char *buf,
                             size_t size) {
  size_t n = 0;
  for (; from < to && n + 1 < size; from++)
    if (*from != '_')
      buf[n++] = (char)*from;
  buf[n] = '\0';
}

static int int_literal(FlySyntax *S, YYSTYPE *value, int base) {
  uint64_t v = 0;
  const unsigned char *p = S->tok + (base == 10 ? 0 : 2);
  for (; p < S->cur; p++) {
    if (*p == '_')
      continue;
    unsigned d = *p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10;
    if (v > (UINT64_MAX - d) / (unsigned)base) {
      error_at(S, S->tok, S->cur, "integer literal is too large (the largest is "
                                  "18446744073709551615)");
      v = 0;
      break;
    }
    v = v * (unsigned)base + d;
  }
  value->TOK_INT = v;
  return TOK_INT;
}

static int float_literal(FlySyntax *S, YYSTYPE *value) {
  size_t size = (size_t)(S->cur - S->tok) + 1;
  char small[128], *buf = size <= sizeof small ? small : malloc(size);
  if (!buf) {
    S->build.failed = true;
    S->build.failure = "out of memory";
    value->TOK_FLOAT = 0;
    return TOK_FLOAT;
  }
  strip_separators(S->tok, S->cur, buf, size);
  errno = 0;
  double v = strtod(buf, NULL);
  if (buf != small)
    free(buf);
  if (errno == ERANGE && isinf(v)) {
    error_at(S, S->tok, S->cur, "float literal is out of range (the largest is about 1.8e308)");
    v = 0;
  }
  value->TOK_FLOAT = v;
  return TOK_FLOAT;
}

static bool is_digit_of(unsigned char c, int base) {
  if (base == 2)
    return c == '0' || c == '1';
  if (base == 16)
    return strchr("0123456789abcdefABCDEF", c) != NULL && c != '\0';
  return '0' <= c && c <= '9';
}

/* The first '_' in [from, to) that does not stand between two digits. */
static const unsigned char *misplaced_separator(const unsigned char *from,
                                                const unsigned char *to, int base) {
  for (const unsigned char *p = from; p < to; p++)
    if (*p == '_' && (p == from || !is_digit_of(p[-1], base) || p + 1 == to ||
                      !is_digit_of(p[1], base)))
      return p;
  return NULL;
}

/* Digits and separators from p; returns where they stop. */
static const unsigned char *skip_digits(const unsigned char *p, const unsigned char *end,
                                        int base) {
  while (p < end && (*p == '_' || is_digit_of(*p, base)))
    p++;
  return p;
}

/* A numeral that matched none of the number rules: say what is wrong. The
   longest prefix that has the shape of a number (digits, fraction, exponent,
   with separators anywhere) is found first; a separator misplaced inside it
   is the error, else what follows it is an invalid suffix. */
static int bad_number(FlySyntax *S, YYSTYPE *value) {
  const unsigned char *p = S->tok, *end = S->cur;
  int base = p[0] == '0' && p[1] == 'x' ? 16 : p[0] == '0' && p[1] == 'b' ? 2 : 10;
  const char *name = base == 16 ? "hexadecimal" : "binary";
  const unsigned char *digits = base == 10 ? p : p + 2;
  const unsigned char *q = skip_digits(digits, end, base);
  const unsigned char *dot = memchr(p, '.', (size_t)(end - p));
  bool bare_exponent = false;
  if (base == 10 && q < end && *q == '.' && q + 1 < end && is_digit_of(q[1], 10))
    q = skip_digits(q + 1, end, 10);
  if (base == 10 && q < end && (*q == 'e' || *q == 'E')) {
    const unsigned char *e = q + 1 + (q + 1 < end && (q[1] == '+' || q[1] == '-'));
    const unsigned char *after = skip_digits(e, end, 10);
    bare_exponent = after == e;
    if (!bare_exponent)
      q = after;
  }
  /* Separators right before a suffix go with the suffix: 12_abc has the
     suffix 'abc'. */
  const unsigned char *body = q;
  while (q < end && body > digits && body[-1] == '_')
    body--;
  const unsigned char *sep = misplaced_separator(digits, body, base);

  if (base != 10 && q == digits && (q == end || !is_digit_of(*q, 10)))
    error_at(S, p, end, "%s literal has no digits", name);
  else if (sep && base == 10) /* a decimal numeral is short: underline it */
    error_at(S, p, end, "'_' must separate digits");
  else if (sep)
    error_at(S, sep, sep + 1, "'_' must separate digits");
  else if (base != 10)
    error_at(S, q, q + 1, "invalid digit '%c' in %s literal", *q, name);
  else if (dot && (dot + 1 == end || !is_digit_of(dot[1], 10)))
    error_at(S, p, end, "a number needs a digit after its '.' (such as 1.0e5)");
  else if (bare_exponent && end - q <= 2 && (end - q == 1 || q[1] == '+' || q[1] == '-'))
    error_at(S, p, end, "exponent has no digits");
  else
    error_at(S, q, end, "invalid suffix '%.*s' on a number (write a cast such as 1.0 as f16)",
             (int)(end - q), (const char *)q);
  value->TOK_INT = 0;
  return TOK_INT;
}

/* ---- tokens -------------------------------------------------------------- */

static int type_token(YYSTYPE *value, int code) {
  value->TOK_TYPE_NAME = code;
  return TOK_TYPE_NAME;
}

static int ctor_token(YYSTYPE *value, int code) {
  value->TOK_TYPE_CTOR = code;
  return TOK_TYPE_CTOR;
}

/* One token, skipping whitespace, comments and bad characters. */
static int next_token(FlySyntax *S, YYSTYPE *value) {
  for (;;) {
    S->tok = S->cur;
    /*!re2c
      $ { return TOK_END; }
      [ \t\r\n\f\v]+ { continue; }
      "//" { line_comment(S); continue; }
      "/" "*" { block_comment(S); continue; }

      "kernel" { return TOK_KERNEL; }
      "fn" { return TOK_FN; }
      "launch" { return TOK_LAUNCH; }
      "const" { return TOK_CONST; }
      "let" { return TOK_LET; }
      "if" { return TOK_IF; }
      "else" { return TOK_ELSE; }
      "for" { return TOK_FOR; }
      "while" { return TOK_WHILE; }
      "break" { return TOK_BREAK; }
      "continue" { return TOK_CONTINUE; }
      "in" { return TOK_IN; }
      "carry" { return TOK_CARRY; }
      "yield" { return TOK_YIELD; }
      "return" { return TOK_RETURN; }
      "import" { return TOK_IMPORT; }
      "static_assert" { return TOK_STATIC_ASSERT; }
      "require" { return TOK_REQUIRE; }
      "true" { return TOK_TRUE; }
      "false" { return TOK_FALSE; }
      "as" { return TOK_AS; }

      "i1" { return type_token(value, FLY_TYPE_I1); }
      "i8" { return type_token(value, FLY_TYPE_I8); }
      "i16" { return type_token(value, FLY_TYPE_I16); }
      "i32" { return type_token(value, FLY_TYPE_I32); }
      "i64" { return type_token(value, FLY_TYPE_I64); }
      "index" { return type_token(value, FLY_TYPE_INDEX); }
      "f16" { return type_token(value, FLY_TYPE_F16); }
      "bf16" { return type_token(value, FLY_TYPE_BF16); }
      "f32" { return type_token(value, FLY_TYPE_F32); }
      "f64" { return type_token(value, FLY_TYPE_F64); }
      "f8e4m3" { return type_token(value, FLY_TYPE_F8E4M3); }
      "f8e5m2" { return type_token(value, FLY_TYPE_F8E5M2); }
      "f8e4m3fnuz" { return type_token(value, FLY_TYPE_F8E4M3FNUZ); }
      "f8e5m2fnuz" { return type_token(value, FLY_TYPE_F8E5M2FNUZ); }
      "vec" { return ctor_token(value, FLY_TYPE_VEC); }
      "tensor" { return ctor_token(value, FLY_TYPE_TENSOR); }
      "smem" { return ctor_token(value, FLY_TYPE_SMEM); }
      "rmem" { return ctor_token(value, FLY_TYPE_RMEM); }

      "_" { return TOK_UNDERSCORE; }
      ident { value->TOK_IDENT.s = (const char *)S->tok;
              value->TOK_IDENT.len = (uint32_t)(S->cur - S->tok);
              return TOK_IDENT; }

      dec { return int_literal(S, value, 10); }
      hexnum { return int_literal(S, value, 16); }
      binnum { return int_literal(S, value, 2); }
      float { return float_literal(S, value); }
      digit word | float word | digit word? "." [a-zA-Z_] word? | dec "."
    | dec [eE] [+-] | dec "." dec [eE] [+-]? {
            return bad_number(S, value); }

      ["] { return string_literal(S, value); }

      "(" { return open_bracket(S, '(', TOK_LPAREN); }
      ")" { return close_bracket(S, '(', TOK_RPAREN); }
      "[" { return open_bracket(S, '[', TOK_LBRACK); }
      "]" { return close_bracket(S, '[', TOK_RBRACK); }
      "{" { return open_bracket(S, '{', TOK_LBRACE); }
      "}" { return close_bracket(S, '{', TOK_RBRACE); }
      "," { return TOK_COMMA; }
      ";" { return TOK_SEMI; }
      ":" { return TOK_COLON; }
      "." { return TOK_DOT; }
      "->" { return TOK_ARROW; }
      "=" { return TOK_ASSIGN; }
      "?" { return TOK_QUESTION; }
      "+" { return TOK_PLUS; }
      "-" { return TOK_MINUS; }
      "*" { return TOK_STAR; }
      "/" { return TOK_SLASH; }
      "%" { return TOK_PERCENT; }
      "&" { return TOK_AMP; }
      "|" { return TOK_PIPE; }
      "^" { return TOK_CARET; }
      "~" { return TOK_TILDE; }
      "!" { return TOK_BANG; }
      "&&" { return TOK_ANDAND; }
      "||" { return TOK_OROR; }
      "==" { return TOK_EQ; }
      "!=" { return TOK_NE; }
      "<<" { return TOK_SHL; }
      "<=" { return TOK_LE; }
      "<" { if (S->last_token == TOK_TYPE_CTOR)
              return open_bracket(S, '<', TOK_LT);
            return TOK_LT; }
      ">" | ">>" | ">=" {
            /* Inside type arguments every '>' closes them, one at a time. */
            if (in_type_arguments(S)) {
              S->cur = S->tok + 1;
              S->closed_angle_at = offset(S, S->tok);
              return close_bracket(S, '<', TOK_GT);
            }
            return S->cur - S->tok == 1 ? TOK_GT : S->tok[1] == '>' ? TOK_SHR : TOK_GE; }

      utf8 { S->quiet_tokens = 2;
             error_at(S, S->tok, S->cur, "character U+%04X is only allowed in strings and "
                                         "comments", decode_utf8(S->tok, S->cur));
             continue; }
      "\x00" { S->quiet_tokens = 2;
               error_at(S, S->tok, S->cur, "NUL byte in the source");
               continue; }
      [\x01-\x1f\x7f] { S->quiet_tokens = 2;
                        error_at(S, S->tok, S->cur, "stray control character 0x%02X",
                                 *S->tok);
                        continue; }
      "'" [^'\n\x00]* "'" | "'" {
            S->quiet_tokens = 2;
            error_at(S, S->tok, S->cur, "single quotes are not used in Fly: strings use double "
                                        "quotes");
            continue; }
      [\x21-\x7e] { S->quiet_tokens = 2;
                    error_at(S, S->tok, S->cur, "stray '%c'", *S->tok);
                    continue; }
      * { S->quiet_tokens = 2;
          error_at(S, S->tok, S->cur, "invalid UTF-8 byte 0x%02X", *S->tok);
          continue; }
    */
  }
}

static bool is_opener(int token) {
  return token == TOK_LPAREN || token == TOK_LBRACK || token == TOK_LBRACE;
}

static bool is_closer(int token) {
  return token == TOK_RPAREN || token == TOK_RBRACK || token == TOK_RBRACE;
}

/* While the parser discards tokens after a syntax error, a bracketed group
   is skipped whole (its lexical errors are still reported): a '}' inside
   it must not end the enclosing block. A brace group at the top level ends
   with its '}', which is where a broken declaration ends. */
static int skip_group(FlySyntax *S, YYSTYPE *value, int opener) {
  bool top_level_brace = opener == TOK_LBRACE && S->nbrackets == 1;
  int depth = 1, token;
  do {
    token = next_token(S, value);
    depth += is_opener(token) - is_closer(token);
  } while (depth > 0 && token != TOK_END && !S->fatal);
  if (token == TOK_END || S->fatal || top_level_brace)
    return token;
  return -1; /* the group is gone: lex on */
}

int fly_lex(YYSTYPE *value, FlyLoc *loc, FlySyntax *S, bool recovering) {
  fly_syntax_report_limit(S);
  if (S->start_expr) {
    S->start_expr = false;
    loc->begin = loc->end = 0;
    return TOK_START_EXPR;
  }
  if (S->quiet_tokens > 0)
    S->quiet_tokens--;
  int token = -1;
  while (token < 0) {
    token = S->fatal ? TOK_END : next_token(S, value);
    if (recovering && is_opener(token))
      token = skip_group(S, value, token);
  }
  if (S->fatal)
    token = TOK_END;
  if (token == TOK_END)
    S->tok = S->cur = S->lim;
  loc->begin = offset(S, S->tok);
  loc->end = offset(S, S->cur);
  S->prev_end = S->last_end;
  S->last_end = loc->end;
  S->launch_pending = S->launch_name; /* the token before this one named a launch */
  S->launch_name = S->last_token == TOK_LAUNCH && token == TOK_IDENT;
  S->last_token = token;
  return token;
}
