// How the dashboard writes times and durations. Emulated times are shown in UTC, like the
// interfaces speak them.

const pad = (n, w = 2) => String(n).padStart(w, '0');
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "09:05:07" */
export function hms(ms) {
  const d = new Date(ms);
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** "2026-11-22" */
export function ymd(ms) {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

/** "2026-11-22 09:05:07" */
export const dateTime = (ms) => `${ymd(ms)} ${hms(ms)}`;

/** "Nov 22" */
export function shortDate(ms) {
  const d = new Date(ms);
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
}

/** "<input type=datetime-local>" value for an instant, read as UTC. */
export const toLocalInput = (ms) => new Date(ms).toISOString().slice(0, 19);
export const fromLocalInput = (value) => (value ? Date.parse(`${value.length === 16 ? `${value}:00` : value}Z`) : undefined);

/** "45 s", "3 min 05 s", "2 h 07 min", "3 d 4 h". */
export function duration(ms) {
  if (ms < 0) ms = 0;
  const sec = Math.round(ms / 1000);
  if (sec < 60) return `${sec} s`;
  if (sec < 3600) return `${Math.floor(sec / 60)} min ${pad(sec % 60)} s`;
  if (sec < 86400) return `${Math.floor(sec / 3600)} h ${pad(Math.floor((sec % 3600) / 60))} min`;
  return `${Math.floor(sec / 86400)} d ${Math.floor((sec % 86400) / 3600)} h`;
}
