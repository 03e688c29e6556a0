#!/usr/bin/env node
// `advisory-feed`: the same entry as `advisory` (bin/advisory.mjs), which picks the tool by
// the name it was started under; process.argv[1] still names this file.
import './advisory.mjs';
