/**
 * The one function whatwg-url takes from @exodus/bytes, for UTF-8 only: a URL parsed by script
 * always has UTF-8 as its query encoding (the legacy encodings are for documents).
 */
const HEX = [];
for (let i = 0; i < 256; i++) HEX.push("%" + (i < 16 ? "0" : "") + i.toString(16).toUpperCase());

export function percentEncodeAfterEncoding(encoding, input, percentEncodeSet, spaceAsPlus = false) {
  if (String(encoding).toLowerCase() !== "utf-8") throw new RangeError("only UTF-8 is supported");
  const bytes = new TextEncoder().encode(input);
  let out = "";
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (spaceAsPlus && b === 0x20) out += "+";
    else if (b < 0x20 || b > 0x7e || percentEncodeSet.indexOf(String.fromCharCode(b)) >= 0) out += HEX[b];
    else out += String.fromCharCode(b);
  }
  return out;
}
