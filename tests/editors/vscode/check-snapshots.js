#!/usr/bin/env node
// usage: check-snapshots.js [--update] [--work DIR]
//
// Snapshot tests of the VS Code grammar on the real code of the repository:
// every .fly file under examples/ and kernels/ has a snapshot of its tokens
// and scopes, tests/editors/vscode/snapshots/<path>.fly.snap, as written by
// vscode-tmgrammar-snap. Fails when a file has no snapshot, when a snapshot
// has no file, and when the tokens differ from the snapshot (with the diff).
//
// The tool writes a .snap beside the file it reads, so the files and their
// snapshots are copied to the work directory DIR (the build tree under
// ctest; a temporary directory by default) and the tool runs there: the
// source tree is never written, except by --update.
//
// --update (after a grammar change, or for a new example) runs
// `vscode-tmgrammar-snap --updateSnapshot` and copies the new snapshots back
// into the source tree, removing those whose file is gone. Review them with
// `git diff tests/editors/vscode/snapshots` before committing.
'use strict';

const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const ROOT = path.resolve(__dirname, '..', '..', '..');
const EXTENSION = path.join(ROOT, 'editors', 'vscode');
const SNAPSHOTS = path.join(__dirname, 'snapshots');
const SOURCES = ['examples', 'kernels'];

// Paths relative to `dir` of the files under it whose name ends with `ext`.
function filesUnder(dir, ext, base = dir) {
  if (!fs.existsSync(dir)) {
    return [];
  }
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) {
        return filesUnder(full, ext, base);
      }
      return e.isFile() && e.name.endsWith(ext) ? [path.relative(base, full)] : [];
    })
    .sort();
}

function parseArgs(argv) {
  const args = { update: false, work: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--update') {
      args.update = true;
    } else if (argv[i] === '--work' && i + 1 < argv.length) {
      args.work = path.resolve(argv[++i]);
    } else {
      throw new Error(`usage: check-snapshots.js [--update] [--work DIR] (got '${argv[i]}')`);
    }
  }
  return args;
}

function runSnap(work, files, update) {
  const snap = path.join(EXTENSION, 'node_modules', 'vscode-tmgrammar-test', 'dist', 'snapshot.js');
  const args = [snap, '--config', path.join(EXTENSION, 'package.json')];
  if (update) {
    args.push('--updateSnapshot');
  }
  const result = childProcess.spawnSync(process.execPath, [...args, ...files], {
    cwd: work,
    encoding: 'utf8',
  });
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  return result.status === 0;
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const sources = SOURCES.flatMap((dir) =>
    filesUnder(path.join(ROOT, dir), '.fly').map((f) => path.join(dir, f)),
  );
  const snapshots = filesUnder(SNAPSHOTS, '.fly.snap');
  if (sources.length === 0) {
    console.log(`no .fly files under ${SOURCES.join(' or ')}: the search is broken`);
    return 1;
  }

  const problems = [];
  const missing = sources.filter((f) => !snapshots.includes(f + '.snap'));
  const stale = snapshots.filter((s) => !sources.includes(s.slice(0, -'.snap'.length)));
  if (!args.update) {
    missing.forEach((f) => problems.push(`${f} has no snapshot`));
    stale.forEach((s) => problems.push(`snapshots/${s} is the snapshot of a file that is gone`));
  }

  const temporary = !args.work;
  const work = args.work || fs.mkdtempSync(path.join(os.tmpdir(), 'fly-snapshots-'));
  SOURCES.forEach((dir) => fs.rmSync(path.join(work, dir), { recursive: true, force: true }));
  for (const f of sources) {
    fs.mkdirSync(path.dirname(path.join(work, f)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, f), path.join(work, f));
    if (!missing.includes(f)) {
      fs.copyFileSync(path.join(SNAPSHOTS, f + '.snap'), path.join(work, f + '.snap'));
    }
  }

  // Without --update, a file without a snapshot is not given to the tool,
  // which would write one and pass.
  const checked = args.update ? sources : sources.filter((f) => !missing.includes(f));
  if (checked.length > 0 && !runSnap(work, checked, args.update)) {
    problems.push('the tokens differ from the snapshots (diff above)');
  }

  if (args.update) {
    for (const f of sources) {
      fs.mkdirSync(path.dirname(path.join(SNAPSHOTS, f)), { recursive: true });
      fs.copyFileSync(path.join(work, f + '.snap'), path.join(SNAPSHOTS, f + '.snap'));
    }
    stale.forEach((s) => fs.rmSync(path.join(SNAPSHOTS, s)));
    console.log(
      `updated ${sources.length} snapshot(s) in ${path.relative(ROOT, SNAPSHOTS)}` +
        (stale.length ? `, removed ${stale.length}` : ''),
    );
  }
  if (temporary) {
    fs.rmSync(work, { recursive: true, force: true });
  }

  problems.forEach((p) => console.log(p));
  if (problems.length) {
    console.log(
      'If the change is intended, regenerate them with ' +
        '`node tests/editors/vscode/check-snapshots.js --update` and review the diff.',
    );
  }
  console.log(`${checked.length} of ${sources.length} .fly file(s) checked, ${problems.length} problem(s)`);
  return problems.length ? 1 : 0;
}

try {
  process.exit(main());
} catch (err) {
  console.error(err.message);
  process.exit(1);
}
