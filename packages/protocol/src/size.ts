/**
 * Sizes, written once for the CLI's `--mem`, the configuration file's
 * memory keys and the daemon's messages (docs/behaviour.md §20.1): a number
 * with an optional binary unit K, M, G or T, optionally followed by B or iB,
 * in any case (`16G`, `512M`, `1.5G`, `2GiB`); a bare number means MiB, as
 * Slurm's `--mem` reads it.
 */

/** Bytes per unit; a bare number is MiB. */
const UNIT_BYTES: Readonly<Record<string, number>> = { k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** The accepted text, as a JSON Schema pattern (the configuration schema uses it too). */
export const SIZE_PATTERN = '^([0-9]+(\\.[0-9]+)?|\\.[0-9]+)([KkMmGgTt]([Bb]|[Ii][Bb])?)?$';
const SIZE = new RegExp(SIZE_PATTERN);

/** The size's bytes (rounded down to a whole byte), or null when `text` is not a size or too large. */
export function sizeBytes(text: string): number | null {
  const m = SIZE.exec(text);
  if (!m) return null;
  const unit = m[3] ? UNIT_BYTES[m[3][0]!.toLowerCase()]! : UNIT_BYTES.m!;
  const bytes = Math.floor(Number(m[1]) * unit);
  return Number.isSafeInteger(bytes) ? bytes : null;
}

/** The message for text that is no size (docs/behaviour.md §20.1). */
export function sizeError(text: string): string {
  return `invalid size '${text}': use a number with K, M, G or T`;
}

const UNITS = ['T', 'G', 'M', 'K'] as const;

/**
 * Bytes as messages show them: the largest unit that leaves at least 1, with
 * at most one decimal, dropped when it is 0 (`16G`, `9.5G`, `512M`, `100`
 * for a few bytes). `fixed` keeps the decimal (`16.0G`), as a measured peak is shown.
 */
export function formatSize(bytes: number, fixed = false): string {
  for (const u of UNITS) {
    const per = UNIT_BYTES[u.toLowerCase()]!;
    if (bytes >= per) {
      const v = Math.round((bytes / per) * 10) / 10;
      return `${fixed ? v.toFixed(1) : String(v)}${u}`;
    }
  }
  return `${bytes}`;
}
