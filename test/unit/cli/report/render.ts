// Pieces of `xlurm report`'s page (docs/behaviour.md §26.4); the whole page is rendered in
// Chromium by test/e2e/report.ts.
import t from 'tap';
import { escapeHtml, humanDuration, renderReport } from '../../../../packages/cli/src/report/render';
import { statsFromReport } from '../../../../packages/cli/src/report/stats';

t.test('text is escaped; durations read as people write them', async (t) => {
  t.equal(escapeHtml(`<b a="x">&'`), '&#60;b a=&#34;x&#34;&#62;&#38;&#39;');
  t.equal(humanDuration(0), '0s');
  t.equal(humanDuration(59), '59s');
  t.equal(humanDuration(90), '1m 30s');
  t.equal(humanDuration(3600), '1h');
  t.equal(humanDuration(3 * 3600 + 20 * 60), '3h 20m');
  t.equal(humanDuration(2 * 86400 + 4 * 3600), '2d 4h');
});

t.test('an empty window still makes a whole page; a user name cannot inject markup', async (t) => {
  const empty = { since: 0, until: 86400, host: false, devices: [], jobs: [], samples: [] };
  const html = await renderReport(empty, statsFromReport(empty), { viewer: 'alice', hostname: 'gpu01' });
  t.match(html, /<\/html>\n$/);
  t.match(html, /your own jobs \(alice\)/);
  t.match(html, /This host has no devices\./);
  t.match(html, /No job ended in this period\./);
  const evil = '<script>alert(1)</script>';
  const data = {
    since: 0, until: 86400, host: true, samples: [],
    devices: [{ kind: 'nvidia' as const, id: 0, name: 'x', visible: 'x', npu: null, chip: null }],
    jobs: [{ id: 1, user: evil, uid: 5, name: evil, count: 1, state: 'COMPLETED' as const, devices: [0], submitted_at: 10, started_at: 20, finished_at: 40000 }],
  };
  const page = await renderReport(data, statsFromReport(data), { viewer: evil, hostname: evil });
  t.notOk(page.includes('<script'), 'no script element, whatever the names');
  t.ok(page.includes('&#60;script&#62;'));
});
