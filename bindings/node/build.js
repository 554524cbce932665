// SPDX-License-Identifier: MIT
'use strict';
// build.js -- compile the SQLite extension idem (ext/idem.c) for this package.
//
//   node build.js            (npm runs it at install) build idem.so
//   node build.js --bundle   (npm pack runs it) copy the C sources into src/
//
// The sources are looked for in IDEM_SOURCE, then two directories up (a
// clone of the idem repository), then in src/ (a packed copy).  In a clone the
// library goes to the clone's build/node/idem.so, with make's outputs;
// elsewhere to build/idem.so beside this file.  It needs a C compiler ($CC,
// default cc) and the headers of libsqlite3-dev and libxxhash-dev.
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const here = __dirname;
const repo = path.resolve(here, '..', '..');
const inRepo = fs.existsSync(path.join(repo, 'ext', 'idem.c')) &&
  fs.existsSync(path.join(repo, 'bindings', 'node', 'build.js'));

function sourceRoot() {
  for (const root of [process.env.IDEM_SOURCE, inRepo ? repo : null, path.join(here, 'src')]) {
    if (root && fs.existsSync(path.join(root, 'ext', 'idem.c'))) return root;
  }
  console.error('sqlite-idem: the C sources were not found (ext/idem.c in ' +
    'IDEM_SOURCE, two directories up in a clone of idem, or in src/ of a ' +
    'packed copy).  Install the folder bindings/node of a clone as npm does ' +
    'by default (a link; not with --install-links), or install the tarball ' +
    'that `npm pack` makes there (it carries the sources)');
  process.exit(1);
}

function bundle() {
  if (!inRepo) return;                  // already packed: src/ is there
  for (const dir of ['ext', 'include']) {
    const to = path.join(here, 'src', dir);
    fs.mkdirSync(to, { recursive: true });
    for (const f of fs.readdirSync(path.join(repo, dir))) {
      if (/\.[ch]$/.test(f)) fs.copyFileSync(path.join(repo, dir, f), path.join(to, f));
    }
  }
  console.log('sqlite-idem: copied ext/ and include/ into src/');
}

function build() {
  const root = sourceRoot();
  const out = inRepo && root === repo
    ? path.join(repo, 'build', 'node', 'idem.so')
    : path.join(here, 'build', 'idem.so');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const cc = process.env.CC || 'cc';
  const args = ['-O2', '-Wall', '-Wextra', '-fPIC', '-shared', '-fvisibility=hidden',
    '-o', out, path.join(root, 'ext', 'idem.c')];
  console.log(`sqlite-idem: compiling the SQLite extension (${cc} ... ${path.join(root, 'ext', 'idem.c')}), a few seconds`);
  const r = spawnSync(cc, args, { stdio: 'inherit' });
  if (r.error || r.status !== 0) {
    console.error(`sqlite-idem: ${cc} failed${r.error ? ': ' + r.error.message : ''}.` +
      ' It needs a C compiler and the headers of SQLite and xxHash;' +
      ' on Debian: sudo apt-get install -y gcc libsqlite3-dev libxxhash-dev');
    process.exit(1);
  }
  console.log(`sqlite-idem: built ${out}`);
}

if (process.argv.includes('--bundle')) bundle(); else build();
