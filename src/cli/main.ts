/**
 * The `rankd` executable's entry point (bin/rankd.js imports the built copy of this file).
 * @module
 */
import { runCli } from './program.js';

await runCli(process.argv);
