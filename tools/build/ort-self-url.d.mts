import type { Plugin } from 'vite';

export const ORT_SELF_URL: RegExp;
export function hideOrtSelfUrl(source: string): string;
export function ortSelfUrlPlugin(): Plugin;
