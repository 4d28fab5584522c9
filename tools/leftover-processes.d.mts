export declare const RUN_MARKER: 'CLEF_TEST_RUN';
export declare function canScanProcesses(): boolean;
export declare function processesMarked(runId: string): Array<{ pid: number; command: string }>;
