// Folding ranges of a Fly source: brackets that span lines, block comments
// that span lines, and `// region` ... `// endregion` markers.
//
// A language configuration alone only folds by indentation, so extension.js
// hands these ranges to VS Code. The scan follows the lexer
// (grammar/lexer.re): `//` runs to the end of the line, block comments nest,
// and a string ends at its closing quote or at the end of its line, so a
// bracket inside a comment or a string never opens or closes a range.
//
// foldingRanges(text) returns [{start, end, kind}] with 0-based lines; kind is
// 'region', 'comment' or undefined (code). A bracket range ends on the line
// before its closer, so the closing '}' stays visible, as in VS Code's own
// languages. Unbalanced brackets are skipped, not guessed.
'use strict';

const OPENERS = { '(': ')', '[': ']', '{': '}' };
const CLOSERS = { ')': '(', ']': '[', '}': '{' };
const REGION_START = /^\s*\/\/\s*#?region\b/;
const REGION_END = /^\s*\/\/\s*#?endregion\b/;

function foldingRanges(text) {
  const ranges = [];
  const brackets = []; // {ch, line}
  const regions = []; // start lines
  let comment = null; // {line, depth} while inside a block comment
  let line = 0;
  let i = 0;

  const addRange = (start, end, kind) => {
    if (end > start) {
      ranges.push({ start, end, kind });
    }
  };

  // A line comment: it may be a region marker when it starts its line.
  const lineComment = () => {
    const lineStart = text.lastIndexOf('\n', i - 1) + 1;
    let eol = text.indexOf('\n', i);
    if (eol < 0) {
      eol = text.length;
    }
    const whole = text.slice(lineStart, eol);
    if (REGION_START.test(whole)) {
      regions.push(line);
    } else if (REGION_END.test(whole) && regions.length > 0) {
      addRange(regions.pop(), line, 'region');
    }
    i = eol;
  };

  // A string: to its closing quote or the end of its line.
  const string = () => {
    i++;
    while (i < text.length && text[i] !== '"' && text[i] !== '\n') {
      i += text[i] === '\\' && text[i + 1] !== '\n' ? 2 : 1;
    }
    if (text[i] === '"') {
      i++;
    }
  };

  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === '\n') {
      line++;
      i++;
    } else if (comment) {
      if (c === '*' && next === '/') {
        i += 2;
        if (--comment.depth === 0) {
          addRange(comment.line, line, 'comment');
          comment = null;
        }
      } else if (c === '/' && next === '*') {
        comment.depth++;
        i += 2;
      } else {
        i++;
      }
    } else if (c === '/' && next === '/') {
      lineComment();
    } else if (c === '/' && next === '*') {
      comment = { line, depth: 1 };
      i += 2;
    } else if (c === '"') {
      string();
    } else if (OPENERS[c]) {
      brackets.push({ ch: c, line });
      i++;
    } else if (CLOSERS[c]) {
      const top = brackets[brackets.length - 1];
      if (top && top.ch === CLOSERS[c]) {
        brackets.pop();
        addRange(top.line, line - 1, undefined);
      }
      i++;
    } else {
      i++;
    }
  }
  return ranges.sort((a, b) => a.start - b.start || b.end - a.end);
}

module.exports = { foldingRanges };
