// SPDX-License-Identifier: MIT
'use strict';
// The tests of the OpenAI Agents SDK example (../harness/suite.js), driven
// by a Model stub (model.js) through run().
//
//   npm test        (after npm install in this folder)
require('../harness/suite.js')(__dirname);
