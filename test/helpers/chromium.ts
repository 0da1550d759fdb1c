/**
 * Headless Chromium for rendering tests (the Debian package `chromium`): a screenshot of a local
 * file, in a fresh profile, with every kind of background networking off, and its network log.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runProcess } from './daemon';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];

/** The browser, or undefined where none is installed. */
export function findChromium(): string | undefined {
  const env = process.env.XLURM_TEST_CHROMIUM;
  if (env) return fs.existsSync(env) ? env : undefined;
  return CANDIDATES.find((c) => fs.existsSync(c));
}

/** Why a Chromium test is skipped, or false when it runs. */
export const CHROMIUM_SKIP: string | false = findChromium() ? false
  : 'Chromium is not installed (Debian package chromium; or set XLURM_TEST_CHROMIUM)';

export interface Shot { png: Buffer; netlog: string; stderr: string }

/** Render `file` at `width`×`height` and return the screenshot and Chromium's network log. */
export async function screenshot(file: string, width: number, height: number): Promise<Shot> {
  const bin = findChromium();
  if (!bin) throw new Error('no Chromium');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-chromium-'));
  try {
    const out = path.join(dir, 'shot.png');
    const netlog = path.join(dir, 'net.json');
    const args = [
      '--headless', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--hide-scrollbars', `--user-data-dir=${path.join(dir, 'profile')}`,
      `--log-net-log=${netlog}`, '--net-log-capture-mode=Default',
      `--screenshot=${out}`, `--window-size=${width},${height}`,
      ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
      `file://${file}`,
    ];
    const r = await runProcess(bin, args, { timeout: 60000, env: { ...process.env, HOME: dir } as Record<string, string> });
    if (!fs.existsSync(out)) throw new Error(`chromium wrote no screenshot (exit ${r.code}): ${r.stderr.slice(-2000)}`);
    return { png: fs.readFileSync(out), netlog: fs.existsSync(netlog) ? fs.readFileSync(netlog, 'utf8') : '', stderr: r.stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The browser's own requests, made whatever the page (its clock check, account probe and search
 * prefetch reach these hosts even with background networking off): not the page's doing.
 */
const BROWSER_OWN = /^https?:\/\/([a-z0-9-]+\.)*(google\.com|googleapis\.com|gstatic\.com|googleusercontent\.com)(:\d+)?\//i;

/** The network URLs a net log saw requested, less the browser's own. */
export function networkUrls(netlog: string): string[] {
  const urls = new Set<string>();
  for (const m of netlog.matchAll(/"url":"([^"]+)"/g)) {
    const u = m[1]!;
    if (/^(https?|wss?|ftp):/i.test(u) && !BROWSER_OWN.test(u)) urls.add(u);
  }
  return [...urls].sort();
}
