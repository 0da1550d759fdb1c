#!/usr/bin/env node
// Reads raw TAP on stdin, passes it through, and ends with the plain line
// `N passed, N failed[, N skipped]` counted over every test point.
'use strict';
const { Parser } = require('tap-parser');

let pass = 0, fail = 0, skip = 0;
// Count leaf test points only: a subtest's own summary line in its parent
// (same name as a child stream) is not counted again.
function watch(p) {
  const children = new Set();
  p.on('child', (c) => { children.add(c.name); });
  p.on('assert', (a) => {
    if (children.has(a.name) && !a.skip) return;
    if (a.skip || a.todo) skip++;
    else if (a.ok) pass++;
    else fail++;
  });
  p.on('child', watch);
}
const parser = new Parser();
watch(parser);
parser.on('complete', () => {
  process.stdout.write(`\n${pass} passed, ${fail} failed${skip ? `, ${skip} skipped` : ''}\n`);
});
process.stdin.on('data', (b) => process.stdout.write(b));
process.stdin.pipe(parser);
