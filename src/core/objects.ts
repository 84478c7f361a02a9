/**
 * Repository objects that an interface's store shows of its own records (a grid, a domain, an
 * alert...): each interface that owns a type of object says so in its contract (`objects` in
 * core/interface.ts), and the repository serves them beside the objects it stores. Pure: no
 * interface folder is named here, so every one can use it.
 */

/** An attribute as the repository spells it: values are strings (or null), whatever they mean. */
export interface ObjectAttribute {
  readonly name: string;
  readonly value: string | null;
}

/** One object of a type that another interface owns, as that interface's store shows it. */
export interface ObjectView {
  readonly id: number;
  readonly name: string;
  /** Attributes the owning store derives from its records; they cannot be changed through the repository. */
  readonly attributes: readonly ObjectAttribute[];
  /** The XML body shown until one is stored for the object. */
  readonly body?: string;
  /** The tenant the object belongs to; absent: the owning interface has no tenants, and every tenant sees it. */
  readonly tenant?: string;
  /** Nothing of it can be changed through the repository (users, tenants). */
  readonly readOnly?: boolean;
  /** Why the owning store would not let it go (a running grid), in its words; asked only when a delete comes. */
  readonly refuseDelete?: () => string;
}

/** The objects of one type that a store owns, as `tenant` sees them, read from the store when asked. */
export type ObjectViewProvider = (tenant: string) => Iterable<ObjectView>;

/** The providers of an interface (or of all of them), by object type: `grid`, `domain`, ... */
export type ObjectViews = Partial<Record<string, ObjectViewProvider>>;

/** Attributes from plain values, each value written as a string. */
export const attributesOf = (values: Record<string, string | number | boolean>): ObjectAttribute[] =>
  Object.entries(values).map(([name, value]) => ({ name, value: String(value) }));

/** Text for an XML body: the characters XML reserves in text and attributes, escaped. */
export function xmlText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** `2026-11-22T09:00:00.000+0000`: ISO-8601 with the zone as digits, as the repository writes times; null for none. */
export function zonedTime(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString().replace('Z', '+0000');
}
