// SPDX-License-Identifier: MIT
// sqlite-idem for import: the CommonJS module index.js, one instance for
// both (an error thrown under require is instanceof the imported class).
//
//   import idem from 'sqlite-idem';
//   import { calls, Outcome, NotSent } from 'sqlite-idem';
import idem from './index.js';

export default idem;
export const {
  load, loadablePath, calls, Calls, Result, Outcome,
  CallError, InProgress, Unknown, Failed, NotSent, Lost, NotRecorded, Unstorable, ArgsMismatch, HEADER,
} = idem;
