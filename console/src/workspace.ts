import type { ComponentChild } from 'preact';
import type { PipelineInfo } from './openapi.js';

/** What the ranking and comparison views share: the chosen pipeline and the request being written. */
export interface Workspace {
  pipeline: PipelineInfo;
  /** The request as JSON text (the form edits it too). */
  text: string;
  /** The request editor, already bound to `text`. */
  editor: ComponentChild;
  /** The candidates' entity type, when the app names one for the pipeline's id field. */
  entityType: string | undefined;
}
