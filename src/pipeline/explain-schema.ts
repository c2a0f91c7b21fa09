/**
 * The request fields and response parts of explanations (docs/guides/explain-a-ranking.md): `explain` and
 * `overrides` in a ranking request; `explanation` on each ranked candidate and on the response.
 */
import Type from 'typebox';

const nullableNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });

/** What a ranking request may force for one run, to compare runs (debug controls). */
export const OverridesSchema = Type.Object(
  {
    variants: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description:
          'Experiment id → variant name: the request is assigned these variants instead of its own',
      }),
    ),
    skip_business_logic: Type.Optional(
      Type.Array(Type.String(), {
        maxItems: 100,
        description: 'Names of business-logic steps of the pipeline to leave out of this run',
      }),
    ),
    model: Type.Optional(
      Type.String({
        description:
          "Name of the model to score with instead: the pipeline's model or one an experiment variant of it uses",
      }),
    ),
  },
  {
    title: 'RankingOverrides',
    additionalProperties: false,
    description:
      'Debug controls for comparing runs: allowed to any caller that may rank. An unknown experiment, ' +
      'variant, step or model is refused (422) with the names allowed.',
  },
);

/** The fields every ranking request has for explanations. */
export const ExplainRequestFields = {
  explain: Type.Optional(
    Type.Boolean({
      default: false,
      description:
        'Explain the page: each candidate its model inputs and contributions and what business logic did; ' +
        'the response its variants, stage times and dropped candidates (docs/guides/explain-a-ranking.md)',
    }),
  ),
  overrides: Type.Optional(OverridesSchema),
};

/** Where a model input's value came from. */
const InputSource = Type.Union(
  [Type.Literal('stored'), Type.Literal('realtime'), Type.Literal('default'), Type.Literal('missing')],
  {
    description:
      'stored: a stored feature row; realtime: computed in this request; default: no value, the declared ' +
      'default; missing: no value and no default',
  },
);

const modelFields = {
  name: Type.String({ description: 'The model (for a chain stage: the member)' }),
  score: nullableNumber("The model's score (after its output transform); null for none"),
  margin: nullableNumber('The raw margin bias + Σ contributions add up to; null when not available'),
  bias: nullableNumber('The part of the margin no input moved; null when not available'),
  available: Type.Boolean({ description: 'Whether contributions are given (not for ONNX, remote models)' }),
  reason: Type.Optional(Type.String({ description: 'Why contributions are not available' })),
  contributions: Type.Union([Type.Record(Type.String(), Type.Number()), Type.Null()], {
    description: 'By feature, how far its value moved the margin from the bias',
  }),
  inputs: Type.Record(
    Type.String(),
    Type.Object({
      value: nullableNumber('The number the model saw; null: missing'),
      source: InputSource,
    }),
    { description: 'Each feature the model read' },
  ),
  fallback: Type.Optional(
    Type.Object(
      {
        model: Type.String({ description: 'The model that scored instead' }),
        reason: Type.String({ description: 'Why, e.g. `ranker.json does not exist yet`' }),
      },
      {
        description:
          "Present when the model's fallback scored in its place (a file model's `whenMissing` while its " +
          "file does not exist yet, or did not load); the score, contributions and inputs are the fallback's",
      },
    ),
  ),
};

/** One model of a chain, explained. */
const StageExplanationSchema = Type.Object(modelFields, { title: 'ModelStageExplanation' });

/** One business-logic step, as one candidate met it. Positions count from 1. */
const StepEntrySchema = Type.Object(
  {
    step: Type.String(),
    action: Type.String({ description: 'boost, pin, filter, demote, dedupe, diversity, custom, none, ...' }),
    description: Type.String({ description: 'What the step did, in words and figures' }),
    score_before: nullableNumber('Score before the step'),
    score_after: nullableNumber('Score after the step'),
    position_before: Type.Integer({ description: 'Position (from 1) before the step' }),
    position_after: Type.Integer({ description: 'Position (from 1) after the step' }),
  },
  { title: 'BusinessLogicStepExplanation' },
);

/** A ranked candidate's explanation (with `explain: true`). */
export const CandidateExplanationSchema = Type.Object(
  {
    model: Type.Object(
      { ...modelFields, stages: Type.Optional(Type.Array(StageExplanationSchema)) },
      { title: 'ModelExplanation' },
    ),
    business_logic: Type.Array(StepEntrySchema),
    model_position: Type.Integer({
      description: 'Position (from 1) by model score alone, before business logic',
    }),
    interleaving: Type.Optional(
      Type.Object(
        {
          ranker: Type.Union([Type.Literal('control'), Type.Literal('challenger')], {
            description: 'The ranker that placed the item; its clicks are credited to it',
          }),
          control_position: Type.Union([Type.Integer(), Type.Null()], {
            description: "Position (from 1) in the control's own list; null: not in it",
          }),
          challenger_position: Type.Union([Type.Integer(), Type.Null()], {
            description: "Position (from 1) in the challenger's own list; null: not in it",
          }),
        },
        {
          title: 'InterleavedCandidate',
          description:
            'On an interleaved page: who placed the item (the model and business logic above are its)',
        },
      ),
    ),
    read_cache: Type.Optional(
      Type.Object(
        {
          entity: Type.Boolean({
            description: "Whether the candidate's stored value came from the read cache",
          }),
          views: Type.Array(Type.String(), {
            description: 'The feature views whose row of the candidate came from the read cache',
          }),
        },
        {
          title: 'ReadCacheUse',
          description:
            "Only while the server's read cache is on (READ_CACHE_MB): what of the candidate it served " +
            'instead of Redis',
        },
      ),
    ),
    hydration: Type.Optional(
      Type.String({
        description:
          'Only for a candidate the index does not hold: "not in the index; ranked with the fields sent" ' +
          '(the x-rankd-not-in-index header counts them)',
      }),
    ),
  },
  {
    title: 'CandidateExplanation',
    examples: [
      {
        model: {
          name: 'RankingModel',
          score: 5.9,
          margin: 5.9,
          bias: 0,
          available: true,
          contributions: { 'text_match:title': 5, 'product_stats:popularity': 0.9 },
          inputs: {
            'text_match:title': { value: 1, source: 'realtime' },
            'product_stats:popularity': { value: 1.8, source: 'stored' },
          },
        },
        business_logic: [
          {
            step: 'FeaturedBrand',
            action: 'boost',
            description: 'boost +0.3 (brand = Ember & Wick)',
            score_before: 5.9,
            score_after: 6.2,
            position_before: 2,
            position_after: 1,
          },
        ],
        model_position: 2,
      },
    ],
  },
);

/** The response's explanation (with `explain: true`). */
export const RequestExplanationSchema = Type.Object(
  {
    variants: Type.Record(Type.String(), Type.String(), {
      description: 'Experiment id → the variant this request was assigned',
    }),
    overrides_applied: Type.Union([OverridesSchema, Type.Null()]),
    stage_ms: Type.Record(Type.String(), Type.Number(), {
      description: 'Milliseconds per stage (hydrate and features overlap: both start with the request)',
    }),
    dropped: Type.Array(Type.Object({ id: Type.String(), step: Type.String(), reason: Type.String() }), {
      description: 'Candidates a business-logic step removed (filter, dedupe), with the reason',
    }),
    interleaving: Type.Optional(
      Type.Object(
        {
          experiment_id: Type.String(),
          rankers: Type.Record(
            Type.String(),
            Type.Object({
              model: Type.String(),
              version: Type.Union([Type.String(), Type.Null()]),
              variant: Type.Optional(Type.String()),
            }),
            {
              description:
                'control and challenger: the model that scored, and the variant for a variant ranker',
            },
          ),
        },
        {
          title: 'InterleavedPage',
          description: 'When the page was interleaved: the experiment and its rankers',
        },
      ),
    ),
  },
  { title: 'RequestExplanation' },
);
