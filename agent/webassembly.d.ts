// TypeScript declares WebAssembly only in lib.dom, which this project leaves out (Node runs WebAssembly without a
// DOM): these are the parts the agent uses.
declare global {
  namespace WebAssembly {
    // An opaque compiled module (merged with esbuild's empty declaration of the same interface).
    interface Module {}
    interface Memory {
      readonly buffer: ArrayBuffer;
    }
    interface Instance {
      readonly exports: Record<string, unknown>;
    }
    const Instance: new (module: Module, imports: Record<string, Record<string, unknown>>) => Instance;
    function compile(bytes: Uint8Array): Promise<Module>;
  }
}

export {};
