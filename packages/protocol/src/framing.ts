/**
 * Framing: newline-delimited JSON. A frame whose JSON object has a numeric
 * `raw` field is followed by exactly that many raw bytes (log data travels as
 * bytes, not JSON). The JSON part of a frame is limited in size; the limit is
 * checked before JSON.parse so a huge frame costs nothing but the bytes read.
 */

/** Largest request frame the daemon accepts. */
export const MAX_REQUEST_BYTES = 4 * 1024 * 1024;
/** Largest JSON response frame a client accepts. */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
/** Largest raw attachment of one frame. */
export const MAX_RAW_BYTES = 16 * 1024 * 1024;

/**
 * Deepest nesting of arrays and objects a request may have. Real requests
 * need 3 levels; JSON.parse takes seconds for a few megabytes of `[[[[…`, so
 * deeper frames are refused by a linear scan before parsing.
 */
export const MAX_REQUEST_DEPTH = 32;

/**
 * A decoded frame. With `splitRaw`, a raw attachment arrives as several
 * frames that share `msg`, each with the next piece of the bytes: `rawAt` is
 * where the piece starts within the attachment.
 */
export interface Frame { msg: unknown; raw?: Buffer; rawAt?: number }

export interface DecoderOptions {
  /** Refuse frames nested deeper than this (checked before JSON.parse). */
  maxDepth?: number;
  /** Frames may announce a raw attachment (responses); requests never carry one. Default true. */
  raw?: boolean;
  /**
   * Hand out a raw attachment piece by piece as it arrives (views of the
   * pushed chunks) instead of once complete: no reassembly copy, no buffer
   * of the attachment's size. Default false.
   */
  splitRaw?: boolean;
  /**
   * Pushed chunks are borrowed: valid only until push() returns (a reused
   * read buffer). Bytes kept for a later frame (an incomplete JSON line) are
   * copied; raw pieces handed out are views of the chunk, valid as long as
   * the caller keeps the chunk unchanged. Meant for use with splitRaw (which
   * keeps no attachment bytes). Default false.
   */
  borrowed?: boolean;
}

export class FrameTooLarge extends Error {
  override name = 'FrameTooLarge';
  constructor() { super('message exceeds size limit'); }
}
export class FrameSyntax extends Error {
  override name = 'FrameSyntax';
}

const NL = 0x0a;

/** Encode one JSON frame (and optional raw attachment) into buffers ready to write. */
export function encodeFrame(msg: object, raw?: Buffer): Buffer {
  const head = Buffer.from(JSON.stringify(raw ? { ...msg, raw: raw.length } : msg) + '\n');
  return raw ? Buffer.concat([head, raw]) : head;
}

/** Incremental decoder: feed chunks, take complete frames. */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private pendingMsg: unknown = undefined;
  private pendingRaw = -1;
  /** splitRaw: bytes of the current attachment already handed out. */
  private rawDone = 0;

  constructor(private readonly maxJson: number, private readonly opts: DecoderOptions = {}) {}

  /** Bytes buffered but not yet part of a complete frame. */
  get bufferedBytes(): number { return this.buffered; }

  push(chunk: Buffer): Frame[] {
    if (chunk.length) { this.chunks.push(chunk); this.buffered += chunk.length; }
    const out: Frame[] = [];
    for (;;) {
      if (this.pendingRaw >= 0 && this.opts.splitRaw) {
        const left = this.pendingRaw - this.rawDone;
        if (left > 0) {
          if (this.buffered === 0) break;
          const piece = this.take(Math.min(left, this.chunks[0]!.length));
          out.push({ msg: this.pendingMsg, raw: piece, rawAt: this.rawDone });
          this.rawDone += piece.length;
          continue;
        }
        if (this.pendingRaw === 0) out.push({ msg: this.pendingMsg, raw: Buffer.alloc(0), rawAt: 0 });
        this.pendingRaw = -1;
        this.pendingMsg = undefined;
        this.rawDone = 0;
        continue;
      }
      if (this.pendingRaw >= 0) {
        if (this.buffered < this.pendingRaw) break;
        const raw = this.take(this.pendingRaw);
        out.push({ msg: this.pendingMsg, raw });
        this.pendingRaw = -1;
        this.pendingMsg = undefined;
        continue;
      }
      const nl = this.indexOfNewline();
      if (nl < 0) {
        if (this.buffered > this.maxJson) throw new FrameTooLarge();
        break;
      }
      if (nl > this.maxJson) throw new FrameTooLarge();
      const line = this.take(nl + 1).subarray(0, nl);
      if (this.opts.maxDepth !== undefined && nestingExceeds(line, this.opts.maxDepth)) {
        throw new FrameSyntax(`invalid JSON: nested deeper than ${this.opts.maxDepth} levels`);
      }
      let msg: unknown;
      try {
        msg = JSON.parse(decodeUtf8(line));
      } catch (e) {
        throw new FrameSyntax(`invalid JSON: ${(e as Error).message}`);
      }
      const raw = (msg !== null && typeof msg === 'object' && !Array.isArray(msg))
        ? (msg as { raw?: unknown }).raw : undefined;
      if (typeof raw === 'number' && this.opts.raw !== false) {
        if (!Number.isInteger(raw) || raw < 0 || raw > MAX_RAW_BYTES) throw new FrameSyntax('invalid raw length');
        this.pendingMsg = msg;
        this.pendingRaw = raw;
        continue;
      }
      out.push({ msg });
    }
    if (this.opts.borrowed && this.buffered > 0) this.chunks = [Buffer.concat(this.chunks, this.buffered)];
    return out;
  }

  private indexOfNewline(): number {
    let base = 0;
    for (const c of this.chunks) {
      const i = c.indexOf(NL);
      if (i >= 0) return base + i;
      base += c.length;
    }
    return -1;
  }

  private take(n: number): Buffer {
    if (n === 0) return Buffer.alloc(0);
    let first = this.chunks[0]!;
    if (first.length < n) {
      first = Buffer.concat(this.chunks);
      this.chunks = [first];
    }
    const head = first.subarray(0, n);
    if (first.length === n) this.chunks.shift();
    else this.chunks[0] = first.subarray(n);
    this.buffered -= n;
    return head;
  }
}

/** Does the JSON text nest arrays/objects deeper than `max`? (brackets inside strings do not count) */
export function nestingExceeds(buf: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i]!;
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) { if (++depth > max) return true; }
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Decode UTF-8, refusing invalid sequences (so they cannot be silently replaced). */
export function decodeUtf8(buf: Uint8Array): string {
  try {
    return strictUtf8.decode(buf);
  } catch {
    throw new FrameSyntax('invalid UTF-8 in frame');
  }
}
