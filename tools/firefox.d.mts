export declare const FIREFOX_PATH: string;
export declare const FIREFOX_INSTALL_HINT: string;
export declare function firefoxAvailable(): boolean;
export declare const FIREFOX_WEBGPU_PREFS: Readonly<Record<string, boolean>>;
export declare const WEBGPU_INSTALL_HINT: string;
