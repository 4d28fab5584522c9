/** The parts of the Custom Elements Manifest (schema 2.1.0) the generator writes. */
export interface ManifestItem {
  name: string;
  description: string;
}
export interface ManifestAttribute extends ManifestItem {
  type: { text: string };
  fieldName?: string;
}
export interface ManifestDeclaration {
  kind: 'class';
  name: string;
  tagName: string;
  customElement: true;
  description: string;
  summary?: string;
  attributes: ManifestAttribute[];
  events?: Array<ManifestItem & { type: { text: string } }>;
  slots?: ManifestItem[];
  cssParts?: ManifestItem[];
  cssProperties?: ManifestItem[];
}
export interface CustomElementsManifest {
  schemaVersion: string;
  readme: string;
  modules: Array<{
    kind: 'javascript-module';
    path: string;
    declarations: ManifestDeclaration[];
    exports: Array<{
      kind: 'custom-element-definition';
      name: string;
      declaration: { name: string; module: string };
    }>;
  }>;
}

export function tagsOf(defineSource: string): Array<{ tagName: string; className: string }>;
export function parseDoc(lines: string[]): {
  description: string;
  tags: Array<{ tag: string; text: string }>;
};
export function litAttributes(source: string): ManifestAttribute[];
export function customElementsManifest(read: (name: string) => string): CustomElementsManifest;
