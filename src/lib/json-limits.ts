// Shape limits at the edge: a JSON body nested too deep or holding too many values is refused with 400
// before it is parsed (see #shared/json-shape for why).
import { JSON_MAX_DEPTH, JSON_MAX_VALUES, measureJson } from '#shared/json-shape';
import { AppError } from './errors';

/** Throws a 400 with a stable code when the text is nested too deep or holds too many values. */
export function assertJsonShape(text: string, maxDepth = JSON_MAX_DEPTH, maxValues = JSON_MAX_VALUES): void {
  const shape = measureJson(text, maxDepth, maxValues);
  if (shape.depth > maxDepth) {
    throw new AppError(400, 'json_too_deep', `The JSON body is nested deeper than ${maxDepth} levels.`);
  }
  if (shape.values > maxValues) {
    throw new AppError(400, 'json_too_many_values', `The JSON body holds more than ${maxValues} values.`);
  }
}
