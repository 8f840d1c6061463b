// What an observation says: the one definition. The observer's parser produces it, the store and import write
// it (db/observations.ts), the recall API hands it out inside ObservationRecord. It imports nothing but zod, so
// the browser viewer's types (recall/record-types.ts) can use it too.
import * as z from 'zod';

export const ObservationContent = z.object({
  type: z.string(),
  title: z.string().nullable(),
  subtitle: z.string().nullable(),
  facts: z.array(z.string()),
  narrative: z.string().nullable(),
  concepts: z.array(z.string()),
  /** Paths as the agent gave them; relative to the project root once stored. */
  filesRead: z.array(z.string()),
  filesModified: z.array(z.string()),
});
export type ObservationContent = z.infer<typeof ObservationContent>;
