export interface Totals {
  passed: number;
  failed: number;
  skipped: number;
  skippedNames: string[];
  /** Each failed test as `name: its error's first line`. */
  failedNames: string[];
}
export declare function vitestTotals(report: unknown): Totals;
export declare function playwrightTotals(report: unknown): Totals;
export declare function closingLine(totals: Pick<Totals, 'passed' | 'failed' | 'skipped'>): string;
