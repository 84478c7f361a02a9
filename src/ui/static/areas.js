// Which area of the server a path lies in, from the table GET paths.json serves: the same
// rule as the server's areaOf (src/http/paths.ts), kept apart from the page so that a test
// can hold the two together.

/** The first area, most specific first, that holds `path`; undefined when none does. */
export function areaIn(areas, path) {
  return areas.find((a) => path === a.prefix || (a.tree && path.startsWith(`${a.prefix}/`)));
}
