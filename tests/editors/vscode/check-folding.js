#!/usr/bin/env node
// usage: check-folding.js EXTENSION_DIR
//
// The folding ranges the extension gives VS Code (editors/vscode/folding.js):
// multi-line brackets, block comments and `// region` markers, with brackets
// inside strings and comments ignored. Each case is a piece of Fly and the
// ranges expected, as "start-end" lines counted from 0.
'use strict';

const fs = require('fs');
const path = require('path');

const CASES = [
  {
    what: 'a kernel body and a launch block',
    text: [
      'kernel k(X: tensor<f32>) {', //      0
      '    let i = thread_idx.x;', //       1
      '    X[i].store(0.0);', //            2
      '}', //                               3
      'launch k {', //                      4
      '    grid = 1;', //                   5
      '    block = 32;', //                 6
      '}', //                               7
    ],
    ranges: ['0-2', '4-6'],
  },
  {
    what: 'parameters over several lines, nested blocks, if/else',
    text: [
      'kernel k(A: tensor<f32>,', //        0
      '         B: tensor<f32>,', //        1
      '         const N: int = 4) {', //    2
      '    if thread_idx.x < N {', //       3
      '        barrier();', //              4
      '    } else {', //                    5
      '        return;', //                 6
      '    }', //                           7
      '}', //                               8
    ],
    ranges: ['0-1', '2-7', '3-4', '5-6'],
  },
  {
    what: 'block comments, nested, and brackets inside comments and strings',
    text: [
      '/* a comment {', //                  0
      '   /* nested ( */', //               1
      '   still the comment [ */', //       2
      'fn f() {', //                        3
      '    // not a bracket: {', //         4
      '    printf("{ ( [\\" {");', //       5
      '    1', //                           6
      '}', //                               7
    ],
    ranges: ['0-2', '3-6'],
  },
  {
    what: 'region markers',
    text: [
      '// region tiles', //                 0
      'const A = 1;', //                    1
      '  //#region inner', //               2
      'const B = 2;', //                    3
      '  // endregion', //                  4
      '// endregion', //                    5
      'const C = 3; // region: not a marker after code', // 6
    ],
    ranges: ['0-5', '2-4'],
  },
  {
    what: 'unbalanced and one-line brackets give no range',
    text: [
      'fn f(x) { x }', //                   0
      'fn g(x) {', //                       1
      '    (x', //                          2
      ']', //                               3
      'const S = "unterminated {', //       4
      'const T = 1;', //                    5
    ],
    ranges: [],
  },
  {
    what: 'a tuple layout over several lines',
    text: [
      'const L = (', //                     0
      '    (8, 16):(1, 8)', //              1
      ');', //                              2
    ],
    ranges: ['0-1'],
  },
];

function main() {
  const ext = path.resolve(process.argv[2] || '');
  const { foldingRanges } = require(path.join(ext, 'folding.js'));
  const problems = [];
  for (const c of CASES) {
    const got = foldingRanges(c.text.join('\n'))
      .map((r) => `${r.start}-${r.end}`)
      .sort();
    const want = [...c.ranges].sort();
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      problems.push(`${c.what}: got [${got.join(', ')}], expected [${want.join(', ')}]`);
    }
  }

  // Region ranges have their kind, comment ranges theirs.
  const kinds = foldingRanges('// region\n/*\n*/\n// endregion\n').map((r) => r.kind).sort();
  if (JSON.stringify(kinds) !== JSON.stringify(['comment', 'region'])) {
    problems.push(`kinds: got [${kinds.join(', ')}], expected [comment, region]`);
  }

  problems.forEach((p) => console.log(p));
  console.log(`${CASES.length + 1} cases, ${problems.length} problem(s)`);
  return problems.length ? 1 : 0;
}

process.exit(main());
