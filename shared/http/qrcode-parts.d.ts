/**
 * Types of the two parts of `qrcode` the trace page uses (the package's own server entry also
 * loads its PNG renderer and pngjs, which the get-trace bundle does not need): the encoder and the
 * SVG renderer that `QRCode.toString(text, {type: 'svg'})` runs.
 */
declare module 'qrcode/lib/core/qrcode' {
  import type { QRCode, QRCodeOptions } from 'qrcode';
  export function create(text: string, options?: QRCodeOptions): QRCode;
}

declare module 'qrcode/lib/renderer/svg-tag' {
  import type { QRCode, QRCodeToStringOptions } from 'qrcode';
  export function render(qrData: QRCode, options?: QRCodeToStringOptions): string;
}
