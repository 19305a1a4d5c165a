#!/usr/bin/env node
// usage: check-language-configuration.js EXTENSION_DIR
//
// The editing settings of editors/vscode/language-configuration.json, read as
// VS Code reads them (its patterns are JavaScript regular expressions):
// comments, brackets (with '<' '>' only where the grammar says type
// arguments), auto-closing pairs, folding markers and indentation rules on
// lines of real Fly code.
'use strict';

const fs = require('fs');
const path = require('path');

function main() {
  const ext = path.resolve(process.argv[2] || '');
  const config = JSON.parse(fs.readFileSync(path.join(ext, 'language-configuration.json'), 'utf8'));
  const manifest = JSON.parse(fs.readFileSync(path.join(ext, 'package.json'), 'utf8'));
  const problems = [];
  let checks = 0;
  const expect = (ok, message) => {
    checks++;
    if (!ok) {
      problems.push(message);
    }
  };
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

  // The language and its files.
  const language = manifest.contributes.languages.find((l) => l.id === 'fly');
  expect(language && same(language.extensions, ['.fly']), "package.json: language 'fly' for .fly files");
  expect(
    language && path.resolve(ext, language.configuration) === path.join(ext, 'language-configuration.json'),
    'package.json: the language uses language-configuration.json',
  );

  // Comments, as the lexer has them.
  expect(config.comments.lineComment === '//', 'line comment is //');
  expect(same(config.comments.blockComment, ['/*', '*/']), 'block comment is /* */');

  // Brackets, and '<' '>' outside type arguments are not brackets.
  const pairs = config.brackets.map((b) => b.join(''));
  for (const b of ['()', '[]', '{}', '<>']) {
    expect(pairs.includes(b), `brackets include ${b}`);
  }
  const grammar = manifest.contributes.grammars.find((g) => g.language === 'fly');
  const unbalanced = grammar.unbalancedBracketScopes || [];
  for (const scope of ['keyword.operator.comparison.fly', 'keyword.operator.bitwise.shift.fly',
    'keyword.operator.arrow.fly']) {
    expect(unbalanced.includes(scope), `unbalancedBracketScopes include ${scope}`);
  }

  // Auto-closing: brackets everywhere, quotes not inside strings or comments,
  // and no '<', which mostly starts a comparison.
  const closing = new Map(config.autoClosingPairs.map((p) => [p.open, p]));
  for (const [open, close] of [['(', ')'], ['[', ']'], ['{', '}'], ['"', '"']]) {
    expect(closing.has(open) && closing.get(open).close === close, `auto-closes ${open}${close}`);
  }
  const quote = closing.get('"');
  expect(
    quote && same([...(quote.notIn || [])].sort(), ['comment', 'string']),
    'a quote is not auto-closed inside strings and comments',
  );
  expect(!closing.has('<'), "'<' is not auto-closed");
  expect(config.surroundingPairs.some((p) => same(p, ['"', '"'])), 'a selection can be quoted');

  // Folding markers.
  const start = new RegExp(config.folding.markers.start);
  const end = new RegExp(config.folding.markers.end);
  for (const line of ['// region', '    // region loads', '//#region']) {
    expect(start.test(line) && !end.test(line), `'${line}' starts a folding region`);
  }
  for (const line of ['// endregion', '    //#endregion loads']) {
    expect(end.test(line) && !start.test(line), `'${line}' ends a folding region`);
  }
  for (const line of ['// regional tiles', 'let region = 1; // region']) {
    expect(!start.test(line), `'${line}' starts no folding region`);
  }

  // Indentation.
  const increase = new RegExp(config.indentationRules.increaseIndentPattern);
  const decrease = new RegExp(config.indentationRules.decreaseIndentPattern);
  const grows = [
    'kernel vector_add(A: tensor<f32>) {',
    'launch vector_add {',
    '    for k in range(0, K / BK) carry (acc = zeros_like(rC)) {',
    '    } else {',
    '    let atom = if const target.vendor == "nvidia" {   // the matrix instruction',
    '    let t = make_layout(',
    '    let xs = [',
    'const {',
  ];
  const stays = [
    '    let tile = BLOCK * VEC;',
    '    copy(atom, rC, logical_divide(gC, VEC:1)[_, thread_idx.x]);',
    '// a comment that ends with {',
    '    let s = "{";',
    '}',
  ];
  for (const line of grows) {
    expect(increase.test(line), `indentation grows after '${line}'`);
  }
  for (const line of stays) {
    expect(!increase.test(line), `indentation does not grow after '${line}'`);
  }
  for (const line of ['}', '    } else {', ')', '  ];', '} // end']) {
    expect(decrease.test(line), `indentation shrinks on '${line}'`);
  }
  for (const line of ['    let x = f(a)', 'kernel k() {}']) {
    expect(!decrease.test(line), `indentation does not shrink on '${line}'`);
  }

  problems.forEach((p) => console.log(`not so: ${p}`));
  console.log(`${checks} checks, ${problems.length} problem(s)`);
  return problems.length ? 1 : 0;
}

process.exit(main());
