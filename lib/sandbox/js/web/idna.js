/** UTS #46 processing (tr46 with its tables): a chunk of its own, loaded by ./tr46-lazy.js. */
export { toASCII, toUnicode } from "tr46";
