#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Writes build/numbers.txt (or FILE) for test/numbers.test,
// test/idem_number_test.c, test/cross and the fuzz corpus:
// one "<literal>\t<expected>" per line, where <expected> is what Node prints
// for String(Number(literal)), "ERROR" when that is not finite, and the
// literal itself for an integer literal beyond 2^53 (doc/contract.md §3).
// Deterministic: a fixed seed, no dependence on the clock; the expected
// texts are Node's own printing (ECMAScript's Number::toString), which is
// why the file is made with Node at test time (make build/numbers.txt)
// rather than stored: 100 926 lines, 4.8 MB, the same bytes on every run.
//
//   node test/data/gen_numbers.js ?FILE?     (default build/numbers.txt)
'use strict';
const fs = require('fs');
const path = require('path');

// ---- deterministic randomness: xoshiro128**, fixed seed
let s0 = 0x9e3779b9 >>> 0, s1 = 0x243f6a88 >>> 0, s2 = 0xb7e15162 >>> 0,
    s3 = 0x3c6ef372 >>> 0;
function rnd32() {
  const r = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
  const t = (s1 << 9) >>> 0;
  s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl(s3, 11);
  s0 >>>= 0; s1 >>>= 0; s2 >>>= 0; s3 >>>= 0;
  return r;
}
function rotl(x, k) { return ((x << k) | (x >>> (32 - k))) >>> 0; }
function rint(n) { return Math.floor(rnd32() / 4294967296 * n); }   // [0,n)
function pick(a) { return a[rint(a.length)]; }
function digits(n, first) {              // n random digits
  let s = first ? String(1 + rint(9)) : '';
  while (s.length < n) s += String(rint(10));
  return s;
}

// ---- doubles and their exact values
const dv = new DataView(new ArrayBuffer(8));
function fromBits(hi, lo) {
  dv.setUint32(0, hi >>> 0); dv.setUint32(4, lo >>> 0); return dv.getFloat64(0);
}
function toBits(x) {
  dv.setFloat64(0, x);
  return (BigInt(dv.getUint32(0)) << 32n) | BigInt(dv.getUint32(4));
}
function fromBigBits(b) {
  return fromBits(Number(b >> 32n), Number(b & 0xffffffffn));
}
// x = m * 2^e exactly, m a BigInt (x positive and finite)
function decompose(x) {
  const b = toBits(Math.abs(x));
  const be = Number(b >> 52n), f = b & ((1n << 52n) - 1n);
  return be === 0 ? [f, -1074] : [f | (1n << 52n), be - 1075];
}
// The exact decimal text of m * 2^e (m > 0), in plain notation.
function exactDecimal(m, e) {
  if (e >= 0) return (m << BigInt(e)).toString() + '.0';
  const n = -e;
  let s = (m * 5n ** BigInt(n)).toString();      // value = s / 10^n
  if (s.length <= n) s = '0'.repeat(n - s.length + 1) + s;
  let r = s.slice(0, s.length - n) + '.' + s.slice(s.length - n);
  r = r.replace(/0+$/, '');
  return r.endsWith('.') ? r + '0' : r;
}
// Plain notation of a decimal given as digit string d and exponent: d * 10^x
function plain(d, x) {
  if (x >= 0) return d + '0'.repeat(x) + '.0';
  if (d.length > -x) return d.slice(0, d.length + x) + '.' + d.slice(d.length + x);
  return '0.' + '0'.repeat(-x - d.length) + d;
}
// Digits and exponent of a decimal literal: value = d * 10^x
function parseLit(s) {
  const m = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(s);
  return [(m[1] + (m[2] || '')).replace(/^0+(?=\d)/, ''),
          Number(m[3] || 0) - (m[2] || '').length];
}

// ---- the oracle
const TWO53 = 9007199254740992n;
function expected(lit) {
  if (/^-?\d+$/.test(lit)) {
    const b = BigInt(lit);
    if (b > TWO53 || -b > TWO53) return lit;
  }
  const v = Number(lit);
  return Number.isFinite(v) ? String(v) : 'ERROR';
}
const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
const out = [];
const seen = new Set();
function add(lit) {
  if (!JSON_NUMBER.test(lit)) throw new Error('not a JSON number: ' + lit);
  if (seen.has(lit)) return;
  seen.add(lit);
  out.push(lit + '\t' + expected(lit));
}
function neg(s) { return rint(2) ? '-' + s : s; }

// ---- spellings of one double
function expForms(s) {               // vary the exponent marker of "de+N"
  return s.replace(/e\+/, pick(['e+', 'E+', 'e', 'E'])).replace(/e-/, pick(['e-', 'E-']));
}
function spellings(x) {
  const a = [];
  a.push(String(x));                                  // Node's shortest
  a.push(x.toPrecision(17));                          // %.17g-like
  a.push(expForms(x.toExponential()));                // d.ddde+N
  a.push(expForms(x.toExponential(16)));              // 17 digits, exponent
  a.push(expForms(x.toExponential(rint(21))));        // 1 to 21 digits
  const [d, e] = parseLit(x.toExponential().replace('.', ''));
  const x10 = e - (d.length - 1);
  if (Math.abs(e) < 40) a.push(plain(d, x10));        // 0.000ddd / ddd.0
  a.push(d + (rint(2) ? '.000' : '') + 'e' + x10);    // integer digits, exponent
  const z = rint(8);                                  // leading zeros
  a.push('0.' + '0'.repeat(z) + d + 'e' + (x10 + z + d.length));
  const p = x.toPrecision(17);                        // trailing zeros
  if (p.includes('.')) a.push(p.replace(/(e|$)/, '000$1'));
  return a.filter(s => JSON_NUMBER.test(s));
}
function addDouble(x, n) {
  const a = spellings(Math.abs(x));
  add(neg(a[0]));
  add(neg(a[1]));
  for (let i = 2; i < n; i++) add(neg(pick(a.slice(2))));
}

// ---- edge cases, fixed
const MAXD = Number.MAX_VALUE, MIND = Number.MIN_VALUE;
[
  '0', '-0', '0.0', '-0.0', '0e0', '-0E+5', '0.000e-999', '0e99999999999999999999',
  '1', '-1', '1.0', '1.5', '1E30', '1e+30', '1e21', '1e20', '1e-7', '1e-6',
  '0.000001', '0.0000001', '0.00000123', '123e-20', '4.50', '2e-3',
  '333333333.33333329', '0.000000000000000000000000001', '56.0',
  '5e-324', '4.9406564584124654e-324', '2.4703282292062327e-324',
  '2.4703282292062328e-324', '2.470328229206232720882e-324', '3e-324', '2e-324',
  '7.4e-324', '7.5e-324', '1e-323', '1e-324', '1e-325', '1e-400', '-1e-400',
  '2.2250738585072011e-308', '2.2250738585072012e-308', '2.2250738585072014e-308',
  '2.225073858507201e-308', '2.2250738585072009e-308', '4.4501477170144023e-308',
  '1.7976931348623157e308', '-1.7976931348623157e308', '1.7976931348623158e308',
  '1.7976931348623159e308', '-1.7976931348623159e308', '1.797693134862315807e308',
  '1.797693134862315808e308', '1.79769313486231580793728971405301e308',
  '1e308', '1e309', '2e308', '-2e308', '1e400', '-1e400', '1e+99999999999999999999',
  '1e-99999999999999999999', '0.0000000000000000000001e22', '10000000000000000000000e-22',
  '9007199254740992', '9007199254740993', '-9007199254740993', '9007199254740991',
  '-9007199254740992', '9007199254740994', '9007199254740995', '18014398509481985',
  '9007199254740993.0', '9007199254740993e0', '9.007199254740993e15',
  '9007199254740992.0', '9007199254740991.5', '9007199254740992.5',
  '9007199254740992.0000000000000000000000001', '123456789012345678901234567890',
  '1' + '0'.repeat(399), '-' + digits(400, true), digits(800, true),
  '0.1', '0.2', '0.3', '0.30000000000000004', '0.1e1', '100', '1e2', '1E2', '1e+2',
  '123456789012345680000', '123456789012345680000.0', '1.2345678901234568e+20',
  '999999999999999999999.0', '999999999999999900000.0', '99999999999999990000.0',
  '0.00000099999999999999995', '0.0000009999999999999999', '0.000000999999999999999',
  '1.7976931348623157e-308', '1.0e-5', '3.0e10', '5e-7', '-5e-7', '12e-1',
].forEach(add);
add(String(MAXD)); add(String(MIND));
add(fromBits(0x000fffff, 0xffffffff).toPrecision(17));      // max subnormal
add(String(fromBits(0x000fffff, 0xffffffff)));
add(String(fromBits(0x00100000, 0)));                      // min normal
add(String(2 ** 53 - 1)); add(String(2 ** 53)); add(String(2 ** 53 + 2));
add('9007199254740993.0'); add((2 ** 53).toExponential(15));

// Powers of two and ten, and the ECMAScript notation boundaries.
for (let e = -1074; e <= 1023; e++) {
  add(String(2 ** e));
  add(expForms((2 ** e).toExponential(16)));
}
for (let k = -330; k <= 310; k++) { add('1e' + k); add(neg('9.99999999999999999e' + k)); }
for (let k = -12; k <= 25; k++) {
  const p = Number('1e' + k);
  for (const x of [p, nextUp(p), nextDown(p)]) {
    add(String(x)); add(x.toPrecision(17)); add(expForms(x.toExponential(20)));
    const [d, e] = parseLit(x.toExponential(20).replace('.', ''));
    add(plain(d, e - 20));
  }
}
function nextUp(x) { return fromBigBits(toBits(x) + 1n); }
function nextDown(x) { return fromBigBits(toBits(x) - 1n); }

// Halfway points between neighbours, exactly, and just above and below.
// Some far beyond 800 digits, where only the rounding-safe truncation holds.
function halfway(x) {                    // x positive, finite, below MAX
  const [m, e] = decompose(x);
  return exactDecimal(2n * m + 1n, e - 1);
}
function nudge(s, up, zeros) {           // s plain, with a '.'
  if (up) return s + '0'.repeat(zeros) + '1';
  // s - 10^-(frac+zeros+1): borrow through the digits
  const frac = s.length - s.indexOf('.') - 1 + zeros + 1;
  const b = BigInt(s.replace('.', '') + '0'.repeat(zeros + 1)) - 1n;
  let t = b.toString().padStart(frac + 1, '0');
  t = t.slice(0, t.length - frac) + '.' + t.slice(t.length - frac);
  return t.replace(/^0+(?=\d)/, '');
}
function addHalfway(x) {
  const h = halfway(x);
  add(h);
  add(nudge(h, true, rint(3)));
  add(nudge(h, false, rint(3)));
  const [d, e] = parseLit(h);
  add(expForms(sci(d.replace(/^0+/, ''), e)));
}
// d * 10^x as "d.ddde+N"
function sci(d, x) {
  const m = d.length > 1 ? d[0] + '.' + d.slice(1) : d;
  const n = x + d.length - 1;
  return m + (n < 0 ? 'e' + n : 'e+' + n);
}
function randomDouble() {
  for (;;) {
    const x = fromBits(rnd32(), rnd32());
    if (Number.isFinite(x)) return x;
  }
}
function moderateDouble() {              // |exponent| small: short halfway texts
  const hi = ((1023 + rint(140) - 70) << 20) | rint(1 << 20);
  return fromBits(hi, rnd32());
}
for (let i = 0; i < 1500; i++) addHalfway(Math.abs(moderateDouble()));
for (let i = 0; i < 60; i++) {
  addHalfway(Math.abs(randomDouble()) / (rint(2) ? 1 : 2 ** 900));
}
for (let i = 0; i < 30; i++) addHalfway(fromBits(rint(1 << 20), rnd32()));   // subnormals
addHalfway(0); addHalfway(MIND); addHalfway(fromBits(0x000fffff, 0xffffffff));
addHalfway(nextDown(MAXD));
{ // ties beyond 800 significant digits: x.5 ulp followed by zeros, then a 1
  const h = halfway(fromBits(0x00000000, 0x00000005));     // 767-digit tie
  add(h + '0'.repeat(100)); add(h + '0'.repeat(100) + '1'); add(nudge(h, false, 100));
  add(h + '0'.repeat(40) + '1');
  const g = halfway(fromBits(0x3ff00000, 0x00000001));
  add(g + '0'.repeat(900) + '1'); add(g + '0'.repeat(900)); add(nudge(g, false, 900));
  // the overflow threshold 2^1024 - 2^970 (ties to infinity) and just below
  const t = (2n ** 1024n - 2n ** 970n).toString();
  add(t + '.0'); add(t + '.' + '0'.repeat(850) + '1');
  add((2n ** 1024n - 2n ** 970n - 1n).toString() + '.' + '9'.repeat(820));
  add((2n ** 1024n - 2n ** 970n - 1n).toString() + '.9999');
  add(t.slice(0, 1) + '.' + t.slice(1) + 'e308');
}

// Exact decimal values of doubles: long, and exactly on a double.
for (let i = 0; i < 250; i++) {
  const x = i % 4 === 0 ? Math.abs(randomDouble()) : Math.abs(moderateDouble());
  const [m, e] = decompose(x);
  if (m === 0n) continue;
  const s = exactDecimal(m, e);
  if (s.length > 1200) continue;
  add(neg(s));
  add(nudge(s, rint(2) === 1, rint(20)));
}

// Long random decimals, 20 to 800 digits, and some past 800.
for (let i = 0; i < 2000; i++) {
  const n = 20 + Math.floor(780 * (rint(1000) / 1000) ** 4);
  const d = digits(n, true);
  const x = rint(700) - 350 - (i % 3 === 0 ? 0 : n);
  add(neg(d.slice(0, 1) + '.' + d.slice(1) + 'e' + (x + n - 1)));
  if (i % 10 === 0) add(neg(plain(d, Math.max(-n - 30, Math.min(20, x)))));
}
for (let i = 0; i < 20; i++) {
  add(neg('0.' + digits(rint(30), false) + digits(900 + rint(300), true) +
          'e' + (rint(640) - 320)));
}

// Integer literals: short (printed alike), around 2^53, and long (kept).
for (let i = 0; i < 6000; i++) add(neg(digits(1 + rint(i % 5 === 0 ? 40 : 16), true)));
for (let i = -40; i <= 40; i++) add(neg((TWO53 + BigInt(i)).toString()));

// Everyday decimals: prices, measures, short exponents (the fast path).
for (let i = 0; i < 28000; i++) {
  const n = 1 + rint(15);
  const d = digits(n, true);
  const f = rint(n + 8) - 4;              // digits after the point
  let s = f <= 0 ? d + '0'.repeat(-f) : plain(d, -f);
  if (!s.includes('.') && !/e/.test(s)) s += pick(['.0', 'e0', '.00', 'E+0']);
  if (rint(4) === 0) {
    s = d.slice(0, 1) + (n > 1 ? '.' + d.slice(1) : '') +
        pick(['e', 'E', 'e+', 'e-', 'E-']) + rint(330);
  }
  if (rint(8) === 0) s = s.replace(/(\.\d*)?(?=[eE]|$)/, m => (m || '.') + '00');
  add(neg(s));
}

// Random bit patterns, in several spellings each.
for (let i = 0; i < 20000; i++) addDouble(randomDouble(), 3);

const file = process.argv[2] ||
             path.join(__dirname, '..', '..', 'build', 'numbers.txt');
fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
// Written whole under another name, then renamed: a reader never sees half.
fs.writeFileSync(file + '.tmp', out.join('\n') + '\n');
fs.renameSync(file + '.tmp', file);
console.log(out.length + ' lines, ' + fs.statSync(file).size + ' bytes -> ' + file);
