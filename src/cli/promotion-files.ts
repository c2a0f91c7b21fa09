import { createHash } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { PromotionDecision, PromotionState } from '../app/promotion.js';
import { ErrorCode } from '../errors/index.js';
import { CliError } from './cli-error.js';
import { writeWhole } from './write-whole.js';

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

async function readIfThere(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The SHA-256 of a model file's text, as a promotion records it. */
export const candidateHash = sha256;

/**
 * Makes the files say what `decision` decided, whatever was done already (so a rerun after a crash,
 * or a second decider, finishes the job and changes nothing more): promoted, the challenger's file
 * is copied over the serving file (servers reload it), then removed; withdrawn, it is removed.
 * Removing it ends the interleaving: servers go back to serving without the experiment. Returns
 * what it did, in words.
 */
export async function applyDecision(
  root: string,
  state: PromotionState,
  decision: PromotionDecision,
): Promise<string> {
  const challenger = resolve(root, state.challengerFile);
  const serving = resolve(root, state.servingFile);
  if (decision.outcome === 'withdrawn') {
    const there = (await readIfThere(challenger)) !== undefined;
    await rm(challenger, { force: true });
    return there ? `removed ${state.challengerFile}` : `${state.challengerFile} already removed`;
  }
  const candidate = await readIfThere(challenger);
  if (candidate !== undefined && sha256(candidate) === state.candidateSha256) {
    const current = await readIfThere(serving);
    const copied = current === undefined || sha256(current) !== state.candidateSha256;
    if (copied) await writeWhole(serving, candidate);
    await rm(challenger, { force: true });
    return `${copied ? 'installed' : 'already installed'} as ${state.servingFile}; removed ${state.challengerFile}`;
  }
  const current = await readIfThere(serving);
  if (current !== undefined && sha256(current) === state.candidateSha256)
    return `already installed as ${state.servingFile}`;
  throw new CliError(
    `promotion ${state.id}: the challenger won, but ${state.challengerFile} no longer holds it and ${state.servingFile} is not it: install the candidate by hand`,
    ErrorCode.INPUT_INVALID,
  );
}
