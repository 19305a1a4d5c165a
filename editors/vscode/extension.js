// The Fly extension's only code: folding on brackets, block comments and
// `// region` markers (folding.js). Highlighting, comments, brackets and
// indentation are declarative (package.json, language-configuration.json and
// syntaxes/fly.tmLanguage.json).
'use strict';

const vscode = require('vscode');
const { foldingRanges } = require('./folding');

const KINDS = {
  comment: vscode.FoldingRangeKind.Comment,
  region: vscode.FoldingRangeKind.Region,
};

function activate(context) {
  const provider = {
    provideFoldingRanges(document) {
      return foldingRanges(document.getText()).map(
        (r) => new vscode.FoldingRange(r.start, r.end, KINDS[r.kind]),
      );
    },
  };
  context.subscriptions.push(
    vscode.languages.registerFoldingRangeProvider({ language: 'fly' }, provider),
  );
}

function deactivate() {}

module.exports = { activate, deactivate };
