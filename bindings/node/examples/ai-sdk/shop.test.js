// SPDX-License-Identifier: MIT
'use strict';
// The tests of the Vercel AI SDK example (../harness/suite.js), driven by
// its test model MockLanguageModelV2 (model.js) through generateText.
//
//   npm test        (after npm install in this folder)
require('../harness/suite.js')(__dirname);
