// Types of axis.js, for the tests that import it (the page itself needs no build step).
export function labelWidth(text: string, charWidth?: number): number;
export interface AxisLabels {
  now?: { x: number; anchor: 'start' | 'end'; from: number; to: number };
  ticks: Array<{ x: number; label: string; shown: boolean }>;
}
export function axisLabels(
  ticks: Array<{ x: number; label: string }>,
  nowX: number | undefined,
  width: number,
  options?: { gap?: number; charWidth?: number },
): AxisLabels;
