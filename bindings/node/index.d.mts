// Type declarations for sqlite-idem under import (index.mjs): the same as
// index.d.ts, and the module itself as the default export.
import * as idem from './index.js';

export * from './index.js';
export default idem;
