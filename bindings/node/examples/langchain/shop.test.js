// SPDX-License-Identifier: MIT
'use strict';
// The tests of the LangChain.js example (../harness/suite.js), driven by a
// scripted chat model (model.js) through a LangGraph agent.
//
//   npm test        (after npm install in this folder)
require('../harness/suite.js')(__dirname);
