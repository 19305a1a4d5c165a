#!/usr/bin/env node
// usage: check-package.js EXTENSION_DIR OUT_DIR
//
// The extension packages offline: `vsce package` (the pinned @vscode/vsce of
// EXTENSION_DIR/node_modules) writes OUT_DIR/fly-VERSION.vsix with every
// network connection refused, and the .vsix holds the manifest, the grammar
// and the language configuration exactly as they are in the source tree, and
// none of the development files (node_modules, the lock file).
'use strict';

const childProcess = require('child_process');
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

// Files the .vsix must hold, under extension/ unless they are the package's
// own; those marked `same` must be byte for byte the source file.
const EXPECTED = [
  { name: 'extension.vsixmanifest' },
  { name: '[Content_Types].xml' },
  { name: 'extension/package.json' },
  { name: 'extension/syntaxes/fly.tmLanguage.json', same: 'syntaxes/fly.tmLanguage.json' },
  { name: 'extension/language-configuration.json', same: 'language-configuration.json' },
  { name: 'extension/extension.js', same: 'extension.js' },
  { name: 'extension/folding.js', same: 'folding.js' },
  { name: 'extension/README.md', same: 'README.md' },
];
const FORBIDDEN = [/^extension\/node_modules\//, /^extension\/package-lock\.json$/, /\.vsix$/];

// The entries of a zip archive: name -> contents, read from its central
// directory (a .vsix is a plain zip; no zip tool is needed).
function readZip(file) {
  const zip = fs.readFileSync(file);
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) {
    throw new Error(`${file} is not a zip archive`);
  }
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  const entries = new Map();
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) {
      throw new Error(`${file}: bad central directory entry ${i}`);
    }
    const method = zip.readUInt16LE(at + 10);
    const size = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    const dataAt = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(dataAt, dataAt + size);
    entries.set(name, { method, data });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

function contents({ method, data }) {
  return method === 8 ? zlib.inflateRawSync(data) : data;
}

function main() {
  const [extArg, outArg] = process.argv.slice(2);
  if (!extArg || !outArg) {
    console.error('usage: check-package.js EXTENSION_DIR OUT_DIR');
    return 2;
  }
  const ext = path.resolve(extArg);
  const out = path.resolve(outArg);
  const manifest = JSON.parse(fs.readFileSync(path.join(ext, 'package.json'), 'utf8'));
  const vsix = path.join(out, `${manifest.name}-${manifest.version}.vsix`);
  fs.mkdirSync(out, { recursive: true });
  fs.rmSync(vsix, { force: true });

  // The options say what the package lacks on purpose: a repository URL and
  // a licence file (Fly has neither yet), and dependencies (it has none).
  const vsce = path.join(ext, 'node_modules', '@vscode', 'vsce', 'vsce');
  const args = ['package', '--no-dependencies', '--allow-missing-repository', '--skip-license',
    '--no-rewrite-relative-links', '--out', vsix];
  const result = childProcess.spawnSync(process.execPath, [vsce, ...args], {
    cwd: ext,
    encoding: 'utf8',
    env: {
      ...process.env,
      NODE_OPTIONS: `--require=${path.join(__dirname, 'no-network.js')}`,
      npm_config_offline: 'true',
    },
  });
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  if (result.status !== 0 || !fs.existsSync(vsix)) {
    console.log(`vsce package failed (exit ${result.status}) or wrote no ${vsix}`);
    return 1;
  }

  const entries = readZip(vsix);
  const problems = [];
  for (const { name, same } of EXPECTED) {
    if (!entries.has(name)) {
      problems.push(`the .vsix lacks ${name}`);
    } else if (same && !contents(entries.get(name)).equals(fs.readFileSync(path.join(ext, same)))) {
      problems.push(`${name} in the .vsix differs from ${same}`);
    }
  }
  for (const name of entries.keys()) {
    if (FORBIDDEN.some((re) => re.test(name))) {
      problems.push(`the .vsix holds ${name}, a development file`);
    }
  }
  const packaged = JSON.parse(contents(entries.get('extension/package.json')));
  const language = packaged.contributes.languages.find((l) => l.id === 'fly');
  if (!language || !language.extensions.includes('.fly')) {
    problems.push("the packaged package.json does not give .fly files the language 'fly'");
  }

  problems.forEach((p) => console.log(p));
  console.log(
    `${path.basename(vsix)}: ${entries.size} files, ${fs.statSync(vsix).size} bytes, ` +
      `${problems.length} problem(s)`,
  );
  return problems.length ? 1 : 0;
}

process.exit(main());
