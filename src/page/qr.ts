import QRCode from 'qrcode';

const cache = new Map<string, string>();
const MAX = 2000;

/** An SVG QR code of `text` (medium error correction), cached: pages are re-rendered often. */
export async function qrSvg(text: string): Promise<string> {
  const hit = cache.get(text);
  if (hit) return hit;
  const svg = await QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 1, color: { dark: '#111827', light: '#ffffff' } });
  if (cache.size >= MAX) cache.delete(cache.keys().next().value!);
  cache.set(text, svg);
  return svg;
}
