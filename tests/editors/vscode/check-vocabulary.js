#!/usr/bin/env node
// usage: check-vocabulary.js FLYC EXTENSION_DIR
//
// The VS Code grammar against the words the compiler knows. `FLYC vocabulary
// --json` is read now, not copied, and each word is tokenized by the engine
// VS Code uses (vscode-textmate with vscode-oniguruma, from
// EXTENSION_DIR/node_modules) in the places Fly code puts it: a keyword where
// the grammar of docs/language.md has it, a type in an annotation, after `as`
// and as an argument, a builtin function where it is called, and so on.
//
// Fails, naming the word and the context, when
//   - a word is not one token whose scope is its kind's (KINDS below),
//   - a made-up word, or a known word with a suffix (`sizex9`), gets that
//     scope in the same context: then the context could not tell a word the
//     grammar misses from one it knows,
//   - the grammar lists a word (a `\b(a|b|c)\b` alternation) that flyc does
//     not know: a word renamed or removed in the compiler,
//   - flyc reports a kind this script has no scope for.
'use strict';

const childProcess = require('child_process');
const fs = require('fs');
const path = require('path');

// The scope each kind of word must get (the innermost scope of its token),
// and where the word is put to check it: `@` stands for the word. Keywords
// have contexts of their own; a keyword without one is checked at the start
// of a statement.
const KINDS = {
  keyword: {
    scope: /^keyword\.(control|other)\./,
    contexts: ['fn f(x) { @ x; }', '@ x;'],
    own: {
      kernel: ['@ k(X: tensor<f32>) {}'],
      fn: ['@ f(x) -> i32 { x }'],
      launch: ['@ k { grid = 1; block = 32; }'],
      const: [
        '@ N = 4;',
        '@ N: int = 4;',
        '@ { let a = 1; }',
        'kernel k(X: tensor<f32>, @ N: int = 4) {}',
        'fn f() { if @ N > 1 { 1 } else { 2 } }',
      ],
      let: ['fn f() { @ x = 1; }', 'fn f(t) { @ (a, _): (i32, i32) = t; }'],
      if: ['fn f(c) { @ c { 1 } else { 2 } }', 'fn f(c) { let v = (@ c { 1 } else { 2 }); }'],
      else: ['fn f(c) { if c { 1 } @ { 2 } }', 'fn f(c) { if c { 1 } @ if !c { 2 } }'],
      for: ['fn f(n) { @ i in range(0, n) carry (acc = 0) { yield acc + i; } }'],
      in: ['fn f(n) { for i @ range(0, n) carry (acc = 0) { yield acc + i; } }'],
      carry: ['fn f(n) { for i in range(0, n) @ (acc = 0) { yield acc + i; } }'],
      yield: ['fn f(n) { for i in range(0, n) carry (acc = 0) { @ acc + i; } }'],
      while: ['fn f(n) { @ i < n carry (i = 0) { yield i + 1; } }'],
      break: ['fn f(n) { for i in range(0, n) { if i > 2 { @; } } }'],
      continue: ['fn f(n) { while i < n carry (i = 0) { if i < 2 { @; } yield i + 1; } }'],
      return: ['fn f(x) { @ x; }', 'kernel k(X: tensor<f32>) { if X[0].load() > 0.0 { @; } }'],
      import: ['@ std.math;', '@ "lib/tiles.fly";'],
      static_assert: ['@(N > 0);', 'fn f() { @(N > 0, "N must be positive"); }'],
      as: ['fn f(x) { x @ f32 }', 'fn f(x) { (x @ vec<4, f16>, 1 @ i8) }'],
    },
  },
  constant: {
    scope: /^constant\.language\./,
    contexts: ['const B = @;', 'fn f(x) { g(@, x) }', 'kernel k(const C: bool = @) {}'],
  },
  type: {
    scope: /^(support|storage)\.type\./,
    contexts: [
      'fn f(x: @) -> @ { x as @ }',
      'fn f() { let v: @ = 0; }',
      'kernel k(X: tensor<f32>, const T: type = @) {}',
      'fn f() { copy_atom(universal(32), @) }',
      'fn f() { let v: vec<4, @> = 0; }',
      'fn f(p: (@, (i32, @))) {}',
    ],
  },
  'type-constructor': {
    scope: /^(support|storage)\.type\./,
    contexts: [
      'fn f() { let v = @<4, f32>(0.0); }',
      'fn f(x: @<f32>) {}',
      'kernel k(X: @<f16, (?, ?):(?, 1), align = 16>) {}',
      'fn f() { let v: vec<4, @<2, f16>> = 0; }',
    ],
  },
  'builtin-value': {
    scope: /^(support\.variable|support\.constant|variable\.language)\./,
    contexts: ['fn f() { let v = @.x; }', 'fn f() { g(@) }', 'fn f() { let w = 1 + @ * 2; }'],
  },
  'builtin-function': {
    scope: /^support\.function\./,
    contexts: ['fn f(x, y) { let v = @(x, y); }', 'fn f(x, y) { x.@(y) }', 'fn f(x) { @(x); }'],
  },
};

const PROBE = 'flyvocabularyprobe';

function loadEngine(extDir) {
  const modules = path.join(extDir, 'node_modules');
  const textmate = require(path.join(modules, 'vscode-textmate'));
  const oniguruma = require(path.join(modules, 'vscode-oniguruma'));
  const wasm = fs.readFileSync(path.join(modules, 'vscode-oniguruma', 'release', 'onig.wasm'));
  return { textmate, oniguruma, wasm };
}

// The grammar the extension contributes for language `fly`, as shipped.
function grammarPath(extDir) {
  const manifest = JSON.parse(fs.readFileSync(path.join(extDir, 'package.json'), 'utf8'));
  const entry = manifest.contributes.grammars.find((g) => g.language === 'fly');
  return { file: path.join(extDir, entry.path), scopeName: entry.scopeName };
}

async function loadGrammar(extDir) {
  const { textmate, oniguruma, wasm } = loadEngine(extDir);
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const { file, scopeName } = grammarPath(extDir);
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (name) =>
      name === scopeName ? textmate.parseRawGrammar(fs.readFileSync(file, 'utf8'), file) : null,
  });
  const grammar = await registry.loadGrammar(scopeName);
  return { grammar, initial: textmate.INITIAL, file };
}

// Every place of `word` in `line`, each with the scopes of the token there
// and whether the word is exactly that token.
function scopesOf(grammar, initial, template, word) {
  const line = template.split('@').join(word);
  const { tokens } = grammar.tokenizeLine(line, initial);
  const results = [];
  let at = 0;
  for (const piece of template.split('@').slice(0, -1)) {
    at += piece.length;
    const token = tokens.find((t) => t.startIndex <= at && at < t.endIndex);
    const whole = token.startIndex === at && token.endIndex === at + word.length;
    results.push({ line, scopes: token.scopes, whole });
    at += word.length;
  }
  return results;
}

function innermost(scopes) {
  return scopes[scopes.length - 1];
}

function describe({ scopes, whole }) {
  return whole ? innermost(scopes) : `${innermost(scopes)} (on a token that is more than the word)`;
}

// Words of the grammar's word alternations: \b(a|b|c)\b, \b(fn)\s+...
function grammarWords(grammarFile) {
  const words = new Set();
  const visit = (node) => {
    if (Array.isArray(node)) {
      node.forEach(visit);
    } else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if ((key === 'match' || key === 'begin') && typeof value === 'string') {
          for (const m of value.matchAll(/\((?:\?:)?([A-Za-z_]\w*(?:\|[A-Za-z_]\w*)*)\)/g)) {
            m[1].split('|').forEach((w) => words.add(w));
          }
        } else {
          visit(value);
        }
      }
    }
  };
  visit(JSON.parse(fs.readFileSync(grammarFile, 'utf8')));
  return words;
}

async function main() {
  const [flyc, extArg] = process.argv.slice(2);
  const extDir = extArg && path.resolve(extArg);
  if (!flyc || !extDir) {
    console.error('usage: check-vocabulary.js FLYC EXTENSION_DIR');
    return 2;
  }
  const vocabulary = JSON.parse(
    childProcess.execFileSync(flyc, ['vocabulary', '--json'], { encoding: 'utf8' }),
  );
  const { grammar, initial, file } = await loadGrammar(extDir);
  const problems = [];
  let checks = 0;

  for (const [kind, words] of Object.entries(vocabulary)) {
    const spec = KINDS[kind];
    if (!spec) {
      problems.push(`flyc reports the kind '${kind}', which check-vocabulary.js has no scope for`);
      continue;
    }
    for (const word of words) {
      const contexts = (spec.own && spec.own[word]) || spec.contexts;
      for (const template of contexts) {
        for (const place of scopesOf(grammar, initial, template, word)) {
          checks++;
          if (!place.whole || !spec.scope.test(innermost(place.scopes))) {
            problems.push(
              `${kind} '${word}' in \`${place.line}\`: got ${describe(place)}, expected ${spec.scope.source}`,
            );
          }
        }
        // The same context must not give the scope to what is not the word.
        for (const other of [PROBE, word + 'x9']) {
          for (const place of scopesOf(grammar, initial, template, other)) {
            if (spec.scope.test(innermost(place.scopes))) {
              problems.push(
                `the context \`${place.line}\` gives '${other}' the ${kind} scope ${innermost(place.scopes)}: it cannot tell a known word from an unknown one`,
              );
            }
          }
        }
      }
    }
  }

  const known = new Set(Object.values(vocabulary).flat());
  for (const word of grammarWords(file)) {
    if (!known.has(word)) {
      problems.push(`the grammar lists '${word}', which flyc vocabulary does not know`);
    }
  }

  for (const p of problems) {
    console.log(p);
  }
  console.log(
    `${known.size} words of ${Object.keys(vocabulary).length} kinds, ${checks} placements checked, ${problems.length} problem(s)`,
  );
  return problems.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
