// screenshot.js — page_screenshot's arithmetic: which rectangle Page.captureScreenshot is asked for
// (the viewport, the whole page, a region, or one element's box in the viewport; scaled down to
// a maxWidth), and the pixel size of
// the PNG or JPEG it answered, read from the image's own header. Pure: no chrome. It must never
// ask for a clip larger than FULL_PAGE_MAX on a side, never scale an image up, and never trust a
// size it did not read from the image.

/** Longest side of a capture, in CSS pixels (Chrome's own texture limits sit near 16k). */
export const FULL_PAGE_MAX = 16384;
/** JPEG quality when none is given. */
export const DEFAULT_JPEG_QUALITY = 80;

/**
 * @typedef {{x: number, y: number, width: number, height: number}} Rect
 * @typedef {{fullPage: boolean, region?: Rect, element?: Rect, maxWidth?: number}} CaptureOptions
 *   element: a border box in viewport CSS pixels (handlers/element-shot.js measured it)
 */

/**
 * The clip (CSS pixels, with Chrome's `scale`) for `opts` given Page.getLayoutMetrics' answer,
 * and whether it lies beyond the viewport. The device pixel ratio is the metrics' device-pixel
 * viewport over its CSS one, so maxWidth bounds the image's real pixels.
 * @param {any} metrics
 * @param {CaptureOptions} opts
 * @returns {{clip: Rect & {scale: number}, beyondViewport: boolean}}
 */
export function captureClip(metrics, { fullPage, region, element, maxWidth }) {
  const css = metrics?.cssVisualViewport ?? {};
  const device = metrics?.visualViewport ?? {};
  const dpr = positive(device.clientWidth) / positive(css.clientWidth) || 1;
  /** @type {Rect} */
  let rect;
  let beyond = fullPage || region !== undefined;
  if (region !== undefined) rect = { ...region };
  else if (element !== undefined) {
    // In the page from the visual viewport's offset; what lies left of or above the page is cut.
    const x = num(css.pageX) + num(element.x);
    const y = num(css.pageY) + num(element.y);
    rect = { x: Math.max(0, x), y: Math.max(0, y), width: positive(num(element.width) + Math.min(0, x)), height: positive(num(element.height) + Math.min(0, y)) };
    // A box larger than the viewport (or partly outside it) is captured beyond it.
    beyond = element.x < 0 || element.y < 0 || element.x + element.width > positive(css.clientWidth) || element.y + element.height > positive(css.clientHeight);
  } else if (fullPage) {
    const size = metrics?.cssContentSize ?? metrics?.contentSize ?? {};
    rect = { x: 0, y: 0, width: positive(size.width), height: positive(size.height) };
  } else {
    rect = { x: num(css.pageX), y: num(css.pageY), width: positive(css.clientWidth), height: positive(css.clientHeight) };
  }
  rect.width = Math.min(FULL_PAGE_MAX, Math.ceil(rect.width));
  rect.height = Math.min(FULL_PAGE_MAX, Math.ceil(rect.height));
  const wide = rect.width * dpr;
  const scale = maxWidth !== undefined && wide > maxWidth ? maxWidth / wide : 1;
  return { clip: { ...rect, scale }, beyondViewport: beyond };
}

/** @param {unknown} v */
const num = (v) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
/** @param {unknown} v */
const positive = (v) => Math.max(1, num(v));

/**
 * The bytes at the start of a base64 string (at most `max`), or null when it is not base64.
 * @param {string} base64
 * @param {number} max
 */
function head(base64, max) {
  const n = Math.min(base64.length, Math.ceil(max / 3) * 4);
  try {
    return Uint8Array.from(atob(base64.slice(0, n - (n % 4))), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/**
 * Width and height of a PNG (its IHDR) or a JPEG (its first start-of-frame marker), or null
 * when `base64` is neither.
 * @param {unknown} base64
 * @returns {{width: number, height: number, mimeType: "image/png" | "image/jpeg"} | null}
 */
export function imageSize(base64) {
  if (typeof base64 !== "string") return null;
  const b = head(base64, 256 * 1024);
  if (b === null || b.length < 24) return null;
  const u16 = (/** @type {number} */ at) => (b[at] << 8) | b[at + 1];
  const png = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (png.every((v, i) => b[i] === v)) {
    if (String.fromCharCode(...b.slice(12, 16)) !== "IHDR") return null;
    const u32 = (/** @type {number} */ at) => ((u16(at) << 16) >>> 0) + u16(at + 2);
    return { width: u32(16), height: u32(20), mimeType: "image/png" };
  }
  if (b[0] !== 0xff || b[1] !== 0xd8) return null;
  let at = 2;
  while (at + 9 < b.length) {
    if (b[at] !== 0xff) return null;
    const marker = b[at + 1];
    if (marker === 0xff) { at += 1; continue; }
    // SOF0..SOF15 carry the frame size, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { width: u16(at + 7), height: u16(at + 5), mimeType: "image/jpeg" };
    }
    at += 2 + u16(at + 2);
  }
  return null;
}
