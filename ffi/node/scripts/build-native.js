#!/usr/bin/env node
'use strict';
// Makes ffi/node installable from its folder: builds the replystream shared library with
// cargo (release), copies it into the package's native/ folder (where the package finds it
// first), and installs the package's own dependency (koffi) into ffi/node/node_modules from
// the lockfile when it is missing, which `npm install ./ffi/node` (a link) needs. Run from
// a clone of the repository (`node ffi/node/scripts/build-native.js`, or `npm run
// build-native` in ffi/node; `npm pack` runs it too). With REPLYSTREAM_SKIP_CARGO=1 it only
// copies an existing build (CI builds it once for every package). Environment: CARGO
// (default cargo), CARGO_TARGET_DIR, NPM (default npm).

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { libraryFileName } = require('../lib/native-file');

const packageDir = path.resolve(__dirname, '..');
const root = path.resolve(packageDir, '..', '..');
if (!fs.existsSync(path.join(root, 'ffi', 'Cargo.toml'))) {
  console.error(
    `build-native: ${root} is not a replystream repository; the library is built from a clone ` +
      '(or set REPLYSTREAM_LIB to a built library at run time)',
  );
  process.exit(1);
}

if (process.env.REPLYSTREAM_SKIP_CARGO !== '1') {
  const cargo = process.env.CARGO || 'cargo';
  const command = ['build', '--release', '-p', 'replystream-ffi', '--manifest-path',
    path.join(root, 'Cargo.toml')];
  console.error(`build-native: ${cargo} ${command.join(' ')}`);
  execFileSync(cargo, command, { stdio: 'inherit' });
}

const target = process.env.CARGO_TARGET_DIR
  ? path.resolve(root, process.env.CARGO_TARGET_DIR)
  : path.join(root, 'target');
const built = path.join(target, 'release', libraryFileName());
if (!fs.existsSync(built)) {
  console.error(`build-native: ${built} is missing; run cargo build -p replystream-ffi --release`);
  process.exit(1);
}
const destination = path.join(packageDir, 'native', libraryFileName());
fs.mkdirSync(path.dirname(destination), { recursive: true });
fs.copyFileSync(built, destination);
// The release profile keeps debug info for profiling; the packaged copy does not need it.
if (process.platform === 'linux') {
  try {
    execFileSync('strip', ['--strip-debug', destination], { stdio: 'ignore' });
  } catch {
    // No strip: the library works the same, only larger.
  }
}
console.error(`build-native: ${destination}`);

if (!fs.existsSync(path.join(packageDir, 'node_modules', 'koffi', 'package.json'))) {
  const npm = process.env.NPM || (process.platform === 'win32' ? 'npm.cmd' : 'npm');
  console.error('build-native: npm ci --omit=dev (koffi, from package-lock.json)');
  execFileSync(npm, ['ci', '--omit=dev', '--no-audit', '--no-fund'], { cwd: packageDir, stdio: 'inherit' });
}
