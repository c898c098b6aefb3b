'use strict';
// The bundle replaces apps/cli/src/boot/lean-nest (require-cache stand-ins for the unbundled build).
