import Type from 'typebox';
import type { RankdApp } from '../../app/define-app.js';
import { ValidationError } from '../../errors/index.js';
import type { FeatureView } from '../../features/define-feature-view.js';

/** `feature_view`: one of the app's feature views (listed in the OpenAPI document). */
export function featureViewNameSchema(app: RankdApp) {
  const names = [...app.featureViews.keys()];
  return names.length > 0
    ? Type.Enum(names, { description: 'A feature view the app declares' })
    : Type.String({ description: 'A feature view the app declares (this app declares none)' });
}

/** An entity id, or `[first, second]` ids for a pair view. */
export const RowIdSchema = Type.Union([
  Type.String({ minLength: 1 }),
  Type.Number(),
  Type.Array(Type.Union([Type.String({ minLength: 1 }), Type.Number()]), { minItems: 2, maxItems: 2 }),
]);

/** The view named `name`; a 422 listing the views when there is none (the enum catches it first when the app has views). */
export function featureViewOf(
  app: RankdApp,
  name: string,
  loc: Array<string | number> = ['body', 'feature_view'],
): FeatureView {
  const view = app.featureViews.get(name);
  if (view === undefined) {
    const known = [...app.featureViews.keys()];
    throw ValidationError.at(
      loc,
      `unknown feature view ${JSON.stringify(name)}; known views: ${known.length > 0 ? known.join(', ') : 'none'}`,
      'enum',
    );
  }
  return view;
}
