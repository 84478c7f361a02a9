/**
 * One section of the state (users, grids, annotations, ...) as a snapshot holds it: taken at
 * one moment, in one synchronous step and cheaply, so that it can be written out afterwards
 * in slices while requests go on changing the stores. A store hands out either references
 * to entries that it never changes again (it replaces them instead), or, for entries that it
 * changes in place, a copy of each as JSON text.
 */
export interface SectionSnapshot {
  /** The entries, in export order unless `sortById`; each the JSON text of an entry when `encoded`. */
  readonly items: readonly unknown[];
  readonly encoded?: boolean;
  /** The entries are exported in ascending `id` order, which `items` may not be in yet. */
  readonly sortById?: boolean;
  /** Turns an entry as held into the entry as exported (its keys in export order, defaults filled), when they differ. */
  readonly exported?: (item: unknown) => unknown;
}
