/**
 * A tiny PNG reader for screenshots (8-bit RGB or RGBA, not interlaced: what Chromium writes):
 * the chunks, the inflated image data and the five row filters of the PNG specification.
 */
import * as zlib from 'node:zlib';

export interface Image { width: number; height: number; channels: number; pixels: Buffer }

export function decodePng(buf: Buffer): Image {
  if (!buf.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) throw new Error('not a PNG file');
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  for (let at = 8; at < buf.length;) {
    const len = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    const data = buf.subarray(at + 8, at + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const depth = data[8];
      const colour = data[9];
      if (depth !== 8 || (colour !== 2 && colour !== 6) || data[12] !== 0) throw new Error(`unsupported PNG: depth ${depth}, colour type ${colour}, interlace ${data[12]}`);
      channels = colour === 6 ? 4 : 3;
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    at += 12 + len;
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = pixels.subarray(y * stride, (y + 1) * stride);
    const prev = y > 0 ? pixels.subarray((y - 1) * stride, y * stride) : Buffer.alloc(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? out[i - channels]! : 0;
      const b = prev[i]!;
      const c = i >= channels ? prev[i - channels]! : 0;
      let v = line[i]!;
      switch (filter) {
        case 0: break;
        case 1: v += a; break;
        case 2: v += b; break;
        case 3: v += (a + b) >> 1; break;
        case 4: {
          const p = a + b - c;
          const pa = Math.abs(p - a);
          const pb = Math.abs(p - b);
          const pc = Math.abs(p - c);
          v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default: throw new Error(`bad PNG filter ${filter}`);
      }
      out[i] = v & 0xff;
    }
  }
  return { width, height, channels, pixels };
}

/** How many pixels are within `tolerance` (per channel) of the colour `#rrggbb`. */
export function countColour(img: Image, hex: string, tolerance = 6): number {
  const r = parseInt(hex.slice(1, 3), 16);
  const g = parseInt(hex.slice(3, 5), 16);
  const b = parseInt(hex.slice(5, 7), 16);
  let n = 0;
  for (let i = 0; i < img.pixels.length; i += img.channels) {
    if (Math.abs(img.pixels[i]! - r) <= tolerance && Math.abs(img.pixels[i + 1]! - g) <= tolerance && Math.abs(img.pixels[i + 2]! - b) <= tolerance) n++;
  }
  return n;
}

/** The number of distinct colours (a blank page has one). */
export function distinctColours(img: Image): number {
  const seen = new Set<number>();
  for (let i = 0; i < img.pixels.length; i += img.channels) seen.add((img.pixels[i]! << 16) | (img.pixels[i + 1]! << 8) | img.pixels[i + 2]!);
  return seen.size;
}
