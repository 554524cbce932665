// SPDX-License-Identifier: MIT
// test/diff/gen.js -- random JSON documents and their RFC 8785 canonical
// form according to the npm package "canonicalize", for the differential
// test of idem_canonical() (test/diff/check.tcl compares the two).
//
//   npm install --prefix test/diff --no-package-lock --no-audit --no-fund
//   node test/diff/gen.js [N [OUT [SEED]]]     (100000 build/diff.jsonl 1;
//                                               OUT "-" is stdout)
//
// Each line of OUT is a JSON array [text, canonical]: text is a document of
// about 0.2 to 2 KB, spelled at random (whitespace, escapes of every kind,
// raw UTF-8, many number spellings); canonical is canonicalize(JSON.parse
// (text)).  The output depends on N, SEED and the canonicalize version only.
//
// Left out on purpose, as the reference cannot judge them: integer literals
// beyond 2^53 (doc/contract.md §3 keeps their digits, JSON.parse rounds them),
// duplicate names and lone surrogates (errors for idem, accepted by
// JSON.parse), and numbers beyond the double range.

import { openSync, writeSync, closeSync } from 'node:fs';
import canonicalize from 'canonicalize';

const N = Number(process.argv[2] ?? 100000);
const OUT = process.argv[3] ?? 'build/diff.jsonl';
let seed = Number(process.argv[4] ?? 1) >>> 0;

// mulberry32: small, fast, and the same on every platform.
function rand () {
  seed = (seed + 0x6D2B79F5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
const pick = (a) => a[Math.floor(rand() * a.length)];
const chance = (p) => rand() < p;

// ---- whitespace --------------------------------------------------------
function ws () {
  if (chance(0.6)) return '';
  let s = '';
  for (let i = int(1, 3); i > 0; i--) s += pick([' ', ' ', ' ', '\n', '\t', '\r', '\n  ']);
  return s;
}

// ---- strings -----------------------------------------------------------
// A code point from a mix of ranges, weighted towards ASCII.
function codePoint () {
  const r = rand();
  if (r < 0.55) return int(0x20, 0x7e);
  if (r < 0.60) return int(0x00, 0x1f);
  if (r < 0.63) return pick([0x22, 0x5c, 0x2f, 0x7f]);
  if (r < 0.70) return int(0x80, 0x7ff);
  if (r < 0.78) return int(0x800, 0xd7ff);
  if (r < 0.86) return int(0xe000, 0xffff);
  if (r < 0.88) return pick([0x2028, 0x2029, 0xfeff, 0xfffe, 0xffff, 0xe000]);
  return pick([int(0x10000, 0x1ffff), int(0x10000, 0x10ffff), 0x1f600, 0x10ffff, 0x10000]);
}

function hex4 (u) {
  const h = u.toString(16).padStart(4, '0');
  return '\\u' + (chance(0.5) ? h : h.toUpperCase());
}

const SHORT = { 0x08: '\\b', 0x09: '\\t', 0x0a: '\\n', 0x0c: '\\f', 0x0d: '\\r', 0x22: '\\"', 0x5c: '\\\\', 0x2f: '\\/' };

// The JSON spelling of one code point: raw where allowed, else escaped.
function spell (cp) {
  const mustEscape = cp < 0x20 || cp === 0x22 || cp === 0x5c;
  if (!mustEscape && chance(0.8)) return String.fromCodePoint(cp);
  if (SHORT[cp] !== undefined && chance(0.7)) return SHORT[cp];
  if (cp < 0x10000) return hex4(cp);
  const v = cp - 0x10000;
  return hex4(0xd800 + (v >> 10)) + hex4(0xdc00 + (v & 0x3ff));
}

function randomString (maxLen) {
  const cps = [];
  for (let n = int(0, maxLen); n > 0; n--) cps.push(codePoint());
  return cps;
}

function stringText (cps) {
  return '"' + cps.map(spell).join('') + '"';
}

// Member names: short, often sharing a prefix, so that the sort has to look
// past the first character, also where UTF-8 and UTF-16 order disagree.
const PREFIXES = [[], [0x61], [0x61, 0x62], [0x6b, 0x65, 0x79], [0xe9],
  [0xffff], [0x1f600], [0xe000], [0x10000], [0x20ac], [0x0a], [0x00]];
function randomName () {
  const r = rand();
  if (r < 0.3) return pick(PREFIXES).concat(randomString(3));
  if (r < 0.5) return pick(PREFIXES).concat([pick([0x61, 0xe000, 0xffff, 0x10000, 0x1f600, 0x10ffff, 0x7f, 0x80])]);
  if (r < 0.8) return Array.from(pick(['id', 'name', 'type', 'value', 'items', 'x', 'y', 'created_at', 'tags', '1', '10', '2'])).map(c => c.codePointAt(0)).concat(chance(0.5) ? [] : randomString(2));
  return randomString(8);
}

// ---- numbers -----------------------------------------------------------
function digits (n, nonZeroFirst) {
  let s = nonZeroFirst ? String(int(1, 9)) : String(int(0, 9));
  for (let i = 1; i < n; i++) s += String(int(0, 9));
  return s;
}

const TWO53 = 9007199254740992n;

function numberText () {
  for (;;) {
    const sign = chance(0.3) ? '-' : '';
    let s;
    switch (int(0, 11)) {
      case 0: s = String(int(0, 100)); break;
      case 1: s = digits(int(1, 16), true); break;              // integers, checked below
      case 2: s = digits(int(1, 6), true) + '.' + digits(int(1, 6)); break;
      case 3: s = (chance(0.5) ? '0' : digits(int(1, 3), true)) + '.' + digits(int(1, 20)); break;
      case 4: s = digits(int(1, 4), true) + pick(['e', 'E']) + pick(['', '+', '-']) + int(0, 30); break;
      case 5: s = digits(1, true) + '.' + digits(int(1, 16)) + pick(['e', 'E']) + pick(['', '+', '-']) + int(0, 330); break;
      case 6: {                                                 // a random double, 17 digits
        const buf = new DataView(new ArrayBuffer(8));
        buf.setUint32(0, int(0, 0x7fefffff)); buf.setUint32(4, int(0, 0xffffffff));
        const d = buf.getFloat64(0);
        s = pick([d.toPrecision(17), d.toExponential(16), String(d)]).replace('e+', pick(['e+', 'e', 'E+', 'E']));
        break;
      }
      case 7: s = pick(['0', '0.0', '0e0', '0E-5', '0.000', '1.0', '1e0', '10e-1', '100e-2', '5e-324', '2.2250738585072014e-308', '1.7976931348623157e308', '9007199254740992', '1e21', '1e-7', '0.000001', '123456789012345680000', '4.35', '0.1', '0.2', '0.30000000000000004']); break;
      case 8: s = digits(int(17, 30), true) + '.' + digits(int(1, 5)); break;  // beyond 2^53, not an integer literal
      case 9: s = digits(int(1, 25), true) + 'e' + pick(['', '-', '+']) + int(0, 300); break;
      case 10: s = '0.' + '0'.repeat(int(0, 8)) + digits(int(1, 17), true); break;
      default: s = digits(int(1, 3), true) + '.' + digits(int(1, 3)) + 'e-' + int(300, 340); break;  // subnormals, underflow
    }
    s = sign + s;
    if (!Number.isFinite(Number(s))) continue;
    if (/^-?\d+$/.test(s) && (BigInt(s) > TWO53 || BigInt(s) < -TWO53)) continue;
    return s;
  }
}

// ---- documents ---------------------------------------------------------
function scalarText () {
  const r = rand();
  if (r < 0.45) return stringText(randomString(chance(0.2) ? 60 : 12));
  if (r < 0.85) return numberText();
  return pick(['true', 'false', 'null']);
}

// A value: a container (within about budget characters) or a scalar.
function valueText (depth, budget) {
  const r = rand();
  if (depth < 6 && budget > 40 && r < 0.35) return containerText(depth + 1, budget, chance(0.6));
  return scalarText();
}

function containerText (depth, budget, isObject) {
  const parts = [];
  const seen = new Set();
  let used = 2;
  const max = int(0, depth === 1 ? 40 : 12);
  for (let i = 0; i < max && used < budget; i++) {
    let piece;
    if (isObject) {
      const name = randomName();
      const key = String.fromCodePoint(...name);
      if (seen.has(key)) continue;
      seen.add(key);
      piece = ws() + stringText(name) + ws() + ':' + ws() + valueText(depth, (budget - used) / 2) + ws();
    } else {
      piece = ws() + valueText(depth, (budget - used) / 2) + ws();
    }
    parts.push(piece);
    used += piece.length + 1;
  }
  return (isObject ? '{' : '[') + (parts.length ? parts.join(',') : ws()) + (isObject ? '}' : ']');
}

function documentText () {
  const budget = int(200, 2000);
  const r = rand();
  let text;
  if (r < 0.02) text = scalarText();
  else text = containerText(1, budget, r < 0.85);
  return ws() + text + ws();
}

// Written in chunks, to stdout if OUT is "-".
const fd = OUT === '-' ? 1 : openSync(OUT, 'w');
let chunk = '';
for (let i = 0; i < N; i++) {
  const text = documentText();
  chunk += JSON.stringify([text, canonicalize(JSON.parse(text))]) + '\n';
  if (chunk.length > 1 << 20 || i === N - 1) {
    writeSync(fd, chunk);
    chunk = '';
  }
}
if (fd !== 1) {
  closeSync(fd);
  console.log(`${N} documents written to ${OUT}`);
}
