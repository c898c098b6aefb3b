'use strict';
// nest-commander requires inquirer (with lodash and rxjs, ~250 modules) when it loads; no command prompts.
module.exports = require('./lazy')('inquirer', ['prompts', 'Separator', 'ui', 'createPromptModule', 'prompt', 'registerPrompt', 'restoreDefaultPrompts']);
