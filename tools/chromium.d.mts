export declare const CHROMIUM_PATH: string;
export declare const CHROMIUM_INSTALL_HINT: string;
export declare function chromiumAvailable(): boolean;
export declare const CHROMIUM_ARGS: string[];
